"""`irgrid ...`: every workflow step as a command, for Snakemake rules and for use without Snakemake.

Each subcommand calls one package function; structured parameters arrive as JSON
strings so a rule can pass its ``params:`` through unchanged.

Each command imports what it uses inside its own function: a job pays for its command's
dependencies only (a shard or topics job never loads numba, Dask, matplotlib or ir_measures).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from .errors import ConfigError, InputFormatError
from .grid import decode_point

log = logging.getLogger("irgrid")


def _json_argument(value: str):
    """A JSON argument given inline, or ``-`` for standard input: an experiment's cells outgrow the
    128 KiB a single command-line argument may hold, so the rules pass them through a here-document."""
    return json.loads(sys.stdin.read() if value == "-" else value)


def _collection(args):
    # deferred: this command's own dependencies (see the module's docstring)
    from .collections import load_registry, resolve_files

    registry = load_registry(args.registry)
    if args.collection not in registry:
        raise ConfigError(f"{args.registry}: no collection {args.collection!r}; it has {sorted(registry)}")
    spec = registry[args.collection]
    files = resolve_files(spec, mirror=args.mirror, resources_dir=args.resources)
    return spec, files


def cmd_shard(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .collections import write_document_shards

    spec, files = _collection(args)
    write_document_shards(spec, files, args.out, args.num_shards)


def cmd_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .collections import write_topics

    spec, files = _collection(args)
    write_topics(spec, files, args.queryset, args.out)


def cmd_parse_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .parsing import write_parsed_topics

    parsed = write_parsed_topics(args.topics, args.out, args.pipeline)
    log.info("parsed %d queries with %s: %d phrases", len(parsed), args.pipeline,
             sum(len(phrases) for phrases in parsed["phrases"]))


def cmd_phrase_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .phrases import iter_document_texts, write_phrase_topics

    options = json.loads(args.options)
    documents = iter_document_texts(args.docs) if args.docs else None
    table = write_phrase_topics(args.topics, args.out, args.method, phrase_list=args.phrase_list, documents=documents,
                                pmi_threshold=options.get("pmi_threshold", 3.0), min_count=options.get("min_count", 3),
                                convert=options.get("convert", "t2s"))
    log.info("%s: %d queries, %d phrases", args.method, len(table), sum(len(p) for p in table["phrases"]))


def cmd_qrels(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .collections import write_qrels
    from .collections.writers import read_docnos

    spec, files = _collection(args)
    write_qrels(spec, files, args.out, known_docnos=read_docnos(args.docs) if args.docs else None)


def cmd_forward_index(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .index.forward import build_forward_index

    started = time.perf_counter()
    stats = build_forward_index(args.index, args.out, workers=args.workers)
    log.info("forward index of %d documents (%d terms) in %.1fs", stats["num_docs"], stats["total_length"],
             time.perf_counter() - started)


def cmd_index(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .analysis import Analyzer
    from .index import build_index

    analyzer = Analyzer.from_dict(json.loads(args.analyzer))
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        scheduler = args.scheduler
        if args.dask_cluster:  # a dask-jobqueue cluster for this build only (irgrid.jobs.dask_cluster)
            # deferred: this command's own dependencies (see the module's docstring)
            from .jobs.dask_cluster import jobqueue_client

            scheduler = stack.enter_context(jobqueue_client(json.loads(args.dask_cluster)))
        stats = build_index(args.docs, args.out, analyzer, num_buckets=args.num_buckets, scheduler=scheduler,
                            num_workers=args.workers)
    elapsed = time.perf_counter() - started
    log.info(
        "indexed %d documents (%d terms, %d distinct) in %.1fs: %.0f docs/s",
        stats["num_docs"], stats["total_length"], stats["num_terms"], elapsed, stats["num_docs"] / max(elapsed, 1e-9),
    )


def cmd_retrieve(args) -> None:
    # Timed from here: the phases logged below are what the job spends after Python and the CLI
    # have started (benchmarks/snakemake_grid.py adds them up across a workflow's jobs).
    started = time.perf_counter()
    # deferred: this command's own dependencies (see the module's docstring)
    import pyarrow as pa

    # deferred: this command's own dependencies (see the module's docstring)
    from .index import IndexReader
    from .retrieve import retrieve_grid
    from .runs import read_topics, source_qids, write_run, write_trec_run

    if len(args.params) != len(args.out):
        raise SystemExit(f"irgrid retrieve: {len(args.params)} --params but {len(args.out)} --out: give one --out per --params")
    families = args.family * len(args.params) if len(args.family) == 1 else args.family
    if len(families) != len(args.params):
        raise SystemExit(f"irgrid retrieve: {len(args.family)} --family for {len(args.params)} --params: "
                         "give one family for all points or one per point")
    points = [decode_point(encoded) for encoded in args.params]
    # A chunk of the workflow mixes models: each family's points are scored in one pass of its own
    # (one postings read per family) over the index and topics opened once.
    positions_of: dict[str, list[int]] = {}
    for position, family in enumerate(families):
        positions_of.setdefault(family, []).append(position)
    imported = time.perf_counter()
    index = IndexReader(args.index)
    topics = read_topics(args.topics)
    # deferred: this command's own dependencies (see the module's docstring)
    from .report.provenance import run_provenance, write_run_with_provenance

    # read once (it hashes the topics file): only the family differs between the chunk's runs
    made_by = run_provenance(args.index, args.topics, families[0], "", args.depth)
    writing = 0.0
    written_qids = source_qids(args.topics) if args.trec else {}
    for family, positions in positions_of.items():
        runs = retrieve_grid(index, topics, family, [points[p] for p in positions], depth=args.depth, as_arrow=True,
                             threads=args.threads, parses=args.parses)
        scored = time.perf_counter()
        for run, position in zip(runs, positions):
            out, encoded = args.out[position], args.params[position]
            if isinstance(run, pa.Table):  # as_arrow: the run file carries what made it (irgrid.report.provenance)
                write_run_with_provenance(run, out, {**made_by, "family": family, "params": encoded})
            else:
                write_run(run, out)
            if args.trec:  # with the qids as the queries file writes them, as export-trec does
                write_trec_run(run, Path(out).with_suffix(".trec"), tag=f"irgrid-{family}", qids=written_qids)
        del runs  # a family's runs are written before the next family's are held
        writing += time.perf_counter() - scored
    finished = time.perf_counter()
    log.info("scored %d queries x %d points of %d families in %.2fs (imports %.2fs, retrieval %.2fs, writing %.2fs)",
             len(topics), len(points), len(positions_of), finished - started, imported - started,
             finished - imported - writing, writing)


def cmd_min_words_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .querysets import write_min_words_topics

    write_min_words_topics(args.topics, args.out, args.min_words, args.queryset)


def cmd_judged_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pyarrow as pa

    # deferred: this command's own dependencies (see the module's docstring)
    from .evaluate import read_qrels
    from .io import write_parquet
    from .runs import read_topics
    from .sentences.protocol import judged_topics, mixed_qids

    every = read_topics(args.topics)
    topics = judged_topics(every, read_qrels(args.qrels), args.questions)
    write_parquet(pa.Table.from_pandas(topics, preserve_index=False), args.out)
    log.info("%d of %d queries kept (%s), %d with judgements, %d with a relevant candidate, %d with a relevant "
             "and a non-relevant candidate, %d candidates", len(topics), len(every), args.questions,
             int((topics["candidates"].map(len) > 0).sum()), int((topics["relevant"] > 0).sum()),
             len(mixed_qids(topics)), int(topics["candidates"].map(len).sum()))


#: the queries' parses, beside the documents' part-*.parquet in a collection's parses directory
QUERY_PARSES = "queries.parquet"


def cmd_parse_sentences(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .collections.formats import FORMATS
    from .collections.readers import iter_queries
    from .sentences.parsing import parse_document_shards, parse_topic_sentences, write_parses

    spec, files = _collection(args)
    carried = {"document": {}, "query": {}}
    read_parses = FORMATS[spec.format].parses  # a format may carry a parse of every sentence and question
    if read_parses:
        for kind, key, parse in read_parses(spec, files):
            carried[kind][key] = parse
    kwargs = {"pipeline": args.pipeline} if args.pipeline else {}
    parse_document_shards(args.docs, args.out, carried=carried["document"], workers=args.workers, **kwargs)
    # every query of the collection (all its query sets), beside the documents' shards
    queries = [(query.qid, " ".join(text for text in query.fields.values() if text))
               for query in iter_queries(spec, files)]
    topics = pd.DataFrame(queries, columns=["qid", "text"]).drop_duplicates("qid")
    write_parses(parse_topic_sentences(topics, carried=carried["query"], **kwargs), Path(args.out) / QUERY_PARSES)


def cmd_sentence_cliques(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .evaluate import read_qrels
    from .features.sentence_parses import SentenceParses
    from .index import IndexReader
    from .runs import read_topics
    from .sentences.diagnostics import clique_statistics

    index = IndexReader(args.index)
    table = clique_statistics(index, read_topics(args.topics), read_qrels(args.qrels),
                              SentenceParses.load(args.parses, index))
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def cmd_phrase_weights(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .phrases.weights import write_phrase_weights

    table = write_phrase_weights(args.index, args.topics, args.family, [decode_point(p) for p in args.params], args.out)
    log.info("%d phrases of %d queries", int((table["phrase"] != "").sum()), table["qid"].nunique())


def cmd_export_trec(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .runs import read_run, source_qids, write_trec_run

    run = read_run(args.run)
    topics = args.topics
    if topics is None:  # the topics the run was made from, as its provenance names them
        # deferred: this command's own dependencies (see the module's docstring)
        from .report.provenance import read_run_provenance

        topics = read_run_provenance(args.run).get("topics")
    # the qids as the queries file writes them ("001", not the "1" every other step compares)
    written = source_qids(topics) if topics and Path(topics).exists() else {}
    write_trec_run(run, args.out, tag=args.tag, qids=written)


def cmd_evaluate(args) -> None:
    started = time.perf_counter()  # as in cmd_retrieve: the logged phases start here
    # deferred: this command's own dependencies (see the module's docstring)
    import numpy as np

    # irgrid.evaluate alone: no pandas, no retrieval code (numba, models), a third of a small chunk's time
    from .evaluate import RunEvaluator, read_qrels_table, read_run_for_evaluation, read_topic_qids, write_evaluation

    if len(args.run) != len(args.out):
        raise SystemExit(f"irgrid evaluate: {len(args.run)} --run but {len(args.out)} --out: give one --out per --run")
    imported = time.perf_counter()
    topic_qids = read_topic_qids(args.topics) if args.topics else None
    # Tie-aware names (E[AP], tied_relevant@k: irgrid.ties) are computed from the runs' scores, after
    # ir-measures' values; a list without them is evaluated exactly as before, by ir-measures alone.
    from .ties import is_tie_aware_name

    names = json.loads(args.measures)
    tie_aware = [name for name in names if is_tie_aware_name(name)]
    names = [name for name in names if name not in tie_aware]
    # The qrels are read and handed to ir-measures once for all the runs.
    qrels = read_qrels_table(args.qrels)
    evaluator = RunEvaluator(qrels, names, topic_qids, qrels_source=args.qrels) if names or not tie_aware else None
    # Every evaluation also says where a run's ties touch a relevant document, and gives E[m] beside
    # each measure m such a tie can change (irgrid.ties.TiedRelevantScan): rows added after the others.
    from .ties import TiedRelevantScan, read_run_scores

    scan = TiedRelevantScan(qrels, evaluator.judged, names) if evaluator and not args.no_tie_scan else None
    for run_path, out in zip(args.run, args.out):
        run = read_run_for_evaluation(run_path)
        per_query = evaluator.evaluate_table(run) if evaluator else None  # Arrow
        if tie_aware:
            # deferred: this command's own dependencies (see the module's docstring)
            import pyarrow as pa

            # deferred: this command's own dependencies (see the module's docstring)
            from .ties import evaluate_ties, read_scored_run

            # the query set's judged queries, as RunEvaluator takes them
            tied = evaluate_ties(read_scored_run(run_path), qrels, tie_aware,
                                 evaluator.judged if evaluator else topic_qids, run_source=run_path)
            per_query = tied if per_query is None else pa.concat_tables([per_query, tied])
        scores = read_run_scores(run_path) if scan else None
        every_query, ties = per_query, None
        if scores is not None:
            # deferred: this command's own dependencies (see the module's docstring)
            import pyarrow as pa

            ties = scan.evaluate(run.append_column("score", scores), skip=tie_aware)
            per_query = pa.concat_tables([per_query, ties])
        write_evaluation(per_query, out)
        # each measure's mean over the queries (names sorted, as the log always gave them); the scan's
        # rows are of the tied queries only: their count, not a mean
        names, measure_of_row = np.unique(every_query.column("measure").to_numpy(zero_copy_only=False),
                                          return_inverse=True)
        means = np.bincount(measure_of_row, every_query.column("value").to_numpy()) / np.bincount(measure_of_row)
        tied_text = "" if ties is None else f"; {scan.tied_queries(ties)} queries with ties touching a relevant document"
        log.info("%s: %s%s", run_path, ", ".join(f"{m}={v:.4f}" for m, v in zip(names.tolist(), means.tolist())),
                 tied_text)
    finished = time.perf_counter()
    log.info("evaluated %d runs in %.2fs (imports %.2fs, evaluation and writing %.2fs)",
             len(args.run), finished - started, imported - started, finished - imported)


def cmd_chunk(args) -> None:
    started = time.perf_counter()  # as in cmd_retrieve: the logged phases start here
    # deferred: this command's own dependencies (see the module's docstring)
    from .jobs.chunk import evaluate_chunk, parse_chunk_cells, write_chunk_evaluation
    from .report.provenance import run_provenance

    cells = parse_chunk_cells(_json_argument(args.cells), "--cells")
    measures = json.loads(args.measures)
    imported = time.perf_counter()
    table = evaluate_chunk(args.index, args.topics, args.qrels, cells, measures, depth=args.depth,
                           threads=args.threads, parses=args.parses)
    made_by = {key: value for key, value in run_provenance(args.index, args.topics, "", "", args.depth).items()
               if key not in ("family", "params")}
    write_chunk_evaluation(table, args.out, {**made_by, "qrels": str(args.qrels), "measures": measures})
    finished = time.perf_counter()
    log.info("scored and evaluated %d cells in %.2fs (imports %.2fs, retrieval and evaluation %.2fs)",
             len(cells), finished - started, imported - started, finished - imported)


def cmd_tie_aware(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .ties import compare_with_trec_eval, read_any_qrels, read_scored_run

    measures = json.loads(args.measures) if args.measures.lstrip().startswith("[") else args.measures.split(",")
    topic_qids = None
    if args.topics:
        # deferred: this command's own dependencies (see the module's docstring)
        from .evaluate import read_topic_qids

        topic_qids = read_topic_qids(args.topics)
    rows, tied, queries = compare_with_trec_eval(read_scored_run(args.run), read_any_qrels(args.qrels),
                                                 [name.strip() for name in measures if name.strip()], topic_qids)
    print(f"{'measure':<10} {'as ranked':>9} {'expected':>9} {'best':>9} {'worst':>9}")
    for row in rows:
        print(f"{row['measure']:<10} " + " ".join(f"{row[key]:>9.4f}" for key in ("trec_eval", "expected", "best",
                                                                                   "worst")))
    for flag, count in tied.items():
        where = "anywhere" if "@" not in flag else f"in a tie group starting in the top {flag.partition('@')[2]}"
        print(f"{flag}: {count} of {queries} judged queries have ties touching a relevant document ({where})")


def cmd_table(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .tables import TableSpec, load_cells, query_subsets, summarise, write_tables

    spec = TableSpec(**json.loads(args.spec))
    cells = pd.DataFrame(_json_argument(args.cells))
    summary = summarise(load_cells(cells), spec, query_subsets(cells, spec.subsets))
    write_tables(summary, spec, args.out_dir, stem=args.stem)


def cmd_figures(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .plots import write_figures
    from .tables import TableSpec, chosen_means, load_cells

    spec = TableSpec(**json.loads(args.spec))
    evaluations = load_cells(pd.DataFrame(_json_argument(args.cells)))
    summary = chosen_means(evaluations, spec, spec.select_by)
    write_figures(evaluations, summary, spec.select_by, list(spec.models), spec.model_labels, args.out_dir)


def cmd_parameter_figure(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .plots import plot_parameter
    from .tables import TableSpec, load_cells

    spec = TableSpec(**json.loads(args.spec))
    evaluations = load_cells(pd.DataFrame(_json_argument(args.cells)))
    stem = Path(args.out_dir) / f"parameter-{args.parameter}"
    plot_parameter(evaluations, spec.select_by, args.parameter, list(spec.models), spec.model_labels, stem,
                   baseline=spec.baseline)


def cmd_violations(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .axioms.experiment import analyse_best_runs, write_violations
    from .tables import TableSpec

    spec = TableSpec(**json.loads(args.spec))
    started = time.perf_counter()
    per_doc = analyse_best_runs(pd.DataFrame(_json_argument(args.cells)), spec, json.loads(args.families), depth=args.depth,
                                common_run=args.common_run, run_depth=args.run_depth)
    write_violations(per_doc, args.out)
    log.info("counted violations in %d query-document pairs in %.1fs", len(per_doc), time.perf_counter() - started)


def cmd_violation_table(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd
    import pyarrow.parquet as pq

    # deferred: this command's own dependencies (see the module's docstring)
    from .axioms import CONSTRAINTS
    from .axioms.experiment import violation_claims, violation_summary, write_violation_tables
    from .plots import plot_violations
    from .tables import TableSpec, load_cells

    spec = TableSpec(**json.loads(args.spec))
    # the summary needs the run keys, qid and the counts: leaving out docno (most of the bytes), analyzer
    # and length halves the reading and conversion of these millions of rows
    # (counted_on: absent from files counted on each model's own best run only)
    columns = ["collection", "queryset", "model", "params", "counted_on", "qid", *CONSTRAINTS]
    per_doc = pd.concat([pq.read_table(path, columns=[c for c in columns if c in pq.read_schema(path).names]).to_pandas()
                         for path in args.violations], ignore_index=True)
    cells = pd.DataFrame(_json_argument(args.cells))
    evaluations = load_cells(cells)
    analyzers = dict(zip(zip(cells["collection"], cells["queryset"]), cells["analyzer"])) if "analyzer" in cells else {}
    paper_models = json.loads(args.paper_models) if args.paper_models else None
    table, correlations = violation_summary(per_doc, evaluations, spec, paper_models=paper_models, analyzers=analyzers)
    claims = violation_claims(table, correlations, spec, fewest=args.fewest_violations, common_run=args.common_run)
    write_violation_tables(table, correlations, spec, args.table_dir, claims=claims, common_run=args.common_run)
    plot_violations(table, spec.select_by, spec.model_labels, Path(args.figure_dir) / "violations_vs_measure")


def cmd_findings(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from .report.claims import Claim, PaperTest
    from .report.evidence import query_texts, write_evidence
    from .report.findings import evaluate_claims, write_findings
    from .tables import TableSpec, chosen_points, load_cells, query_subsets

    spec = replace(TableSpec(**json.loads(args.spec)), selection=args.verdict_selection)
    claims = [Claim.from_dict(claim) for claim in json.loads(args.claims)]
    paper_test = json.loads(args.paper_test)
    paper_test = None if paper_test is None else PaperTest(**paper_test)
    cells = pd.DataFrame(_json_argument(args.cells))
    evaluations = load_cells(cells)
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
    from .report.html import write_report

    if args.plan is not None:  # the workflow's report job: the manifest is made here, not when planning
        # deferred: this command's own dependencies (see the module's docstring)
        from .report.manifest import workflow_manifest

        plan = _json_argument(args.plan)
        manifest = workflow_manifest(plan["config"], source=plan["source"], raw_files=plan["raw_files"])
    else:
        manifest = _json_argument(args.manifest)
    write_report(manifest, args.out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="irgrid", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    def collection_args(p):
        p.add_argument("--registry", required=True, help="collection registry YAML")
        p.add_argument("--collection", required=True, help="collection id")
        p.add_argument("--mirror", default=None, help="directory of raw collection files")
        p.add_argument("--resources", default="resources", help="download directory")

    p = sub.add_parser("shard", help="write a collection's documents as Parquet shards")
    collection_args(p)
    p.add_argument("--num-shards", type=int, default=4)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_shard)

    p = sub.add_parser("topics", help="write one query set as Parquet (qid, text)")
    collection_args(p)
    p.add_argument("--queryset", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_topics)

    p = sub.add_parser("parse-topics", help="parse a query set with spaCy: phrases and dependency parse per query")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text)")
    p.add_argument("--pipeline", default="en_core_web_sm", help="installed spaCy pipeline package")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_parse_topics)

    p = sub.add_parser("phrase-topics", help="identify each query's phrases: a phrase list, PMI in the collection, "
                       "or a Chinese segmenter")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text)")
    p.add_argument("--method", required=True, choices=["list", "pmi", "segmenter"])
    p.add_argument("--phrase-list", default=None, help="phrase list file (method list)")
    p.add_argument("--docs", default=None, help="directory of document shards (method pmi)")
    p.add_argument("--options", default="{}", help="the config's phrases section as JSON")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_phrase_topics)

    p = sub.add_parser("qrels", help="write the judgements as Parquet (qid, docno, relevance)")
    collection_args(p)
    p.add_argument("--docs", default=None, help="the collection's document shards: judged documents not in them are "
                   "logged, more than half of them an error")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_qrels)

    p = sub.add_parser("index", help="build the partitioned Parquet inverted index with Dask")
    p.add_argument("--docs", required=True, help="directory of document shards")
    p.add_argument("--analyzer", required=True, help="analyzer as JSON")
    p.add_argument("--num-buckets", type=int, default=None,
                   help="postings buckets (default: one per 4M tokens, at least 16)")
    p.add_argument("--scheduler", default=None, help="dask.distributed scheduler address")
    p.add_argument("--dask-cluster", default=None,
                   help="a dask-jobqueue cluster to start for this build, as JSON (the config's dask.cluster)")
    p.add_argument("--workers", type=int, default=1, help="local Dask workers when no scheduler is given")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("forward-index", help="build an index's forward index (each document's terms in order)")
    p.add_argument("--index", required=True, help="the postings index (irgrid index)")
    p.add_argument("--workers", type=int, default=1, help="threads")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_forward_index)

    p = sub.add_parser("retrieve", help="score a query set at one or more parameter points")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--family", nargs="+", required=True,
                   help="model family, e.g. bm25: one for every point, or one per --params entry")
    p.add_argument("--params", nargs="+", required=True, help="encoded parameter points (k1~0.9_b~0.4)")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--trec", action="store_true", help="also write a TREC-format run next to each output")
    p.add_argument("--threads", type=int, default=1,
                   help="threads to score and rank on (models with a fused kernel: bm25, ql_dirichlet, kl_ml)")
    p.add_argument("--parses", default=None,
                   help="the collection's sentence parses (irgrid parse-sentences), for a model scoring parse-tree "
                        "features (mrf_sentence)")
    p.add_argument("--out", nargs="+", required=True)
    p.set_defaults(func=cmd_retrieve)

    p = sub.add_parser("sentence-cliques", help="the tree values of the query-term groups in relevant and other "
                                                "judged sentences (why mrf_sentence ranks as it does)")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--parses", required=True)
    p.set_defaults(func=cmd_sentence_cliques)

    p = sub.add_parser("min-words-topics", help="query set X+minNwords: the queries of X with N or more words")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text, any other columns)")
    p.add_argument("--min-words", type=int, required=True,
                   help="keep queries of this many words or more (lucene tokens, stop words kept)")
    p.add_argument("--queryset", required=True, help="the filtered query set's name, for messages")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_min_words_topics)

    p = sub.add_parser("judged-topics", help="query set X+judged: X with each query's judged documents to re-rank")
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--questions", choices=["positive", "all"], default="positive",
                   help="keep the queries with a relevant candidate (X+judged) or every one (X+alljudged)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_judged_topics)

    p = sub.add_parser("parse-sentences", help="a dependency parse of every document (carried or spaCy), by shard")
    collection_args(p)
    p.add_argument("--docs", required=True, help="directory of document shards")
    p.add_argument("--pipeline", default=None, help="spaCy pipeline package (default: the config's parser)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", required=True, help="directory of parse shards")
    p.set_defaults(func=cmd_parse_sentences)

    p = sub.add_parser("phrase-weights", help="each query's phrases, their statistics and weights under a phrase model")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True, help="topics Parquet with a phrases column (X+parser, X+pmi, ...)")
    p.add_argument("--family", required=True, help="phrase model family: p, pu or pm")
    p.add_argument("--params", nargs="+", required=True, help="encoded parameter points of the grid")
    p.add_argument("--out", required=True, help="TSV file")
    p.set_defaults(func=cmd_phrase_weights)

    p = sub.add_parser("export-trec", help="write a Parquet run in TREC format (qid Q0 docno rank score tag)")
    p.add_argument("--run", required=True)
    p.add_argument("--tag", default="irgrid")
    p.add_argument("--topics", default=None, help="the run's topics (default: those its provenance names), whose "
                                                  "source_qid column gives each qid as the queries file writes it")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_export_trec)

    p = sub.add_parser("evaluate", help="per-query evaluation of one or more runs with ir-measures")
    p.add_argument("--run", nargs="+", required=True, help="runs of one query set (Parquet)")
    p.add_argument("--qrels", required=True)
    p.add_argument("--topics", default=None, help="the query set that was run: only its judged queries are evaluated")
    p.add_argument("--measures", required=True, help="JSON list of ir-measures names")
    p.add_argument("--out", nargs="+", required=True, help="one per --run, in the same order")
    p.add_argument("--no-tie-scan", action="store_true",
                   help="leave out the rows on ties touching a relevant document (first_tied_relevant_rank, E[m])")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("chunk", help="retrieve and evaluate a chunk of cells; write their per-query evaluations "
                                     "(one file, no runs)")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--cells", required=True,
                   help="JSON list of [model, family, params], or - for standard input")
    p.add_argument("--measures", required=True, help="JSON list of measure names")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--parses", default=None, help="the collection's sentence parses (mrf_sentence)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("tie-aware", help="a run's measures over every ordering of its tied documents "
                       "(expected, best, worst) beside trec_eval's")
    p.add_argument("--run", required=True, help="an irgrid run (Parquet) or a TREC run file")
    p.add_argument("--qrels", required=True, help="irgrid qrels (Parquet) or a TREC qrels file")
    p.add_argument("--topics", default=None, help="the query set that was run: only its judged queries are evaluated")
    p.add_argument("--measures", default="AP,RR,Rprec,P@1,P@5,P@10,nDCG@10",
                   help="comma-separated or a JSON list: AP, RR, Rprec, P@k, R@k, nDCG@k")
    p.set_defaults(func=cmd_tie_aware)

    p = sub.add_parser("table", help="significance-marked table of an experiment")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--stem", default="table", help="file name without suffix (table, table_cv)")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("figures", help="an experiment's figures (by-method bars, sensitivity curves) as SVG and PNG")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=cmd_figures)

    p = sub.add_parser("parameter-figure", help="the selection measure against one parameter, per collection and model")
    p.add_argument("--spec", required=True, help="table spec JSON")
    p.add_argument("--cells", required=True, help="cells JSON, or - to read it from standard input")
    p.add_argument("--parameter", required=True)
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=cmd_parameter_figure)

    p = sub.add_parser("violations", help="count constraint violations in each model's best run on one collection")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of cells with path, run, index, topics, or - for standard input")
    p.add_argument("--families", required=True, help="JSON {model name: family}")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--common-run", help="model whose best run's documents every model is also counted on")
    p.add_argument("--run-depth", type=int, default=None,
                   help="score each best run again at this retrieval depth (else read each cell's run file)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_violations)

    p = sub.add_parser("violation-table", help="violation table, Spearman correlations and figure of an experiment")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--violations", nargs="+", required=True, help="per-collection violation files")
    p.add_argument("--paper-models", help="JSON list of the paper's own models (default: all the models)")
    p.add_argument("--common-run", help="the model whose best run the common counts were made on (for the labels)")
    p.add_argument("--fewest-violations", help="the model the paper finds to have the fewest violations (a claim)")
    p.add_argument("--table-dir", required=True)
    p.add_argument("--figure-dir", required=True)
    p.set_defaults(func=cmd_violation_table)

    p = sub.add_parser("findings", help="an experiment's claims checked per collection, and its per-query evidence")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--claims", required=True, help="JSON list of {better, than, measure, text, querysets, kind, "
                                                   "larger_on}")
    p.add_argument("--verdict-selection", default="cv", choices=["cv", "tuned", "best"],
                   help="the selection whose chosen points decide the verdicts (the best run is shown beside)")
    p.add_argument("--paper-test", default="null", help="JSON {test, alternative, alpha, correction} of the "
                                                        "paper's own test, or null")
    p.add_argument("--cells", required=True, help="JSON list of cells with path and topics; - reads stdin")
    p.add_argument("--table-dir", required=True)
    p.add_argument("--figure-dir", required=True)
    p.set_defaults(func=cmd_findings)

    p = sub.add_parser("report", help="HTML report of all experiments")
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument("--manifest", help="JSON of irgrid.report.manifest.report_manifest; - reads stdin")
    given.add_argument("--plan", help="JSON of irgrid.report.manifest.manifest_plan (the workflow's config, from "
                                      "which the manifest is made); - reads stdin")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("synthesize", help="write a deterministic synthetic collection (docs shards + topics)")
    p.add_argument("--out", required=True, help="directory: docs/part-XXXX.parquet, topics.parquet, spec.json")
    p.add_argument("--docs", type=int, default=1_000_000, help="number of documents")
    p.add_argument("--vocabulary", type=int, default=500_000, help="number of distinct words")
    p.add_argument("--mean-length", type=float, default=120.0, help="mean document length in words")
    p.add_argument("--length-sigma", type=float, default=0.6, help="log-normal sigma of the lengths")
    p.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the word distribution")
    p.add_argument("--queries", type=int, default=1000, help="number of queries (2-6 words each)")
    p.add_argument("--docs-per-shard", type=int, default=50_000)
    p.add_argument("--seed", type=int, default=None, help="random seed (default: irgrid.synthetic's)")
    p.set_defaults(func=cmd_synthesize)

    p = sub.add_parser("clean-leftovers", help="remove the temporary files and directories that killed jobs left "
                                               "(those of processes no longer running on this host)")
    p.add_argument("roots", nargs="+", help="directories to search, e.g. results")
    p.add_argument("--unowned", action="store_true",
                   help="also remove temporaries named by older versions (no process recorded): only when no run "
                        "is active")
    p.add_argument("--dry-run", action="store_true", help="report, remove nothing")
    p.set_defaults(func=cmd_clean_leftovers)

    p = sub.add_parser("check-lock", help="remove Snakemake's lock of a directory if no live Snakemake holds it; "
                                          "exit 2 naming the process if one does")
    p.add_argument("--directory", default=".", help="the workflow's working directory")
    p.set_defaults(func=cmd_check_lock)
    return parser


def cmd_clean_leftovers(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .housekeeping import clean_leftovers

    for root in args.roots:
        for line in clean_leftovers(root, unowned=args.unowned, dry_run=args.dry_run).lines():
            print(f"{root}: {line}" if line[0].isdigit() else line)


def cmd_check_lock(args) -> int:
    # deferred: this command's own dependencies (see the module's docstring)
    from .housekeeping import check_lock

    state = check_lock(args.directory)
    if state.holders:
        holder = state.holders[0]
        print(f"irgrid check-lock: a Snakemake run is active in {state.directory} (pid {holder.pid}: "
              f"{holder.command[:200]}); wait for it to finish, or stop it with 'kill {holder.pid}'", file=sys.stderr)
        return 2
    if state.removed:
        print(f"irgrid check-lock: removed a stale Snakemake lock in {state.directory / '.snakemake' / 'locks'} "
              "(no Snakemake process runs in this directory; the run that held it was killed)", file=sys.stderr)
    return 0


def cmd_synthesize(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from .synthetic import SyntheticSpec, write_synthetic_collection

    spec = SyntheticSpec(num_docs=args.docs, vocabulary_size=args.vocabulary, mean_length=args.mean_length,
                         length_sigma=args.length_sigma, zipf_exponent=args.zipf, num_queries=args.queries,
                         docs_per_shard=args.docs_per_shard,
                         **({} if args.seed is None else {"seed": args.seed}))
    started = time.perf_counter()
    write_synthetic_collection(spec, args.out)
    log.info("wrote %d documents in %d shards and %d queries to %s in %.1fs", spec.num_docs, spec.num_shards,
             spec.num_queries, args.out, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C, whenever it comes (imports, the command, its clean-up): one line, no traceback.
    args = None
    try:
        args = build_parser().parse_args(argv)
        return _run(args)
    except KeyboardInterrupt:
        return _interrupted(args.command if args is not None else "")


def _run(args) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Each warning also goes to a file beside the job's log, listed at the end of the run and in the
    # report (irgrid.jobs.job_warnings): in the log alone, nobody reads it.
    from .jobs.job_warnings import install_warning_file

    install_warning_file(args.command, _outputs(args))
    try:
        code = args.func(args)
    except Exception as error:
        if isinstance(error, _user_errors()):
            # The message already names the file, the line and what was expected.
            print(f"irgrid {args.command}: error: {error}", file=sys.stderr)
            return 2
        if isinstance(error, OSError):
            # A full disk, an unwritable or missing directory: one line naming the path, not a traceback.
            print(f"irgrid {args.command}: error: {describe_os_error(error, _outputs(args))}", file=sys.stderr)
            return 1
        raise
    return code or 0


def _interrupted(command: str) -> int:
    """Ctrl-C: one line and the shell's code for SIGINT (128 + 2), no traceback. A second Ctrl-C
    while the clean-up (``finally`` blocks, exit handlers) runs ends the process at once, silently:
    its traceback would bury the line (45 lines of it)."""
    with contextlib.suppress(ValueError):  # main() called from another thread than the main one
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    print(f"irgrid {command}: interrupted" if command else "irgrid: interrupted", file=sys.stderr, flush=True)
    return 130


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors whose message says all (a bad input, config or collection file). The collection ones
    only where their module was loaded, as nothing else raises them: importing irgrid.collections in
    every command would cost each of the run's hundreds of jobs its import (commands import what they use)."""
    sources = sys.modules.get("irgrid.collections.sources")
    collection_errors = (sources.ChecksumError, sources.CollectionNotAvailable) if sources else ()
    return (InputFormatError, ConfigError, *collection_errors)


def _outputs(args) -> list[str]:
    """What the command writes (``--out``, ``--out-dir``...), to name when an error does not say which file."""
    paths = []
    for name in ("out", "out_dir", "table_dir", "figure_dir"):
        value = getattr(args, name, None)
        paths += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    return paths


def describe_os_error(error: OSError, outputs: list[str] | None = None) -> str:
    """``path: reason`` for an operating-system error (``results/x: No space left on device``).

    Errors from inside pyarrow carry no file name, and an ``[errno 28]`` only in their text; a full
    disk or a refused write is then reported against the command's outputs (``outputs``).
    """
    text = " ".join(str(error).split())
    errno = error.errno
    if errno is None:
        found = re.search(r"\[errno (\d+)\]", text, re.IGNORECASE)
        errno = int(found.group(1)) if found else None
    hint = {28: " (free space on that file system, or write results elsewhere)",
            122: " (your disk quota is used up)",
            13: " (make the directory writable for you, or run where you may write)",
            27: " (a file size limit, ulimit -f, stopped the write)",
            30: " (the file system is read-only; run where you may write)"}.get(errno, "")
    if error.filename is not None:
        where = str(error.filename) + (f" -> {error.filename2}" if error.filename2 is not None else "")
        return f"{where}: {error.strerror or text}{hint}"
    if hint and outputs:
        shown = ", ".join(outputs[:3]) + (f" and {len(outputs) - 3} more" if len(outputs) > 3 else "")
        return f"writing {shown}: {text}{hint}"
    return f"{type(error).__name__}: {text}{hint}"


if __name__ == "__main__":
    sys.exit(main())
