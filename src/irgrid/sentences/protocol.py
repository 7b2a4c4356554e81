"""The re-ranking protocol of answer-sentence selection: each question ranks its own candidates.

Query set ``X+judged`` is query set X with two columns more, from the collection's qrels:
``candidates`` (the docnos judged for the query, which :mod:`irgrid.retrieve` ranks instead
of the whole collection, every one of them, also those sharing no word with the question)
and ``relevant`` (how many of them are relevant). It holds the questions with at least one
relevant candidate, as the standard answer-selection protocols evaluate (WikiQA's and
TrecQA's): a question without one scores 0 on every measure whatever the ranker, and
counting it (390 of WikiQA's 633 test questions) dilutes every comparison. Query set
``X+alljudged`` keeps every question of X, also those without a relevant candidate (and
those without judgements, with an empty candidate list: they rank nothing and, having no
qrels, are not evaluated). From either the tables take the subset of questions with at
least one positive and one negative candidate (:data:`MIXED`; TrecQA's "clean" questions),
and from ``X+alljudged`` the subset with a positive (:data:`POSITIVE`).

The candidates' order is the docno order, never the qrels' file order: a data set listing
positives first must not hand its labels to a ranker through the order of its candidates.
"""

from __future__ import annotations

import pandas as pd

#: the query subset of questions with at least one relevant and one non-relevant candidate
MIXED = "mixed"
#: the query subset of questions with at least one relevant candidate (what X+judged keeps)
POSITIVE = "positive"
CANDIDATES = "candidates"
RELEVANT = "relevant"


def judged_topics(topics: pd.DataFrame, qrels: pd.DataFrame, questions: str = POSITIVE) -> pd.DataFrame:
    """``topics`` with each query's judged documents (sorted docnos) and its number of relevant ones;
    ``questions``: ``positive`` keeps the queries with at least one relevant candidate, ``all`` every one."""
    if questions not in (POSITIVE, "all"):
        raise ValueError(f"questions {questions!r}: expected {POSITIVE!r} or 'all'")
    grouped = {
        str(qid): (sorted(set(rows["docno"].astype(str))), int((rows.groupby("docno")["relevance"].max() > 0).sum()))
        for qid, rows in qrels.groupby("qid", sort=False)
    }
    out = topics.copy()
    found = [grouped.get(str(qid), ([], 0)) for qid in out["qid"]]
    out[CANDIDATES] = [candidates for candidates, _ in found]
    out[RELEVANT] = [relevant for _, relevant in found]
    if questions == POSITIVE:
        out = out[out[RELEVANT] > 0].reset_index(drop=True)
    return out


def positive_qids(topics: pd.DataFrame) -> set[str]:
    """The queries of judged topics with at least one relevant candidate."""
    if RELEVANT not in topics.columns:
        return set()
    return {str(qid) for qid, relevant in zip(topics["qid"], topics[RELEVANT]) if int(relevant) > 0}


def mixed_qids(topics: pd.DataFrame) -> set[str]:
    """The queries of judged topics with at least one relevant and one non-relevant candidate."""
    if CANDIDATES not in topics.columns or RELEVANT not in topics.columns:
        return set()
    return {str(qid) for qid, candidates, relevant in zip(topics["qid"], topics[CANDIDATES], topics[RELEVANT])
            if 0 < int(relevant) < len(candidates)}
