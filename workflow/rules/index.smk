# Document shards -> partitioned Parquet inverted index (positions kept), built with Dask.
from irgrid.index.build import forward_index_needed, local_build_cores


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
        # the forward index only for the indexes whose axiom violations an experiment counts (a third
        # of the index); from IRGRID_ALL, so that a subset run builds the index a full run builds
        forward=lambda wildcards: "" if forward_index_needed(IRGRID_ALL, wildcards.collection, wildcards.analyzer)
        else "--no-forward",
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
        " {params.num_buckets} {params.forward} {params.placement} --workers {threads}"
        " --out {output:q} 2> {log:q}"
