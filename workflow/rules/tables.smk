# Per-query evaluations of an experiment -> best-run table with paired t-tests against its baseline.


rule table:
    input:
        experiment_evaluations,
    output:
        multiext("results/tables/{experiment}/table", ".md", ".tex", ".html", ".csv"),
    log:
        "logs/tables/{experiment}.log",
    params:
        spec=experiment_table_spec,
        cells=experiment_table_cells,
        out_dir="results/tables/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid table --spec {params.spec:q} --cells {params.cells:q}"
        " --out-dir {params.out_dir:q} 2> {log:q}"
