# Per-query evaluations of an experiment -> tables (best run: table.*, cross-validated: table_cv.*)
# with paired tests against its baseline, and its figures.


# The cells reach the command on standard input (a here-document in the job's script): an
# experiment's cells outgrow the 128 KiB one command-line argument may hold.

rule table:
    input:
        experiment_table_inputs,
    output:
        report("results/tables/{experiment}/{table}.html", caption="../report/table.rst",
               category="{experiment}", subcategory="tables"),
        multiext("results/tables/{experiment}/{table}", ".md", ".tex", ".csv"),
    log:
        "logs/tables/{experiment}/{table}.log",
    benchmark:
        "results/benchmarks/tables/{experiment}/{table}.tsv"
    params:
        spec=experiment_table_spec,
        cells=untracked(experiment_table_cells),
        cells_digest=digest_of(experiment_table_cells),
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
        report("results/figures/{experiment}/by_method.svg", caption="../report/by_method.rst",
               category="{experiment}", subcategory="figures"),
        report("results/figures/{experiment}/sensitivity.svg", caption="../report/sensitivity.rst",
               category="{experiment}", subcategory="figures"),
        "results/figures/{experiment}/by_method.png",
        "results/figures/{experiment}/sensitivity.png",
    log:
        "logs/figures/{experiment}.log",
    benchmark:
        "results/benchmarks/figures/{experiment}.tsv"
    params:
        spec=experiment_table_spec,
        cells=untracked(experiment_table_cells),
        cells_digest=digest_of(experiment_table_cells),
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
        report("results/figures/{experiment}/parameter-{parameter}.svg", caption="../report/parameter.rst",
               category="{experiment}", subcategory="figures"),
        "results/figures/{experiment}/parameter-{parameter}.png",
    log:
        "logs/figures/{experiment}-parameter-{parameter}.log",
    benchmark:
        "results/benchmarks/figures/{experiment}-parameter-{parameter}.tsv"
    params:
        spec=experiment_table_spec,
        cells=untracked(experiment_table_cells),
        cells_digest=digest_of(experiment_table_cells),
        out_dir="results/figures/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid parameter-figure --spec {params.spec:q} --cells - --parameter {wildcards.parameter:q}"
        " --out-dir {params.out_dir:q} 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"


# The experiment's claims checked on every row (findings.*), and the per-query evidence of every
# model against the baseline (per_query.*: largest gains and losses with the queries' text; the
# sorted per-query difference figure).
rule findings:
    input:
        findings_inputs,
    output:
        report("results/tables/{experiment}/findings.html", caption="../report/findings.rst",
               category="{experiment}", subcategory="findings"),
        multiext("results/tables/{experiment}/findings", ".md", ".csv"),
        report("results/tables/{experiment}/per_query.html", caption="../report/per_query_table.rst",
               category="{experiment}", subcategory="per-query evidence"),
        "results/tables/{experiment}/per_query.csv",
        report("results/figures/{experiment}/per_query.svg", caption="../report/per_query.rst",
               category="{experiment}", subcategory="per-query evidence"),
        "results/figures/{experiment}/per_query.png",
    log:
        "logs/tables/{experiment}/findings.log",
    benchmark:
        "results/benchmarks/tables/{experiment}/findings.tsv"
    params:
        spec=experiment_table_spec,
        claims=lambda wildcards: json.dumps(IRGRID["_experiments"][wildcards.experiment]["claims"]),
        verdict_selection=lambda wildcards: IRGRID["_experiments"][wildcards.experiment]["verdict_selection"],
        paper_test=lambda wildcards: json.dumps(IRGRID["_experiments"][wildcards.experiment]["paper_test"]),
        cells=untracked(experiment_table_cells),
        cells_digest=digest_of(experiment_table_cells),
        table_dir="results/tables/{experiment}",
        figure_dir="results/figures/{experiment}",
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid findings --spec {params.spec:q} --claims {params.claims:q}"
        " --verdict-selection {params.verdict_selection} --paper-test {params.paper_test:q}"
        " --cells - --table-dir {params.table_dir:q} --figure-dir {params.figure_dir:q}"
        " 2> {log:q} <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"
