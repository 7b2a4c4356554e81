# Every experiment's tables, findings, per-query evidence and figures, the provenance of each cell
# and where the run's time went -> results/report.html (one self-contained file); a subset run's
# report is a file of its own, REPORT_PATH (common.smk), so it never replaces the whole run's.
# The manifest (irgrid.report.manifest) reaches the command on standard input, as the cells do; its
# digest is the tracked param (common.smk, untracked and digest_of).


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
        manifest=untracked(lambda wildcards: report_manifest_json()),
        manifest_digest=digest_of(lambda wildcards: report_manifest_json()),
    conda:
        "../envs/irgrid.yaml"
    shell:
        "irgrid report --manifest - --out {output:q} 2> {log:q} <<'IRGRID_MANIFEST'\n{params.manifest}\nIRGRID_MANIFEST"
