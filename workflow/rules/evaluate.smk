# Per-query evaluation with ir-measures, chunk by chunk: one job evaluates the runs of one
# retrieval chunk (irgrid.config.retrieval_chunks), reading the qrels once, and writes each
# cell's own evaluation file. A chunk holding cells of an experiment with `tie_aware` also
# evaluates the tie-aware names it needs (Chunk.tie_measures: E[AP]..., from the runs' scores);
# the others' measures, and so their jobs, are those of the config alone.


for chunk in RETRIEVAL_CHUNKS:

    rule:
        name:
            chunk.rule_name("evaluate")
        input:
            runs=chunk.run_paths,
            qrels=f"results/{chunk.collection}/qrels.parquet",
            topics=f"results/{chunk.collection}/topics/{chunk.queryset}.parquet",
        output:
            chunk.eval_paths,
        log:
            chunk.log_path("eval"),
        benchmark:
            chunk_benchmark(chunk, "eval")
        params:
            measures=json.dumps([*IRGRID["measures"], *chunk.tie_measures]),
        conda:
            "../envs/irgrid.yaml"
        shell:
            "irgrid evaluate --run {input.runs:q} --qrels {input.qrels:q} --topics {input.topics:q}"
            " --measures {params.measures:q} --out {output:q} 2> {log:q}"


# A cell outside the config, asked for by its path (see rule retrieve).
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
