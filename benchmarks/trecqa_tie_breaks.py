"""How much a tie-break moves a TrecQA score: one run re-ranked under three tie-breaks (an analysis, not a timing).

    python benchmarks/trecqa_tie_breaks.py results/trecqa/runs/porter_smart/test+judged/word_count/idf~0.parquet \\
        [--file /work/shared/collections/trecqa/TEST.xml] [--judged results/trecqa/topics/test+judged.parquet]

The run's scores are kept; only the order among tied candidates changes: by docno (irgrid's, a
hash of the text, independent of the labels), by the order the file lists the candidates
(positives first in TrecQA: the labels leak into the ranking), and by the reverse file order (what
trec_eval's descending-docno tie-break does to ids assigned in file order). AP and MRR with
ir-measures over all judged questions and over those with a positive and a negative candidate.
docs/results.md ("MRF sentence retrieval") quotes its output for the word-count baselines.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import AP, RR

from irgrid.collections.trecqa import iter_trecqa_pairs, sentence_docno
from irgrid.evaluation.evaluator import read_qrels
from irgrid.runs import read_run, read_topics
from irgrid.sentences.protocol import mixed_qids

REPO = Path(__file__).resolve().parents[1]


def file_positions(path: Path) -> dict[tuple[str, str], int]:
    """(qid, docno) -> the candidate's position among its question's candidates in the file."""
    positions: dict[tuple[str, str], int] = {}
    for pairs in iter_trecqa_pairs(path):
        for i, candidate in enumerate(pairs.candidates):
            positions.setdefault((pairs.qid, sentence_docno(" ".join(candidate.tokens))), i)
    return positions


def reranked(run: pd.DataFrame, positions, tie_break: str) -> pd.DataFrame:
    rows = []
    for qid, ranking in run.groupby("qid", sort=False):
        ranking = ranking.copy()
        if tie_break == "docno":
            ranking = ranking.sort_values(["score", "docno"], ascending=[False, True])
        else:
            ranking["position"] = [positions[(qid, docno)] for docno in ranking["docno"]]
            ranking = ranking.sort_values(["score", "position"], ascending=[False, tie_break == "file order"])
        rows.append(pd.DataFrame({"query_id": qid, "doc_id": ranking["docno"],
                                  "score": np.arange(len(ranking), 0, -1, dtype=float)}))
    return pd.concat(rows)


def means(qrels: pd.DataFrame, run: pd.DataFrame, qids: set[str]) -> dict[str, float]:
    values: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc([AP, RR], qrels, run):
        values.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return {name: float(np.mean([found.get(q, 0.0) for q in sorted(qids)])) for name, found in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path)
    parser.add_argument("--file", type=Path, default=REPO.parent / "shared" / "collections" / "trecqa" / "TEST.xml")
    parser.add_argument("--judged", type=Path, default=REPO / "results" / "trecqa" / "topics" / "test+judged.parquet")
    parser.add_argument("--qrels", type=Path, default=REPO / "results" / "trecqa" / "qrels.parquet")
    args = parser.parse_args()
    positions = file_positions(args.file)
    questions = {qid for qid, _ in positions}
    qrels = read_qrels(args.qrels)
    qrels = qrels[qrels["qid"].astype(str).isin(questions)]
    qrels = pd.DataFrame({"query_id": qrels["qid"].astype(str), "doc_id": qrels["docno"].astype(str),
                          "relevance": qrels["relevance"].astype(int)})
    judged = set(qrels["query_id"])
    mixed = mixed_qids(read_topics(args.judged))
    run = read_run(args.run)
    print(f"run {args.run}: {run['qid'].nunique()} questions, {len(run)} candidates")
    for tie_break in ("file order", "docno", "reverse file order"):
        ranked = reranked(run, positions, tie_break)
        everything, clean = means(qrels, ranked, judged), means(qrels, ranked, mixed)
        print(f"  ties by {tie_break:18s}  all {len(judged)} judged: AP {everything['AP']:.4f} MRR {everything['RR']:.4f}"
              f"   clean {len(mixed)}: AP {clean['AP']:.4f} MRR {clean['RR']:.4f}")


if __name__ == "__main__":
    main()
