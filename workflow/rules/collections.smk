# Raw collection files -> normalised Parquet: document shards, topics per query set, qrels.


rule shard_documents:
    output:
        directory("results/{collection}/docs"),
    log:
        "logs/{collection}/docs.log",
    params:
        entry=collection_entry,
        num_shards=config["num_shards"],
    shell:
        "{IRGRID_CLI} shard --registry {REGISTRY:q} --collection {wildcards.collection} {MIRROR}"
        " --resources {config[resources]:q} --num-shards {params.num_shards} --out {output:q} 2> {log:q}"


rule topics:
    output:
        "results/{collection}/topics/{queryset}.parquet",
    log:
        "logs/{collection}/topics/{queryset}.log",
    params:
        entry=collection_entry,
    shell:
        "{IRGRID_CLI} topics --registry {REGISTRY:q} --collection {wildcards.collection} {MIRROR}"
        " --resources {config[resources]:q} --queryset {wildcards.queryset} --out {output:q} 2> {log:q}"


rule qrels:
    output:
        "results/{collection}/qrels.parquet",
    log:
        "logs/{collection}/qrels.log",
    params:
        entry=collection_entry,
    shell:
        "{IRGRID_CLI} qrels --registry {REGISTRY:q} --collection {wildcards.collection} {MIRROR}"
        " --resources {config[resources]:q} --out {output:q} 2> {log:q}"
