# One grid cell: a model at one parameter point (encoded in the path) on one query set.


rule retrieve:
    input:
        index="results/{collection}/index/{analyzer}",
        topics="results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
    log:
        "logs/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.log",
    params:
        family=family_of_model,
        depth=config["retrieval"]["depth"],
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid retrieve --index {input.index:q} --topics {input.topics:q}"
        " --family {params.family} --params {wildcards.params} --depth {params.depth}"
        " --out {output:q} 2> {log:q}"


rule trec_run:
    input:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
    output:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.trec",
    log:
        "logs/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.trec.log",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid export-trec --run {input:q} --tag {wildcards.model}"
        " --out {output:q} 2> {log:q}"
