# Axiomatic constraint violations (C1-C4) in the best run of each model (scored again in the job:
# runs are not kept), and in the common benchmark run (axiom_common_run), per collection; then the violation table, the paper's claims
# about the violations and the violations-against-effectiveness figure of the experiment.


# The cells reach the command on standard input (a here-document in the job's script): an
# experiment's cells outgrow the 128 KiB one command-line argument may hold.

rule violations:
    input:
        experiment_collection_inputs,
    output:
        "results/axioms/{experiment}/{collection}.parquet",
    log:
        "logs/axioms/{experiment}/{collection}.log",
    benchmark:
        "results/benchmarks/axioms/{experiment}/{collection}.tsv"
    params:
        spec=experiment_selection_spec,
        cells=untracked(experiment_collection_cells),
        cells_digest=digest_of(experiment_collection_cells),
        families=experiment_families,
        depth=lambda wildcards: IRGRID["_experiments"][wildcards.experiment]["axiom_depth"],
        run_depth=config["retrieval"]["depth"],
        common_run=lambda wildcards: IRGRID["_experiments"][wildcards.experiment]["axiom_common_run"],
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid violations --spec {params.spec:q} --cells - --families {params.families:q}"
        " --depth {params.depth} --run-depth {params.run_depth} --common-run {params.common_run:q} --out {output:q} 2> {log:q}"
        " <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"


rule violation_table:
    input:
        violations=experiment_violation_files,
        evaluations=experiment_evaluations,
    output:
        report("results/tables/{experiment}/violations.html", caption="../report/violations.rst",
               category="{experiment}", subcategory="tables"),
        multiext("results/tables/{experiment}/violations", ".md", ".tex", ".csv"),
        "results/tables/{experiment}/violations_claims.csv",
        report("results/figures/{experiment}/violations_vs_measure.svg", caption="../report/violations.rst",
               category="{experiment}", subcategory="figures"),
        "results/figures/{experiment}/violations_vs_measure.png",
    log:
        "logs/tables/{experiment}/violations.log",
    benchmark:
        "results/benchmarks/tables/{experiment}/violations.tsv"
    params:
        spec=experiment_table_spec,
        cells=untracked(experiment_table_cells),
        cells_digest=digest_of(experiment_table_cells),
        table_dir="results/tables/{experiment}",
        figure_dir="results/figures/{experiment}",
        axiom_options=experiment_axiom_options,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid violation-table --spec {params.spec:q} --cells - --violations {input.violations:q}"
        " {params.axiom_options} --table-dir {params.table_dir:q} --figure-dir {params.figure_dir:q} 2> {log:q}"
        " <<'IRGRID_CELLS'\n{params.cells}\nIRGRID_CELLS"
