# irgrid: reproduce the tables of IR papers. Stages live in workflow/rules/, logic in src/irgrid/.
from snakemake.utils import min_version

# 9.1.5: params computed from `output` are not rerun triggers (where raw files are read from; common.smk)
min_version("9.1.5")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/collections.smk"
include: "workflow/rules/index.smk"
include: "workflow/rules/retrieve.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/axioms.smk"
include: "workflow/rules/report.smk"


# The run's warnings (its jobs' and the config's), each once, at its end (irgrid.jobs.job_warnings).
onsuccess:
    from irgrid.jobs.job_warnings import report_run_warnings

    report_run_warnings(log, run_warnings(IRGRID))


# A failed run ends with its warnings, then one line: the first failed job, its cause and its log
# (irgrid.jobs.failures).
onerror:
    from irgrid.jobs.failures import report_first_failure
    from irgrid.jobs.job_warnings import report_run_warnings

    report_run_warnings(log, run_warnings(IRGRID))
    report_first_failure(log)


rule all:
    input:
        get_final_output(),
    default_target: True
