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


# Query set X+list / X+pmi / X+segmenter: X with each query's phrases (irgrid.phrases), made once.
# PMI counts word pairs in the collection's documents; the phrase list is the user's file.
rule phrase_topics:
    input:
        unpack(phrase_topics_inputs),
    output:
        "results/{collection}/topics/{queryset}+{method}.parquet",
    wildcard_constraints:
        queryset="[^/+]+",
        method="list|pmi|segmenter",
    log:
        "logs/{collection}/topics/{queryset}+{method}.log",
    params:
        options=phrase_options,
        extra=phrase_topics_arguments,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid phrase-topics --topics {input.topics:q} --method {wildcards.method} --options {params.options:q}"
        " {params.extra} --out {output:q} 2> {log:q}"
