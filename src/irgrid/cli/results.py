"""Commands that turn evaluations into tables, figures, violation counts, findings and the report."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from .common import _json_argument, log


def cmd_table(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from ..tables import TableSpec, query_subsets, read_table_evaluations, summarise, write_tables

    spec = TableSpec(**json.loads(args.spec))
    cells = pd.DataFrame(_json_argument(args.cells))
    evaluations = read_table_evaluations(cells, spec.select_by, selection_values=spec.selection == "cv")
    summary = summarise(evaluations, spec, query_subsets(cells, spec.subsets))
    write_tables(summary, spec, args.out_dir, stem=args.stem)


def cmd_figures(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    from ..tables import TableSpec, chosen_means, read_table_evaluations

    # deferred: this command's own dependencies (see the module's docstring)
    from ..tables.figures import write_figures

    spec = TableSpec(**json.loads(args.spec))
    evaluations = read_table_evaluations(pd.DataFrame(_json_argument(args.cells)), spec.select_by,
                                         selection_values=spec.selection == "cv")
    summary = chosen_means(evaluations, spec, spec.select_by)
    write_figures(evaluations, summary, spec.select_by, list(spec.models), spec.model_labels, args.out_dir)


def cmd_parameter_figure(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    from ..tables import TableSpec, read_table_evaluations

    # deferred: this command's own dependencies (see the module's docstring)
    from ..tables.figures import plot_parameter

    spec = TableSpec(**json.loads(args.spec))
    evaluations = read_table_evaluations(pd.DataFrame(_json_argument(args.cells)), spec.select_by)
    stem = Path(args.out_dir) / f"parameter-{args.parameter}"
    plot_parameter(evaluations, spec.select_by, args.parameter, list(spec.models), spec.model_labels, stem,
                   baseline=spec.baseline)


def cmd_violations(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from ..axioms.experiment import analyse_best_runs, write_violations
    from ..tables import TableSpec

    spec = TableSpec(**json.loads(args.spec))
    started = time.perf_counter()
    per_doc = analyse_best_runs(pd.DataFrame(_json_argument(args.cells)), spec, json.loads(args.families), depth=args.depth,
                                common_run=args.common_run, run_depth=args.run_depth)
    write_violations(per_doc, args.out)
    log.info("counted violations in %d query-document pairs in %.1fs", len(per_doc), time.perf_counter() - started)


def cmd_violation_table(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from ..axioms.experiment import read_violations_per_document, run_violation_summary, violation_claims, write_violation_tables
    from ..tables import TableSpec, read_table_evaluations
    from ..tables.figures import plot_violations

    spec = TableSpec(**json.loads(args.spec))
    # each run's violations per document per query, the files read a batch of rows at a time
    violations = read_violations_per_document(args.violations)
    cells = pd.DataFrame(_json_argument(args.cells))
    evaluations = read_table_evaluations(cells, spec.select_by)
    analyzers = dict(zip(zip(cells["collection"], cells["queryset"]), cells["analyzer"])) if "analyzer" in cells else {}
    paper_models = json.loads(args.paper_models) if args.paper_models else None
    table, correlations = run_violation_summary(violations, evaluations, spec, paper_models=paper_models,
                                                analyzers=analyzers)
    claims = violation_claims(table, correlations, spec, fewest=args.fewest_violations, common_run=args.common_run)
    write_violation_tables(table, correlations, spec, args.table_dir, claims=claims, common_run=args.common_run)
    plot_violations(table, spec.select_by, spec.model_labels, Path(args.figure_dir) / "violations_vs_measure")


def cmd_findings(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from ..report.claims import Claim, PaperTest
    from ..report.evidence import query_texts, write_evidence
    from ..report.findings import evaluate_claims, write_findings
    from ..tables import TableSpec, chosen_points, query_subsets, read_table_evaluations

    spec = replace(TableSpec(**json.loads(args.spec)), selection=args.verdict_selection)
    claims = [Claim.from_dict(claim) for claim in json.loads(args.claims)]
    paper_test = json.loads(args.paper_test)
    paper_test = None if paper_test is None else PaperTest(**paper_test)
    cells = pd.DataFrame(_json_argument(args.cells))
    evaluations = read_table_evaluations(cells, spec.select_by, selection_values=spec.selection == "cv")
    rows = list(dict.fromkeys(zip(cells["collection"], cells["queryset"])))
    # The verdict's and the oracle's chosen points once: the claims and the per-query evidence share them.
    chosen = chosen_points(evaluations, spec) if not evaluations.empty else {}
    oracle = chosen if spec.selection == "best" else (
        chosen_points(evaluations, replace(spec, selection="best")) if not evaluations.empty else {})
    subset_names = sorted({claim.larger_on for claim in claims if claim.larger_on})
    subsets = query_subsets(cells, subset_names) if subset_names and "topics" in cells.columns else {}
    findings = evaluate_claims(evaluations, spec, claims, rows, chosen_by_row=chosen, paper_test=paper_test,
                               oracle_by_row=oracle, subsets=subsets)
    write_findings(findings, spec.title or spec.experiment, spec.alpha, args.table_dir)
    write_evidence(chosen, spec, query_texts(cells), args.table_dir, args.figure_dir)
    log.info("%d claims on %d rows: %s", len(claims), len(rows), findings["verdict"].value_counts().to_dict())


def cmd_report(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..report.html import write_report

    if args.plan is not None:  # the workflow's report job: the manifest is made here, not when planning
        # deferred: this command's own dependencies (see the module's docstring)
        from ..report.manifest import workflow_manifest

        plan = _json_argument(args.plan)
        manifest = workflow_manifest(plan["config"], source=plan["source"], raw_files=plan["raw_files"])
    else:
        manifest = _json_argument(args.manifest)
    write_report(manifest, args.out)
