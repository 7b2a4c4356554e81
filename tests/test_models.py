"""Model scores against hand-computed values on tiny made-up collections."""

import math

import numpy as np
import pytest

from irgrid.errors import ConfigError
from irgrid.models import BM25, QLDirichlet, get_model
from irgrid.retrieve import Scorer
from tiny_index import TinyIndex

DOCS = {
    "d1": "a b a c".split(),
    "d2": "b c c".split(),
    "d3": "a d".split(),
    "d4": "e e e e e".split(),
}


def scores_of(model, index, query, point):
    import pandas as pd

    scorer = Scorer(index)
    (prepared,) = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": [query]}))
    scores = scorer.score(model, prepared, model.check_point(point))
    return {index.docnos[d]: s for d, s in zip(prepared.candidates, scores)}


def test_ql_dirichlet_equals_hand_computed_log_likelihood():
    index = TinyIndex(DOCS)
    mu = 2.0
    total = 14  # collection length
    p = {"a": 3 / total, "c": 3 / total}
    scores = scores_of(QLDirichlet(), index, "a c", {"mu": mu})

    def loglik(tf_a, tf_c, length):
        return math.log((tf_a + mu * p["a"]) / (length + mu)) + math.log((tf_c + mu * p["c"]) / (length + mu))

    assert scores["d1"] == pytest.approx(loglik(2, 1, 4), rel=1e-12)
    assert scores["d2"] == pytest.approx(loglik(0, 2, 3), rel=1e-12)
    assert scores["d3"] == pytest.approx(loglik(1, 0, 2), rel=1e-12)
    assert "d4" not in scores  # matches no query term: not a candidate


def test_bm25_equals_hand_computed_lucene_formula():
    index = TinyIndex(DOCS)
    k1, b = 1.2, 0.75
    avgdl = 14 / 4
    idf_a = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))
    scores = scores_of(BM25(), index, "a a", {"k1": k1, "b": b})
    tf_part = 2 / (2 + k1 * (1 - b + b * 4 / avgdl))
    # The query holds 'a' twice: its clause counts twice, as Anserini's boosted clause does.
    assert scores["d1"] == pytest.approx(2 * idf_a * tf_part, rel=1e-12)


def test_parameters_are_declared_and_checked():
    assert get_model("bm25").check_point({"k1": 1.2}) == {"k1": 1.2, "b": 0.4}
    with pytest.raises(ConfigError, match="outside"):
        BM25.check_point({"b": 1.5})
    with pytest.raises(ConfigError, match="no parameter 'lambda'"):
        QLDirichlet.check_point({"lambda": 0.5})
    with pytest.raises(ConfigError, match="unknown model family"):
        get_model("bm26")


def test_ties_break_by_docno_and_depth_cuts():
    docs = {"z": ["x"], "m": ["x"], "a": ["x"], "b": ["x", "x", "y"]}
    index = TinyIndex(docs)
    import pandas as pd

    scorer = Scorer(index)
    queries = scorer.prepare(pd.DataFrame({"qid": ["1"], "text": ["x"]}))
    run = scorer.run(BM25(), queries, BM25.check_point({"b": 0.0}), depth=3)
    # b's tf 2 wins; the three one-occurrence documents tie and go by docno: a, m (z is cut).
    assert list(run["docno"]) == ["b", "a", "m"]
    assert list(run["rank"]) == [1, 2, 3]


def test_a_replaced_query_term_is_dataclasses_replace_without_touching_the_original():
    # Scorer._flatten copies every query term with its postings swapped for views (replaced, not
    # dataclasses.replace, for speed): the copy must have replace's fields, the original its own
    from dataclasses import fields, replace

    from irgrid.models.base import QueryFeature, QueryTerm, replaced

    term = QueryTerm("a", 1, 2, 3, np.array([4, 5], np.int32), np.array([1, 2], np.int32))
    feature = QueryFeature("#1(a b)", 2, 3, 4, np.array([1, 2], np.int32), np.array([1, 1], np.int32),
                           feature="f", group="P0", group_size=2)
    for original in (term, feature):
        docids, tfs = np.array([7], np.int32), np.array([9], np.int32)
        got, expected = replaced(original, docids=docids, tfs=tfs), replace(original, docids=docids, tfs=tfs)
        assert type(got) is type(original) and got is not original
        assert all(getattr(got, f.name) is getattr(expected, f.name) for f in fields(original))
        assert original.docids.tolist() != [7] and original.tfs.tolist() != [9]
