# Every experiment's tables, findings, per-query evidence and figures, the provenance of each cell
# and where the run's time went -> results/report.html (one self-contained file).
# The manifest (irgrid.report.manifest) reaches the command on standard input, as the cells do.


rule report:
    input:
        all_report_inputs,
    output:
        report("results/report.html", caption="../report/report.rst", category="report"),
    log:
        "logs/report.log",
    benchmark:
        "results/benchmarks/report.tsv"
    params:
        manifest=lambda wildcards: report_manifest_json(),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid report --manifest - --out {output:q} 2> {log:q} <<'IRGRID_MANIFEST'\n{params.manifest}\nIRGRID_MANIFEST"
