# Document shards -> partitioned Parquet inverted index (positions kept), built with Dask; the
# forward index beside it, made from it only where a rule reads it (violations): the postings
# index's command and params never depend on the configured experiments.
from irgrid.index.build import local_build_cores


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
        # where the build runs (irgrid.jobs.placement): taking `output` keeps it out of the rerun
        # trigger, since the index's bytes do not depend on it
        placement=lambda wildcards, output: INDEX_PLACEMENT.arguments(),
    # a small collection is indexed on threads, one busy core (irgrid.index.build.local_build_cores)
    threads: lambda wildcards, input: INDEX_PLACEMENT.threads(local_build_cores(input.docs, 2))
    resources:
        # with a Dask cluster doing the work the job only drives it: 1 core, 1 GB
        mem_mb=INDEX_PLACEMENT.mem_mb(),
        runtime=INDEX_PLACEMENT.runtime_minutes(),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid index --docs {input.docs:q} --analyzer {params.analyzer:q}"
        " {params.num_buckets} {params.placement} --workers {threads}"
        " --out {output:q} 2> {log:q}"


rule build_forward_index:
    input:
        index="results/{collection}/index/{analyzer}",
    output:
        directory("results/{collection}/forward/{analyzer}"),
    log:
        "logs/{collection}/forward/{analyzer}.log",
    benchmark:
        "results/benchmarks/{collection}/forward/{analyzer}.tsv"
    params:
        format_version=INDEX_FORMAT_VERSION,
    threads: 1
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid forward-index --index {input.index:q} --workers {threads} --out {output:q} 2> {log:q}"
