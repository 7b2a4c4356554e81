# Per-query evaluations of an experiment -> tables (best run: table.*, cross-validated: table_cv.*)
# with paired tests against its baseline, and its figures.


# The cells reach the command on standard input (a here-document in the job's script): an
# experiment's cells outgrow the 128 KiB one command-line argument may hold.

rule table:
    input:
        experiment_table_inputs,
    output:
        multiext("results/tables/{experiment}/{table}", ".md", ".tex", ".html", ".csv"),
    log:
        "logs/tables/{experiment}/{table}.log",
    params:
        spec=experiment_table_spec,
        cells=experiment_table_cells,
        out_dir="results/tables/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid table --spec {params.spec:q} --cells -"
        " --out-dir {params.out_dir:q} --stem {wildcards.table} 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"


rule figures:
    input:
        experiment_evaluations,
    output:
        multiext("results/figures/{experiment}/by_method", ".svg", ".png"),
        multiext("results/figures/{experiment}/sensitivity", ".svg", ".png"),
    log:
        "logs/figures/{experiment}.log",
    params:
        spec=experiment_table_spec,
        cells=experiment_table_cells,
        out_dir="results/figures/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid figures --spec {params.spec:q} --cells -"
        " --out-dir {params.out_dir:q} 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"


# One parameter's profile (e.g. the window size N), an experiment's parameter_figures.
rule parameter_figure:
    input:
        experiment_evaluations,
    output:
        multiext("results/figures/{experiment}/parameter-{parameter}", ".svg", ".png"),
    log:
        "logs/figures/{experiment}-parameter-{parameter}.log",
    params:
        spec=experiment_table_spec,
        cells=experiment_table_cells,
        out_dir="results/figures/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid parameter-figure --spec {params.spec:q} --cells - --parameter {wildcards.parameter:q}"
        " --out-dir {params.out_dir:q} 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"
