# Every experiment's tables, findings, per-query evidence and figures, the provenance of each cell
# and where the run's time went -> results/report.html (one self-contained file); a subset run's
# report is a file of its own, REPORT_PATH (common.smk), so it never replaces the whole run's.
# The job makes the manifest (irgrid.report.manifest, every cell) from the run's config, which reaches
# it on standard input; the tracked param is a digest of what the manifest is made from (common.smk).


rule report:
    input:
        all_report_inputs,
    output:
        report(REPORT_PATH, caption="../report/report.rst", category="report"),
    log:
        f"logs/{REPORT_NAME}.log",
    benchmark:
        f"results/benchmarks/{REPORT_NAME}.tsv"
    params:
        plan=report_plan,
        manifest_digest=report_manifest_digest,
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid report --plan - --out {output:q} 2> {log:q} <<'IRGRID_PLAN'\n{params.plan}\nIRGRID_PLAN"
