"""Commands that score and evaluate: a grid's runs, a chunk of cells, runs' evaluations, TREC export."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..grid import decode_point
from .common import _json_argument, log


def cmd_retrieve(args) -> None:
    # Timed from here: the phases logged below are what the job spends after Python and the CLI
    # have started (benchmarks/snakemake_grid.py adds them up across a workflow's jobs).
    started = time.perf_counter()
    # deferred: this command's own dependencies (see the module's docstring)
    import pyarrow as pa

    # deferred: this command's own dependencies (see the module's docstring)
    from ..index import IndexReader
    from ..retrieve import retrieve_grid
    from ..runs import read_topics, source_qids, write_run, write_trec_run

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
    from ..jobs.provenance import run_provenance, write_run_with_provenance

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
            if isinstance(run, pa.Table):  # as_arrow: the run file carries what made it (irgrid.jobs.provenance)
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


def cmd_export_trec(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..runs import read_run, source_qids, write_trec_run

    run = read_run(args.run)
    topics = args.topics
    if topics is None:  # the topics the run was made from, as its provenance names them
        # deferred: this command's own dependencies (see the module's docstring)
        from ..jobs.provenance import read_run_provenance

        topics = read_run_provenance(args.run).get("topics")
    # the qids as the queries file writes them ("001", not the "1" every other step compares)
    written = source_qids(topics) if topics and Path(topics).exists() else {}
    write_trec_run(run, args.out, tag=args.tag, qids=written)


def cmd_evaluate(args) -> None:
    started = time.perf_counter()  # as in cmd_retrieve: the logged phases start here
    # deferred: this command's own dependencies (see the module's docstring)
    import numpy as np

    # irgrid.evaluation.evaluator alone: no pandas, no retrieval code (numba, models), a third of a small chunk's time
    from ..evaluation.evaluator import RunEvaluator, read_qrels_table, read_run_for_evaluation, read_topic_qids, write_evaluation

    if len(args.run) != len(args.out):
        raise SystemExit(f"irgrid evaluate: {len(args.run)} --run but {len(args.out)} --out: give one --out per --run")
    imported = time.perf_counter()
    topic_qids = read_topic_qids(args.topics) if args.topics else None
    # Tie-aware names (E[AP], tied_relevant@k: irgrid.evaluation.ties) are computed from the runs' scores, after
    # ir-measures' values; a list without them is evaluated exactly as before, by ir-measures alone.
    from ..evaluation.ties import is_tie_aware_name

    names = json.loads(args.measures)
    tie_aware = [name for name in names if is_tie_aware_name(name)]
    names = [name for name in names if name not in tie_aware]
    # The qrels are read and handed to ir-measures once for all the runs.
    qrels = read_qrels_table(args.qrels)
    evaluator = RunEvaluator(qrels, names, topic_qids, qrels_source=args.qrels) if names or not tie_aware else None
    # Every evaluation also says where a run's ties touch a relevant document, and gives E[m] beside
    # each measure m such a tie can change (irgrid.evaluation.ties.TiedRelevantScan): rows added after the others.
    from ..evaluation.ties import TiedRelevantScan, read_run_scores

    scan = TiedRelevantScan(qrels, evaluator.judged, names) if evaluator and not args.no_tie_scan else None
    for run_path, out in zip(args.run, args.out):
        run = read_run_for_evaluation(run_path)
        per_query = evaluator.evaluate_table(run) if evaluator else None  # Arrow
        if tie_aware:
            # deferred: this command's own dependencies (see the module's docstring)
            import pyarrow as pa

            # deferred: this command's own dependencies (see the module's docstring)
            from ..evaluation.ties import evaluate_ties, read_scored_run

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
    from ..jobs.chunk import evaluate_chunk, parse_chunk_cells, write_chunk_evaluation
    from ..jobs.provenance import run_provenance

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
    from ..evaluation.ties import compare_with_trec_eval, read_any_qrels, read_scored_run

    measures = json.loads(args.measures) if args.measures.lstrip().startswith("[") else args.measures.split(",")
    topic_qids = None
    if args.topics:
        # deferred: this command's own dependencies (see the module's docstring)
        from ..evaluation.evaluator import read_topic_qids

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
