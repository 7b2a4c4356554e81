# The grid cells of every experiment, retrieved and evaluated chunk by chunk; only evaluations are kept.
#
# One wildcard rule makes every chunk (irgrid.config.retrieval_chunks): up to retrieval.chunk_size
# cells of any models on one collection, analyzer and query set, scored and evaluated in one process
# (one postings read per family, one qrels load). Its output is one file, the chunk's evaluations
# (chunk label in the path); its cells are a param looked up from the label, so a chunk reruns when
# its file is missing or its cells, depth or measures change, and no other chunk does. Runs are not
# kept: the one-cell rule `retrieve` below makes any cell's run on demand, the same bytes.
rule chunk:
    input:
        unpack(chunk_inputs),
    output:
        "results/{collection}/eval/{analyzer}/{queryset}/chunk-{label}.parquet",
    log:
        "logs/{collection}/eval/{analyzer}/{queryset}/chunk-{label}.log",
    benchmark:
        "results/benchmarks/{collection}/eval/{analyzer}/{queryset}/chunk-{label}.tsv"
    params:
        cells=lambda wildcards: chunk_of(wildcards).cells_json,
        measures=lambda wildcards: json.dumps([*IRGRID["measures"], *chunk_of(wildcards).tie_measures]),
        depth=config["retrieval"]["depth"],
        parses=lambda wildcards: parses_argument(wildcards.collection, chunk_of(wildcards).families[0]),
    threads: 1  # more with --set-threads: the fused kernels split the query set across threads
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid chunk --index {input.index:q} --topics {input.topics:q} --qrels {input.qrels:q} {params.parses}"
        " --measures {params.measures:q} --depth {params.depth} --threads {threads} --cells -"
        " --out {output:q} 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"


# Any cell's run (of the config, or a model of the config at any other point), asked for by its path:
# one job of its own, the run the cell's chunk scored (runs are deterministic; tests/test_chunk_job.py).
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
