# Raw collection files -> normalised Parquet: document shards, topics per query set, qrels.
# Each step's one tracked param is its provenance (the registry fields it reads, the sha256 of the raw
# files it reads); where the files are read from is a derived param, no rerun trigger.


rule shard_documents:
    output:
        directory("results/{collection}/docs"),
    log:
        "logs/{collection}/docs.log",
    benchmark:
        "results/benchmarks/{collection}/docs.tsv"
    params:
        provenance=collection_provenance("docs"),
        source=collection_sources,
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
    benchmark:
        "results/benchmarks/{collection}/topics/{queryset}.tsv"
    params:
        provenance=collection_provenance("topics"),
        source=collection_sources,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid topics {params.source} --collection {wildcards.collection} "
        "--queryset {wildcards.queryset} --out {output:q} 2> {log:q}"


# The judged documents are checked against the shards: a few unknown are logged, most unknown is an error
# (qrels of another collection).
rule qrels:
    input:
        docs="results/{collection}/docs",
    output:
        "results/{collection}/qrels.parquet",
    log:
        "logs/{collection}/qrels.log",
    benchmark:
        "results/benchmarks/{collection}/qrels.tsv"
    params:
        provenance=collection_provenance("qrels"),
        source=collection_sources,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid qrels {params.source} --collection {wildcards.collection} "
        "--docs {input.docs:q} --out {output:q} 2> {log:q}"


# Query set X+minNwords: the queries of X with N or more words (irgrid.querysets). The derived query
# sets below are made from X or from X+minNwords (FILTERED_QUERYSET_WILDCARD: title+min3words+parser).
rule min_words_topics:
    input:
        "results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/topics/{queryset}+min{min_words}words.parquet",
    wildcard_constraints:
        queryset="[^/+]+",
        min_words="[1-9][0-9]*",
    log:
        "logs/{collection}/topics/{queryset}+min{min_words}words.log",
    benchmark:
        "results/benchmarks/{collection}/topics/{queryset}+min{min_words}words.tsv"
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid min-words-topics --topics {input:q} --min-words {wildcards.min_words}"
        " --queryset {wildcards.queryset}+min{wildcards.min_words}words --out {output:q} 2> {log:q}"


# Query set X+parser: X with each query's phrases and dependency parse (irgrid.parsing), made once.
rule parse_topics:
    input:
        "results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/topics/{queryset}+parser.parquet",
    wildcard_constraints:
        queryset=FILTERED_QUERYSET_WILDCARD,
    log:
        "logs/{collection}/topics/{queryset}+parser.log",
    benchmark:
        "results/benchmarks/{collection}/topics/{queryset}+parser.tsv"
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
        queryset=FILTERED_QUERYSET_WILDCARD,
        method="list|pmi|segmenter",
    log:
        "logs/{collection}/topics/{queryset}+{method}.log",
    benchmark:
        "results/benchmarks/{collection}/topics/{queryset}+{method}.tsv"
    params:
        options=phrase_options,
        extra=phrase_topics_arguments,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid phrase-topics --topics {input.topics:q} --method {wildcards.method} --options {params.options:q}"
        " {params.extra} --out {output:q} 2> {log:q}"


# Query sets X+judged and X+alljudged: X with each query's judged documents, which its runs re-rank
# instead of ranking the collection (answer-sentence selection; irgrid.sentences.protocol); X+judged
# keeps the questions with a relevant candidate, X+alljudged every one.
rule judged_topics:
    input:
        topics="results/{collection}/topics/{queryset}.parquet",
        qrels="results/{collection}/qrels.parquet",
    output:
        "results/{collection}/topics/{queryset}+{judged}.parquet",
    wildcard_constraints:
        queryset=FILTERED_QUERYSET_WILDCARD,
        judged="judged|alljudged",
    log:
        "logs/{collection}/topics/{queryset}+{judged}.log",
    benchmark:
        "results/benchmarks/{collection}/topics/{queryset}+{judged}.tsv"
    params:
        questions=lambda wildcards: "positive" if wildcards.judged == "judged" else "all",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid judged-topics --topics {input.topics:q} --qrels {input.qrels:q} --questions {params.questions}"
        " --out {output:q} 2> {log:q}"


# A dependency parse of every document of a sentence collection: the one the data carries
# (TrecQA), else spaCy's (irgrid.sentences.parsing), shard by shard, made once per collection.
rule parse_sentences:
    input:
        "results/{collection}/docs",
    output:
        directory("results/{collection}/parses"),
    log:
        "logs/{collection}/parses.log",
    benchmark:
        "results/benchmarks/{collection}/parses.tsv"
    params:
        provenance=collection_provenance("sentence_parses"),
        source=collection_sources,
        pipeline=config["parser"],
    threads: 2
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid parse-sentences {params.source} --collection {wildcards.collection} --docs {input:q}"
        " --pipeline {params.pipeline:q} --workers {threads} --out {output:q} 2> {log:q}"
