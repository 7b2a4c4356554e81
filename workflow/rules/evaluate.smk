# Per-query evaluation of one run with ir-measures.


rule evaluate:
    input:
        run="results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
        qrels="results/{collection}/qrels.parquet",
        topics="results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/eval/{analyzer}/{queryset}/{model}/{params}.parquet",
    log:
        "logs/{collection}/eval/{analyzer}/{queryset}/{model}/{params}.log",
    params:
        measures=json.dumps(IRGRID["measures"]),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid evaluate --run {input.run:q} --qrels {input.qrels:q} --topics {input.topics:q}"
        " --measures {params.measures:q} --out {output:q} 2> {log:q}"
