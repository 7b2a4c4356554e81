# Document shards -> partitioned Parquet inverted index (positions kept), built with Dask.


rule build_index:
    input:
        docs="results/{collection}/docs",
    output:
        directory("results/{collection}/index/{analyzer}"),
    log:
        "logs/{collection}/index/{analyzer}.log",
    benchmark:
        "results/benchmarks/{collection}/index/{analyzer}.tsv"
    params:
        analyzer=analyzer_json,
        num_buckets=f"--num-buckets {config['index']['num_buckets']}" if config["index"]["num_buckets"] else "",
        # an index of an older format is refused by the reader: a new format rebuilds it
        format_version=INDEX_FORMAT_VERSION,
        scheduler=f"--scheduler {config['dask']['scheduler']}" if config["dask"]["scheduler"] else "",
    threads: 2
    resources:
        mem_mb=2000,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid index --docs {input.docs:q} --analyzer {params.analyzer:q}"
        " {params.num_buckets} {params.scheduler} --workers {threads}"
        " --out {output:q} 2> {log:q}"
