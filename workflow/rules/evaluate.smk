# Per-query evaluation of one cell's run, asked for by its path. The config's cells are evaluated by
# their chunk's job (rule chunk, retrieve.smk), which keeps them in the chunk's evaluation file.


rule evaluate:
    input:
        run="results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
        qrels="results/{collection}/qrels.parquet",
        topics="results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/eval/{analyzer}/{queryset}/{model}/{params}.parquet",
    log:
        "logs/{collection}/eval/{analyzer}/{queryset}/{model}/{params}.log",
    benchmark:
        "results/benchmarks/{collection}/eval/{analyzer}/{queryset}/{model}/{params}.tsv"
    params:
        measures=json.dumps(IRGRID["measures"]),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid evaluate --run {input.run:q} --qrels {input.qrels:q} --topics {input.topics:q}"
        " --measures {params.measures:q} --out {output:q} 2> {log:q}"
