"""What the parse-tree features look like in relevant and non-relevant sentences: why the sentence model ranks as it does.

:func:`clique_statistics` compiles a query set as ``mrf_sentence`` does (every contiguous and
non-contiguous group of query terms), looks up each group's tree values in the judged sentences
where it co-occurs, and counts, per kind of group and relevance label: the co-occurrences, the
share where the group is connected (BoolSynR), within ``proximity`` links (BoolSynP), and the mean
closeness 1 / ((1 + dis)(1 + h)).  ``irgrid sentence-cliques`` prints it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..models import get_model
from ..retrieve import Scorer

GROUP_NAMES = {"SR": "contiguous", "PR": "non-contiguous"}


def clique_statistics(index, topics: pd.DataFrame, qrels: pd.DataFrame, parses,
                      point: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Per (group kind, relevance): judged sentences where a group co-occurs, and the means of its tree values."""
    model = get_model("mrf_sentence")
    point = model.check_point(dict({"lambda_sr": 0.5, "lambda_pr": 0.5}, **(point or {})))
    queries = Scorer(index).prepare(topics[["qid", "text"]], model, [point], parses=parses)
    label = {(str(q), str(d)): int(r) for q, d, r in zip(qrels["qid"], qrels["docno"], qrels["relevance"])}
    docnos = np.asarray(index.docnos, dtype=object)
    rows = []
    for q in range(len(queries)):
        qid = queries.qids[q]
        for feature in queries.query_terms(q):
            if feature.values is None:
                continue
            for i, docno in enumerate(docnos[feature.docids]):
                relevance = label.get((qid, str(docno)))
                if relevance is None:
                    continue
                rows.append((GROUP_NAMES[feature.group[:2]], int(relevance > 0), feature.values["connected"][i],
                             float(feature.values["span"][i] <= point["proximity"]), feature.values["closeness"][i]))
    frame = pd.DataFrame(rows, columns=["group", "relevant", "connected", "proximate", "closeness"])
    if frame.empty:
        return pd.DataFrame(columns=["group", "relevant", "cooccurrences", "connected", "proximate", "closeness"])
    summary = frame.groupby(["group", "relevant"]).agg(cooccurrences=("connected", "size"),
                                                       connected=("connected", "mean"),
                                                       proximate=("proximate", "mean"),
                                                       closeness=("closeness", "mean"))
    return summary.reset_index()
