# All experiments' tables, findings, per-query evidence and provenance -> results/report.html.


rule report:
    input:
        all_report_inputs,
    output:
        "results/report.html",
    log:
        "logs/report.log",
    params:
        experiments=json.dumps({name: experiment_outputs(name) for name in IRGRID["_experiments"]}, sort_keys=True),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid report --experiments {params.experiments:q} --out {output:q} 2> {log:q}"
