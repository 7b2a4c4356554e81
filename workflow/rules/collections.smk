# Raw collection files -> normalised Parquet: document shards, topics per query set, qrels.


rule shard_documents:
    output:
        directory("results/{collection}/docs"),
    log:
        "logs/{collection}/docs.log",
    params:
        entry=collection_entry,
        source=collection_source_args(),
        num_shards=config["num_shards"],
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid shard {params.source} --collection {wildcards.collection} "
        "--num-shards {params.num_shards} --out {output:q} 2> {log:q}"


rule topics:
    output:
        "results/{collection}/topics/{queryset}.parquet",
    wildcard_constraints:
        queryset="[^/+]+",
    log:
        "logs/{collection}/topics/{queryset}.log",
    params:
        entry=collection_entry,
        source=collection_source_args(),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid topics {params.source} --collection {wildcards.collection} "
        "--queryset {wildcards.queryset} --out {output:q} 2> {log:q}"


rule qrels:
    output:
        "results/{collection}/qrels.parquet",
    log:
        "logs/{collection}/qrels.log",
    params:
        entry=collection_entry,
        source=collection_source_args(),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid qrels {params.source} --collection {wildcards.collection} "
        "--out {output:q} 2> {log:q}"


# Query set X+parser: X with each query's phrases and dependency parse (irgrid.parsing), made once.
rule parse_topics:
    input:
        "results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/topics/{queryset}+parser.parquet",
    wildcard_constraints:
        queryset="[^/+]+",
    log:
        "logs/{collection}/topics/{queryset}+parser.log",
    params:
        pipeline=config["parser"],
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid parse-topics --topics {input:q} --pipeline {params.pipeline:q} --out {output:q} 2> {log:q}"
