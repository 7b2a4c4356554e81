"""What a chunk job's evaluation costs: P rankings against one, by document ids and through ir-measures.

    python benchmarks/chunk_evaluation.py --synthetic benchmarks/.data/syn-1000000 \\
        --index benchmarks/.data/indexes/syn-1000000/irgrid --repeats 3 --json OUT.json

A chunk job (``irgrid.jobs.chunk.evaluate_chunk``) scores its cells and evaluates each ranking in
memory. This measures the evaluation part alone, as the job runs it, in a fresh process per
measurement (imports counted apart), for one ranking and for P (20), ``--repeats`` times,
interleaved, and for the two ways the job evaluates:

- ``docids``: ``irgrid.jobs.trec_measures.RankedJudgements`` (the qrels mapped to document ids once,
  each ranking's measures from its ids): what the job does for trec_eval's rank-only measures;
- ``ir-measures``: each ranking's run table up to every query's last judged document (docno strings
  for those rows, as ``_scored_runs`` makes it) handed to ``RunEvaluator`` (ir-measures, pytrec_eval):
  what the job does for any other measure, and did for these before.

Each child reads the qrels, builds its evaluator (once a job), then evaluates the rankings; CPU
seconds (user + system) after the imports, median [min-max], and the ratio P / 1 (the issue's goal:
<= 2). The rankings (P BM25 points, depth 1000, ``Scorer.grid_tops``) are made once and kept in
``--work`` as arrays; both ways' values are checked equal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

POINTS = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]


def make_rankings(index: Path, topics: Path, out: Path) -> None:
    import numpy as np

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    from irgrid.runs import read_topics

    model = get_model("bm25")
    points = [model.check_point(point) for point in POINTS]
    arrays = {}
    for j, (qids, (docids, _, offsets)) in enumerate(Scorer(IndexReader(index)).grid_tops(
            model, read_topics(topics), points, 1000)):
        arrays[f"docids{j}"] = docids
        arrays[f"offsets{j}"] = offsets
        arrays["qids"] = np.array(qids)  # the same queries for every point
    np.savez(out, **arrays)


def child(args) -> None:
    """Evaluate ``args.rankings`` rankings one way; print a JSON line of CPU seconds."""
    started = time.process_time()
    import numpy as np
    import pyarrow as pa

    from irgrid.evaluation.evaluator import RunEvaluator, read_qrels_table, read_topic_qids
    from irgrid.index import IndexReader
    from irgrid.jobs.chunk import _JudgedDocuments, _scored_runs  # noqa: F401  (the job's own imports)
    from irgrid.jobs.trec_measures import RankedJudgements
    from irgrid.runs import RUN_SCHEMA

    imported = time.process_time()
    saved = np.load(args.arrays)
    qids = [str(qid) for qid in saved["qids"]]
    rankings = [(saved[f"docids{j}"], saved[f"offsets{j}"]) for j in range(args.rankings)]
    loaded = time.process_time()
    qrels = read_qrels_table(args.qrels)
    evaluator = RunEvaluator(qrels, args.measures, read_topic_qids(args.topics))
    index = IndexReader(args.index)
    values = []
    if args.way == "docids":
        judgements = RankedJudgements(evaluator, qrels, index.docnos_arrow)
        for docids, offsets in rankings:
            values.append(judgements.values(qids, docids, offsets))
    else:
        judged = _JudgedDocuments(qrels, qids, index)
        keys = judged.keys(qids)
        qid_column = pa.array(qids, pa.string())
        for docids, offsets in rankings:
            # the rows _scored_runs keeps: up to each query's last judged document, its tie group whole
            query_of_row = np.repeat(np.arange(len(qids), dtype=np.int64), np.diff(offsets))
            ranks = np.arange(len(docids), dtype=np.int64) - offsets[:-1][query_of_row] + 1
            judged_rows = np.isin(query_of_row * judged.num_docs + docids, keys)
            last = np.zeros(len(qids), dtype=np.int64)
            np.maximum.at(last, query_of_row[judged_rows], ranks[judged_rows])
            rows = np.flatnonzero(ranks <= last[query_of_row])
            run = pa.Table.from_arrays(
                [qid_column.take(pa.array(query_of_row[rows])), index.docnos_arrow.take(pa.array(docids[rows])),
                 pa.array(ranks[rows].astype(np.int32)), pa.array(-ranks[rows].astype(np.float64))], schema=RUN_SCHEMA)
            values.append(evaluator._values(run))
    done = time.process_time()
    np.save(args.values_out, np.stack(values))
    print(json.dumps({"imports": imported - started, "load": loaded - imported, "evaluation": done - loaded}))


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=Path, required=False)
    parser.add_argument("--index", type=Path)
    parser.add_argument("--work", type=Path, default=HERE / ".data" / "chunk-evaluation")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    # the child's arguments
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--way", choices=["docids", "ir-measures"], help=argparse.SUPPRESS)
    parser.add_argument("--rankings", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--arrays", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--qrels", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--topics", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measures", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--values-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    import numpy as np
    from evaluation import config_measures, prepare_synthetic

    topics, qrels = prepare_synthetic(args.synthetic)
    measures = config_measures()
    args.work.mkdir(parents=True, exist_ok=True)
    arrays = args.work / f"rankings-{args.synthetic.name}.npz"
    if not arrays.is_file():
        print(f"making the rankings of {len(POINTS)} BM25 points into {arrays} ...", flush=True)
        make_rankings(args.index, topics, arrays)
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    print(f"{args.synthetic.name}: measures {measures}; load average {os.getloadavg()[0]:.1f}", flush=True)
    results: dict[str, dict[int, list[dict]]] = {"docids": {1: [], len(POINTS): []}, "ir-measures": {1: [], len(POINTS): []}}
    for repeat in range(args.repeats):
        for way in results:
            for count in (1, len(POINTS)):
                values_out = args.work / f"values-{way}-{count}.npy"
                command = [sys.executable, __file__, "--child", "--way", way, "--rankings", str(count), "--arrays",
                           str(arrays), "--qrels", str(qrels), "--topics", str(topics), "--index", str(args.index),
                           "--values-out", str(values_out), "--measures", *measures]
                found = json.loads(subprocess.run(command, check=True, capture_output=True, text=True, env=env)
                                   .stdout.strip().splitlines()[-1])
                results[way][count].append(found)
                print(f"[{repeat + 1}/{args.repeats}] {way:12s} {count:2d} rankings  evaluation {found['evaluation']:.3f} "
                      f"CPU s  (imports {found['imports']:.2f}, load {found['load']:.2f}; "
                      f"load average {os.getloadavg()[0]:.1f})", flush=True)
    same = all(np.array_equal(np.load(args.work / f"values-docids-{count}.npy"),
                              np.load(args.work / f"values-ir-measures-{count}.npy")) for count in (1, len(POINTS)))
    print(f"\nevaluation CPU s after imports and the rankings' load (qrels, evaluator, every ranking), "
          f"median [min-max] of {args.repeats}")
    summary = {}
    for way, by_count in results.items():
        one = [r["evaluation"] for r in by_count[1]]
        many = [r["evaluation"] for r in by_count[len(POINTS)]]
        ratio = statistics.median(many) / statistics.median(one)
        summary[way] = {"one": one, "many": many, "ratio": ratio}
        print(f"  {way:12s} 1 ranking {spread(one)}  {len(POINTS)} rankings {spread(many)}  "
              f"{len(POINTS)} / 1 = {ratio:.2f}  (goal <= 2: {'met' if ratio <= 2 else 'NOT met'})")
    print(f"  ir-measures / docids, {len(POINTS)} rankings: "
          f"{statistics.median(summary['ir-measures']['many']) / statistics.median(summary['docids']['many']):.1f}x")
    print(f"  values of the two ways identical: {same}")
    if args.json:
        args.json.write_text(json.dumps({"measures": measures, "results": results, "summary": summary,
                                         "identical": same}, indent=1))


if __name__ == "__main__":
    main()
