# All experiments' tables -> results/report.html.


rule report:
    input:
        expand("results/tables/{experiment}/table.html", experiment=list(IRGRID["_experiments"])),
    output:
        "results/report.html",
    log:
        "logs/report.log",
    params:
        experiments=json.dumps(experiment_tables(), sort_keys=True),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid report --experiments {params.experiments:q} --out {output:q} 2> {log:q}"
