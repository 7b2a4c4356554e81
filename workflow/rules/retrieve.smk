# Runs: the grid cells of every experiment, retrieved chunk by chunk.
#
# One rule per chunk (irgrid.config.retrieval_chunks): up to retrieval.chunk_size cells of any
# models on one collection, analyzer and query set, scored in one process (one postings read per
# family). Its outputs are the cells' own run files, listed explicitly, and its models' families
# and points are params, so a chunk reruns when one of its files is missing or its cells change,
# and no other chunk does.


# A chunk of parse-tree models (mrf_sentence) also reads the collection's sentence parses. It is a
# rule of its own form rather than an option of every command: a rule's command is looked up when
# its job runs (not per loop iteration), and a changed command would rerun every other chunk.
for chunk in RETRIEVAL_CHUNKS:

    if not chunk.uses_parses:

        rule:
            name:
                chunk.rule_name("retrieve")
            input:
                index=f"results/{chunk.collection}/index/{chunk.analyzer}",
                topics=f"results/{chunk.collection}/topics/{chunk.queryset}.parquet",
            output:
                chunk.run_paths,
            log:
                chunk.log_path("runs"),
            benchmark:
                chunk_benchmark(chunk, "runs")
            params:
                families=chunk.families,
                points=chunk.params,
                depth=config["retrieval"]["depth"],
            threads: 1  # more with --set-threads: the fused kernels split the query set across threads
            conda:
                "../envs/irgrid.yaml"
            shell:
                "irgrid retrieve --index {input.index:q} --topics {input.topics:q}"
                " --family {params.families:q} --params {params.points:q} --depth {params.depth}"
                " --threads {threads} --out {output:q} 2> {log:q}"

    else:

        rule:
            name:
                chunk.rule_name("retrieve")
            input:
                index=f"results/{chunk.collection}/index/{chunk.analyzer}",
                topics=f"results/{chunk.collection}/topics/{chunk.queryset}.parquet",
                parses=parses_path(chunk.collection, chunk.families[0]),
            output:
                chunk.run_paths,
            log:
                chunk.log_path("runs"),
            benchmark:
                chunk_benchmark(chunk, "runs")
            params:
                families=chunk.families,
                points=chunk.params,
                depth=config["retrieval"]["depth"],
            threads: 1
            conda:
                "../envs/irgrid.yaml"
            shell:
                "irgrid retrieve --index {input.index:q} --topics {input.topics:q} --parses {input.parses:q}"
                " --family {params.families:q} --params {params.points:q} --depth {params.depth}"
                " --threads {threads} --out {output:q} 2> {log:q}"


# A cell outside the config (a model of the config at any point, asked for by its path) is one job
# of its own. A cell of the config always comes from its chunk: Snakemake prefers a rule without
# wildcards when two can make a file.
rule retrieve:
    input:
        unpack(cell_inputs),
    output:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
    log:
        "logs/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.log",
    benchmark:
        "results/benchmarks/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.tsv"
    params:
        family=family_of_model,
        depth=config["retrieval"]["depth"],
        parses=lambda wildcards: parses_argument(wildcards.collection, family_of_model(wildcards)),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid retrieve --index {input.index:q} --topics {input.topics:q}"
        " --family {params.family} --params {wildcards.params} --depth {params.depth}"
        " {params.parses} --out {output:q} 2> {log:q}"


rule trec_run:
    input:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.parquet",
    output:
        "results/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.trec",
    log:
        "logs/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.trec.log",
    benchmark:
        "results/benchmarks/{collection}/runs/{analyzer}/{queryset}/{model}/{params}.trec.tsv"
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid export-trec --run {input:q} --tag {wildcards.model}"
        " --out {output:q} 2> {log:q}"


# Each query's phrases, their statistics and weights under a phrase model (the why of its scores).
rule phrase_weights:
    input:
        index="results/{collection}/index/{analyzer}",
        topics="results/{collection}/topics/{queryset}.parquet",
    output:
        "results/{collection}/phrases/{analyzer}/{queryset}/{model}.tsv",
    log:
        "logs/{collection}/phrases/{analyzer}/{queryset}/{model}.log",
    benchmark:
        "results/benchmarks/{collection}/phrases/{analyzer}/{queryset}/{model}.tsv"
    params:
        family=family_of_model,
        points=phrase_weight_points,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid phrase-weights --index {input.index:q} --topics {input.topics:q} --family {params.family}"
        " --params {params.points:q} --out {output:q} 2> {log:q}"
