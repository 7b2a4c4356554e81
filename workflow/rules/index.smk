# Document shards -> partitioned Parquet inverted index (positions kept), built with Dask.


rule build_index:
    input:
        docs="results/{collection}/docs",
    output:
        directory("results/{collection}/index/{analyzer}"),
    log:
        "logs/{collection}/index/{analyzer}.log",
    params:
        analyzer=analyzer_json,
        num_buckets=config["index"]["num_buckets"],
        scheduler=f"--scheduler {config['dask']['scheduler']}" if config["dask"]["scheduler"] else "",
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid index --docs {input.docs:q} --analyzer {params.analyzer:q}"
        " --num-buckets {params.num_buckets} {params.scheduler} --workers {threads}"
        " --out {output:q} 2> {log:q}"
