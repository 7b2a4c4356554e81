"""The re-ranking protocol of answer-sentence selection: each question ranks its own candidates.

Query set ``X+judged`` is query set X with two columns more, from the collection's qrels:
``candidates`` (the docnos judged for the query, which :mod:`irgrid.retrieve` ranks instead
of the whole collection, every one of them, also those sharing no word with the question)
and ``relevant`` (how many of them are relevant).  From these the tables take the usual
subset of questions with at least one positive and one negative candidate
(:data:`MIXED`; TrecQA's "clean" questions).  A question without judgements keeps an empty
candidate list: it ranks nothing and, having no qrels, is not evaluated.

The candidates' order is the docno order, never the qrels' file order: a data set listing
positives first must not hand its labels to a ranker through the order of its candidates.
"""

from __future__ import annotations

import pandas as pd

#: the query subset of questions with at least one relevant and one non-relevant candidate
MIXED = "mixed"
CANDIDATES = "candidates"
RELEVANT = "relevant"


def judged_topics(topics: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """``topics`` with each query's judged documents (sorted docnos) and its number of relevant ones."""
    grouped = {
        str(qid): (sorted(set(rows["docno"].astype(str))), int((rows.groupby("docno")["relevance"].max() > 0).sum()))
        for qid, rows in qrels.groupby("qid", sort=False)
    }
    out = topics.copy()
    found = [grouped.get(str(qid), ([], 0)) for qid in out["qid"]]
    out[CANDIDATES] = [candidates for candidates, _ in found]
    out[RELEVANT] = [relevant for _, relevant in found]
    return out


def mixed_qids(topics: pd.DataFrame) -> set[str]:
    """The queries of judged topics with at least one relevant and one non-relevant candidate."""
    if CANDIDATES not in topics.columns or RELEVANT not in topics.columns:
        return set()
    return {str(qid) for qid, candidates, relevant in zip(topics["qid"], topics[CANDIDATES], topics[RELEVANT])
            if 0 < int(relevant) < len(candidates)}
