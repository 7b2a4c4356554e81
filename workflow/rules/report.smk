# All experiments' tables -> results/report.html.


rule report:
    input:
        report_inputs,
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
