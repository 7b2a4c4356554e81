# irgrid: reproduce the tables of IR papers. Stages live in workflow/rules/, logic in src/irgrid/.
from snakemake.utils import min_version

min_version("8.20")


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


rule all:
    input:
        get_final_output(),
    default_target: True
