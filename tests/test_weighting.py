"""Term-weighting models (bm25_rsj, mbm25, piv, inl2, tfidf): hand-computed scores and properties.

The references are an independent code path: plain Python (``math``) over the token lists, each
model's formula as its source writes it (docs/models.md). The models' scores go through the
Scorer (term_scores times qtf, numpy). bm25_rsj is also compared with bm25s's "robertson"
variant, and inl2 with Terrier's InL2 expression.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.errors import ConfigError
from irgrid.models import MODEL_FAMILIES, CollectionStatistics, QueryTerm, get_model
from irgrid.retrieve import Scorer, retrieve_grid
from tiny_index import TinyIndex

NEW_FAMILIES = ["bm25_rsj", "mbm25", "piv", "inl2", "tfidf"]


# N = 5, |C| = 19, avgdl = 3.8. 'the' is in 4 of 5 documents (df > N/2: negative RSJ idf);
# 'cat' (d1 tf 1, d3 tf 2) and 'dog' (d2, d3) in 2; 'fish' in 1.
DOCS = {
    "d1": "the cat sat on the mat".split(),
    "d2": "the dog".split(),
    "d3": "a cat and the dog the cat".split(),
    "d4": "fish".split(),
    "d5": "the the bird".split(),
}
N, AVGDL = 5, 19 / 5


def scores_of(family, docs, query, point):
    model = get_model(family)
    index = TinyIndex(docs)
    scorer = Scorer(index)
    (prepared,) = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": [query]}))
    scores = scorer.score(model, prepared, model.check_point(point))
    return {index.docnos[d]: float(s) for d, s in zip(prepared.candidates, scores)}


# ------------------------------------------------------------------ the independent reference

def reference_weight(family, point, tf, dl, df, n, avgdl, qtf):
    """The contribution of one matched query term, as the model's source writes it (math only)."""
    if family in ("bm25_rsj", "mbm25"):
        k1, b, k3 = point["k1"], point["b"], point["k3"]
        if family == "bm25_rsj":
            idf = math.log((n - df + 0.5) / (df + 0.5))        # Robertson-Sparck Jones
        else:
            idf = math.log((n + 1) / df)                       # pivoted-normalisation idf
        return idf * ((k1 + 1) * tf) / (k1 * ((1 - b) + b * dl / avgdl) + tf) * ((k3 + 1) * qtf) / (k3 + qtf)
    if family == "piv":
        s = point["s"]
        return qtf * (1 + math.log(1 + math.log(tf))) / ((1 - s) + s * dl / avgdl) * math.log((n + 1) / df)
    if family == "inl2":
        c = point["c"]
        tfn = tf * math.log2(1 + c * avgdl / dl)
        return qtf * tfn / (tfn + 1) * math.log2((n + 1) / (df + 0.5))
    if family == "tfidf":
        return qtf * (1 + math.log(tf)) * math.log(n / df)
    raise KeyError(family)


def reference_scores(family, docs, query, point):
    lengths = {docno: len(terms) for docno, terms in docs.items()}
    n = len(docs)
    avgdl = sum(lengths.values()) / n
    counts = Counter(query.split())
    out = {}
    for docno, terms in docs.items():
        matched = [t for t in counts if t in terms]
        if not matched:
            continue
        out[docno] = sum(
            reference_weight(family, point, terms.count(t), lengths[docno],
                             sum(t in d for d in docs.values()), n, avgdl, counts[t])
            for t in matched
        )
    return out


POINTS = {
    "bm25_rsj": [{}, {"k1": 1.2, "b": 0.75, "k3": 0.0}, {"k1": 0.0, "b": 1.0, "k3": 7.0},
                 {"k1": 2.0, "b": 0.0, "k3": 1e9}],
    "mbm25": [{}, {"k1": 0.5, "b": 0.3, "k3": 2.0}],
    "piv": [{}, {"s": 0.0}, {"s": 1.0}, {"s": 0.05}],
    "inl2": [{}, {"c": 0.1}, {"c": 7.0}],
    "tfidf": [{}],
}


@pytest.mark.parametrize("family", NEW_FAMILIES)
@pytest.mark.parametrize("query", ["cat", "cat cat dog the", "the fish", "dog bird the the"])
def test_scores_equal_textbook_formula(family, query):
    for point in POINTS[family]:
        full = get_model(family).check_point(point)
        ours = scores_of(family, DOCS, query, full)
        expected = reference_scores(family, DOCS, query, full)
        assert set(ours) == set(expected)
        for docno, value in expected.items():
            assert ours[docno] == pytest.approx(value, rel=1e-12, abs=1e-15), (family, point, query, docno)


# ------------------------------------------------------------------ hand-worked numbers

def test_bm25_rsj_hand_computed():
    # Query "cat cat dog the" on d3 = "a cat and the dog the cat" (|D| = 7, tf cat 2, dog 1, the 2).
    k1, b = 1.2, 0.75  # k3 = 1000 appears as 1001 / (1000 + qtf) below
    norm = k1 * ((1 - b) + b * 7 / 3.8)
    cat = math.log((5 - 2 + 0.5) / (2 + 0.5)) * (2.2 * 2) / (norm + 2) * (1001 * 2) / (1000 + 2)
    dog = math.log((5 - 2 + 0.5) / (2 + 0.5)) * (2.2 * 1) / (norm + 1) * (1001 * 1) / (1000 + 1)
    the = math.log((5 - 4 + 0.5) / (4 + 0.5)) * (2.2 * 2) / (norm + 2) * (1001 * 1) / (1000 + 1)
    assert the < 0
    scores = scores_of("bm25_rsj", DOCS, "cat cat dog the", {})  # defaults k1 1.2, b 0.75, k3 1000
    assert scores["d3"] == pytest.approx(cat + dog + the, rel=1e-12)


def test_bm25_rsj_term_in_more_than_half_the_documents_counts_negatively():
    # 'the' is in 4 of 5 documents: ln((5 - 4 + 0.5)/(4 + 0.5)) = ln(1/3) < 0.
    scores = scores_of("bm25_rsj", DOCS, "the", {})
    assert set(scores) == {"d1", "d2", "d3", "d5"}
    assert all(value < 0 for value in scores.values())
    # d2 = "the dog" (|D| = 2, tf 1):
    norm = 1.2 * (0.25 + 0.75 * 2 / 3.8)
    assert scores["d2"] == pytest.approx(math.log(1.5 / 4.5) * 2.2 / (norm + 1), rel=1e-12)
    # More occurrences make it worse: d5 ("the the bird", tf 2, |D| 3) has the larger tf part than
    # d2 ("the dog", tf 1, |D| 2), times the same negative idf.
    assert scores["d5"] < scores["d2"]
    # Adding 'the' to a query lowers the score of every document containing it (stop words hurt).
    with_the = scores_of("bm25_rsj", DOCS, "cat the", {})
    without = scores_of("bm25_rsj", DOCS, "cat", {})
    assert with_the["d1"] < without["d1"] and with_the["d3"] < without["d3"]
    # A term in exactly half the documents weighs 0; mbm25's pivoted idf never goes negative.
    half = {"x1": ["t"], "x2": ["t", "u"], "x3": ["u"], "x4": ["v"]}
    assert scores_of("bm25_rsj", half, "t", {}) == {"x1": 0.0, "x2": 0.0}
    assert all(value > 0 for value in scores_of("mbm25", DOCS, "the", {}).values())


def test_okapi_k3_query_part():
    # (k3 + 1) qtf / (k3 + qtf): k3 = 0 makes a repeated query term count once, a large k3 counts it qtf times.
    once = scores_of("bm25_rsj", DOCS, "cat", {"k3": 0.0})
    twice = scores_of("bm25_rsj", DOCS, "cat cat", {"k3": 0.0})
    assert twice == pytest.approx(once, rel=1e-12)
    once = scores_of("bm25_rsj", DOCS, "cat", {"k3": 1e9})
    twice = scores_of("bm25_rsj", DOCS, "cat cat", {"k3": 1e9})
    assert {d: v / 2 for d, v in twice.items()} == pytest.approx(once, rel=1e-8)
    middle = scores_of("mbm25", DOCS, "cat cat cat", {"k3": 3.0})
    single = scores_of("mbm25", DOCS, "cat", {"k3": 3.0})
    assert middle["d1"] == pytest.approx(single["d1"] * (4 * 3) / (3 + 3), rel=1e-12)


def test_mbm25_hand_computed():
    # Query "fish" on d4 = "fish" (|D| = 1, df 1): idf ln(6/1).
    k1, b = 1.2, 0.75
    expected = math.log(6 / 1) * (2.2 * 1) / (k1 * ((1 - b) + b * 1 / 3.8) + 1) * (1001 * 1) / (1000 + 1)
    assert scores_of("mbm25", DOCS, "fish", {}) == {"d4": pytest.approx(expected, rel=1e-12)}


def test_piv_hand_computed():
    # Query "cat cat dog" on d3 (|D| = 7): cat tf 2 (qtf 2), dog tf 1; s = 0.2.
    norm = 0.8 + 0.2 * 7 / 3.8
    cat = 2 * (1 + math.log(1 + math.log(2))) / norm * math.log(6 / 2)
    dog = 1 * (1 + math.log(1 + math.log(1))) / norm * math.log(6 / 2)
    assert scores_of("piv", DOCS, "cat cat dog", {"s": 0.2})["d3"] == pytest.approx(cat + dog, rel=1e-12)


def test_inl2_equals_terrier_expression():
    # Terrier's InL2.score (terrier-org/terrier-core, src/core/org/terrier/matching/models/InL2.java):
    #     double TF = tf * WeightingModelLibrary.log(1.0d + (c * averageDocumentLength) / docLength);
    #     double NORM = 1d / (TF + 1d);
    #     return TF * i.idfDFR(documentFrequency) * keyFrequency * NORM;
    # with Idf.idfDFR(d) = Math.log((numberOfDocuments+1)/(d+0.5)) * LOG_2_OF_E (Idf.java) and
    # WeightingModelLibrary.log(d) = Math.log(d) * LOG_2_OF_E; keyFrequency = occurrences in the query.
    log_2_of_e = 1.0 / math.log(2.0)

    def terrier_inl2(tf, doc_length, df, num_docs, avg_doc_length, c, key_frequency):
        TF = tf * (math.log(1.0 + (c * avg_doc_length) / doc_length) * log_2_of_e)
        NORM = 1.0 / (TF + 1.0)
        idf_dfr = math.log((num_docs + 1) / (df + 0.5)) * log_2_of_e
        return TF * idf_dfr * key_frequency * NORM

    for c in (1.0, 0.3, 5.0):
        scores = scores_of("inl2", DOCS, "cat cat dog the", {"c": c})
        # d3: cat tf 2 (qtf 2, df 2), dog tf 1 (qtf 1, df 2), the tf 2 (qtf 1, df 4); |D| = 7.
        expected = (terrier_inl2(2, 7, 2, 5, 3.8, c, 2) + terrier_inl2(1, 7, 2, 5, 3.8, c, 1)
                    + terrier_inl2(2, 7, 4, 5, 3.8, c, 1))
        assert scores["d3"] == pytest.approx(expected, rel=1e-12)
        # d2 = "the dog": |D| = 2.
        expected = terrier_inl2(1, 2, 2, 5, 3.8, c, 1) + terrier_inl2(1, 2, 4, 5, 3.8, c, 1)
        assert scores["d2"] == pytest.approx(expected, rel=1e-12)


def test_tfidf_hand_computed():
    # Query "cat the" on d3: cat tf 2 df 2, the tf 2 df 4.
    expected = (1 + math.log(2)) * math.log(5 / 2) + (1 + math.log(2)) * math.log(5 / 4)
    assert scores_of("tfidf", DOCS, "cat the", {})["d3"] == pytest.approx(expected, rel=1e-12)
    # A term in every document weighs 0 (never negative).
    everywhere = {"x1": ["t"], "x2": ["t", "t"]}
    assert scores_of("tfidf", everywhere, "t", {}) == {"x1": 0.0, "x2": 0.0}


# ------------------------------------------------------------------ bm25s, method="robertson"

def test_bm25_rsj_agrees_with_bm25s_robertson():
    """bm25s's "robertson" variant (bm25s/scoring.py: _score_idf_robertson, _score_tfc_robertson) scores

        ln((N - df + 0.5)/(df + 0.5)) * tf / (k1 ((1 - b) + b |D|/avgdl) + tf)

    i.e. our idf and tf part without the (k1 + 1) factor and without a k3 part, and it clamps the
    idf at 0 (``allow_negative=False``: inner < 1 -> ln 1). So for single-occurrence query terms
    with df <= N/2 (k3 part = (k3+1)/(k3+1) = 1), ours = (k1 + 1) * bm25s; for 'the' (df > N/2)
    bm25s gives 0 where ours is negative.
    """
    bm25s = pytest.importorskip("bm25s")
    corpus = list(DOCS.values())
    docnos = list(DOCS)
    for k1, b in [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0)]:
        retriever = bm25s.BM25(method="robertson", k1=k1, b=b)
        retriever.index(corpus, show_progress=False)
        for query in ["cat", "cat dog", "dog fish bird", "sat mat dog"]:
            theirs = retriever.get_scores(query.split()).astype(np.float64)
            ours = scores_of("bm25_rsj", DOCS, query, {"k1": k1, "b": b, "k3": 1000.0})
            for i, docno in enumerate(docnos):
                if docno in ours:
                    assert ours[docno] == pytest.approx((k1 + 1) * theirs[i], rel=1e-5)
                else:
                    assert theirs[i] == 0.0
        # df > N/2: bm25s clamps the idf to 0, we keep it negative.
        theirs = retriever.get_scores(["the"])
        ours = scores_of("bm25_rsj", DOCS, "the", {"k1": k1, "b": b})
        assert np.all(theirs == 0.0)
        assert all(value < 0 for value in ours.values())


# ------------------------------------------------------------------ properties (hypothesis)

def term_weight(family, point, tf, dl, df, n, avgdl, qtf=1):
    """One term's contribution (term_scores times qtf, as the scorer applies it) for one document."""
    model = get_model(family)
    term = QueryTerm("t", qtf, df, df, np.array([0], dtype=np.int32), np.array([tf], dtype=np.int32))
    stats = CollectionStatistics(num_docs=n, total_length=int(round(avgdl * n)), avg_doc_length=avgdl)
    scores = model.term_scores(term, np.array([dl], dtype=np.float64), np.array([1.0]), stats,
                               model.check_point(point))
    assert scores.shape == (1,)
    return qtf * float(scores[0])


def parameter_points(family):
    """Any point inside the family's declared ranges (bounds included where admissible)."""
    strategies = {}
    for parameter in MODEL_FAMILIES[family].parameters:
        strategies[parameter.name] = st.floats(
            parameter.low, parameter.high,
            exclude_min=not parameter.low_inclusive, exclude_max=not parameter.high_inclusive,
            allow_nan=False, allow_infinity=False,
        )
    return st.fixed_dictionaries(strategies)


collections = st.integers(1, 10**8).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(1, n), st.floats(1.0, 1e4))  # N, df <= N, avgdl
)


@pytest.mark.parametrize("family", NEW_FAMILIES)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_weights_finite_for_any_pseudo_document(family, data):
    """The axiom analysis scores pseudo-documents of any length >= 1 with tf >= 1."""
    point = data.draw(parameter_points(family))
    n, df, avgdl = data.draw(collections)
    dl = data.draw(st.integers(1, 10**7))
    tf = data.draw(st.integers(1, dl))
    qtf = data.draw(st.integers(1, 100))
    value = term_weight(family, point, tf, dl, df, n, avgdl, qtf)
    assert math.isfinite(value)
    # and equals the reference formula
    expected = reference_weight(family, get_model(family).check_point(point), tf, dl, df, n, avgdl, qtf)
    assert value == pytest.approx(expected, rel=1e-9, abs=1e-300)


moderate = st.tuples(st.integers(2, 10**6), st.floats(1.0, 1000.0)).flatmap(
    lambda na: st.tuples(st.just(na[0]), st.integers(1, na[0]), st.just(na[1]))
)


@settings(max_examples=300, deadline=None)
@given(stats=moderate, tf=st.integers(1, 200), dl=st.integers(1, 10**4),
       s=st.floats(0.01, 1.0), c=st.floats(0.1, 10.0))
def test_piv_and_inl2_increase_with_tf_and_decrease_with_length(stats, tf, dl, s, c):
    n, df, avgdl = stats
    for family, point in (("piv", {"s": s}), ("inl2", {"c": c})):
        w = term_weight(family, point, tf, dl, df, n, avgdl)
        assert w > 0
        assert term_weight(family, point, tf + 1, dl, df, n, avgdl) > w
        assert term_weight(family, point, tf, dl + 1, df, n, avgdl) < w


@settings(max_examples=300, deadline=None)
@given(stats=moderate, tf=st.integers(1, 200), dl=st.integers(1, 10**4),
       k1=st.floats(0.01, 100.0), b=st.floats(0.01, 1.0), k3=st.floats(0.0, 1e6))
def test_okapi_tf_and_length_direction_follow_the_idf_sign(stats, tf, dl, k1, b, k3):
    n, df, avgdl = stats
    point = {"k1": k1, "b": b, "k3": k3}
    # mbm25's idf ln((N+1)/df) is positive: more tf helps, more length hurts.
    w = term_weight("mbm25", point, tf, dl, df, n, avgdl)
    assert w > 0
    assert term_weight("mbm25", point, tf + 1, dl, df, n, avgdl) > w
    assert term_weight("mbm25", point, tf, dl + 1, df, n, avgdl) < w
    # bm25_rsj follows the sign of its idf: for df > N/2 every extra occurrence LOWERS the score
    # and a longer document scores higher (both constraint violations with stop words kept).
    w = term_weight("bm25_rsj", point, tf, dl, df, n, avgdl)
    more_tf = term_weight("bm25_rsj", point, tf + 1, dl, df, n, avgdl)
    longer = term_weight("bm25_rsj", point, tf, dl + 1, df, n, avgdl)
    if 2 * df < n:
        assert w > 0 and more_tf > w and longer < w
    elif 2 * df > n:
        assert w < 0 and more_tf < w and longer > w
    else:
        assert w == 0.0


@settings(max_examples=200, deadline=None)
@given(stats=moderate, tf=st.integers(1, 10**4), dl=st.integers(1, 10**5))
def test_tfidf_grows_with_tf_and_ignores_length(stats, tf, dl):
    n, df, avgdl = stats
    w = term_weight("tfidf", {}, tf, dl, df, n, avgdl)
    assert w >= 0
    if df < n:
        assert term_weight("tfidf", {}, tf + 1, dl, df, n, avgdl) > w
    assert term_weight("tfidf", {}, tf, dl + 7, df, n, avgdl) == w


@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_integer_length_arrays_give_the_same_scores(family):
    # The axiom analysis may hand term_scores integer arrays; the Scorer hands float64.
    model = get_model(family)
    point = model.check_point({})
    term = QueryTerm("t", 2, 3, 9, np.array([0, 1, 2], dtype=np.int32), np.array([1, 2, 5], dtype=np.int32))
    stats = CollectionStatistics(num_docs=10, total_length=40, avg_doc_length=4.0)
    as_int = model.term_scores(term, np.array([1, 3, 12], dtype=np.int32), np.array([1, 2, 3], dtype=np.int32),
                               stats, point)
    as_float = model.term_scores(term, np.array([1.0, 3.0, 12.0]), np.array([1.0, 2.0, 3.0]), stats, point)
    assert np.array_equal(as_int, as_float)
    assert model.document_scores(np.array([1.0]), np.array([1.0]), [term], stats, point) is None


# ------------------------------------------------------------------ parameters and registry

def test_families_registered_with_declared_parameters():
    for family in ["bm25", "ql_jm", "ql_dirichlet", "ql_ad", "ql_two_stage", "ql_gjm1", "ql_gjm2", "kl_ml"]:
        assert family in MODEL_FAMILIES  # the existing families stay
    assert get_model("bm25_rsj").check_point({}) == {"k1": 1.2, "b": 0.75, "k3": 1000.0}
    assert get_model("mbm25").check_point({}) == {"k1": 1.2, "b": 0.75, "k3": 1000.0}
    assert get_model("piv").check_point({}) == {"s": 0.2}
    assert get_model("inl2").check_point({}) == {"c": 1.0}
    assert get_model("tfidf").check_point({}) == {}
    for family in NEW_FAMILIES:
        assert all("_" not in name for name in MODEL_FAMILIES[family].parameter_names())  # grid path separator


@pytest.mark.parametrize(
    "family, point",
    [
        ("bm25_rsj", {"b": 1.5}), ("bm25_rsj", {"b": -0.1}), ("bm25_rsj", {"k1": -1.0}),
        ("bm25_rsj", {"k1": 101.0}), ("bm25_rsj", {"k3": -1.0}),
        ("mbm25", {"k3": -0.5}), ("mbm25", {"b": 2.0}),
        ("piv", {"s": 1.2}), ("piv", {"s": -0.2}),
        ("inl2", {"c": 0.0}), ("inl2", {"c": -1.0}),
    ],
)
def test_out_of_range_parameters_are_rejected(family, point):
    with pytest.raises(ConfigError, match="outside"):
        get_model(family).check_point(point)


def test_unknown_parameters_are_rejected():
    with pytest.raises(ConfigError, match="no parameter 's'"):
        get_model("tfidf").check_point({"s": 0.2})
    with pytest.raises(ConfigError, match="no parameter 'b'"):
        get_model("inl2").check_point({"b": 0.5})


def test_grid_runs_equal_single_point_runs():
    index = TinyIndex(DOCS)
    topics = pd.DataFrame({"qid": ["1", "2"], "text": ["cat cat dog the", "fish bird"]})
    points = [{"k1": 1.2, "b": 0.75, "k3": 1000.0}, {"k1": 0.5, "b": 0.2, "k3": 0.0}]
    runs = retrieve_grid(index, topics, "bm25_rsj", points)
    for point, run in zip(points, runs):
        (single,) = retrieve_grid(index, topics, "bm25_rsj", [point])
        pd.testing.assert_frame_equal(run, single)
    # fish in d4 (|D| 1) and bird in d5 (|D| 3) have the same df: the shorter document wins.
    first = runs[0]
    assert list(first[first["qid"] == "2"]["docno"]) == ["d4", "d5"]


# ------------------------------------------------------------------ ES (the constraint paper's fifth function)

def es_weight(tf, dl, cf, df, n, avgdl, k, c, p):
    """ES as the copy citing Cummins's chapter writes it, with the disputed length term k + c (|D|/avgdl)^p."""
    return tf / (tf + k + c * (dl / avgdl) ** p) * math.sqrt(cf ** 3 * n / df ** 4)


@pytest.mark.parametrize("point", [
    {},                                   # tf / (tf + 0.45 + sqrt(|D|/avgdl)): the defaults
    {"k": 0.0, "c": 0.45, "p": 1.0},      # tf / (tf + 0.45 |D|/avgdl): the other copy
    {"k": 0.0, "c": 0.45, "p": 0.5},      # tf / (tf + 0.45 sqrt(|D|/avgdl))
])
def test_es_hand_computed(point):
    full = get_model("es").check_point(point)
    # query "cat the" on d3 (|D| = 7): cat tf 2, df 2, cf 3 (d1 1, d3 2); the tf 2, df 4, cf 7 (d1 2, d2 1, d3 2, d5 2)
    expected = (es_weight(2, 7, 3, 2, N, AVGDL, full["k"], full["c"], full["p"])
                + es_weight(2, 7, 7, 4, N, AVGDL, full["k"], full["c"], full["p"]))
    assert scores_of("es", DOCS, "cat the", point)["d3"] == pytest.approx(expected, rel=1e-12)
    if not point:
        # the defaults written out: 2 / (2.45 + sqrt(7 / 3.8)) (sqrt(27 * 5 / 16) + sqrt(343 * 5 / 256))
        local = 2 / (2.45 + math.sqrt(7 / 3.8))
        assert expected == pytest.approx(local * (math.sqrt(27 * 5 / 16) + math.sqrt(343 * 5 / 256)), rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 10**6), data=st.data(), avgdl=st.floats(1.0, 1000.0), tf=st.integers(1, 200),
       dl=st.integers(1, 10**4), point=parameter_points("es"))
def test_es_is_finite_grows_with_tf_and_does_not_grow_with_length(n, data, avgdl, tf, dl, point):
    df = data.draw(st.integers(1, n))
    cf = data.draw(st.integers(df, 10 * df))
    model = get_model("es")
    stats = CollectionStatistics(num_docs=n, total_length=int(round(avgdl * n)), avg_doc_length=avgdl)

    def weight(tf_, dl_):
        term = QueryTerm("t", 1, df, cf, np.array([0], dtype=np.int32), np.array([tf_], dtype=np.int32))
        return float(model.term_scores(term, np.array([dl_], dtype=np.float64), np.array([1.0]), stats, point)[0])

    value = weight(tf, dl)
    assert math.isfinite(value) and value > 0
    assert value == pytest.approx(es_weight(tf, dl, cf, df, n, avgdl, point["k"], point["c"], point["p"]), rel=1e-9)
    assert weight(tf + 1, dl) >= value * (1 - 1e-12)
    assert weight(tf, dl + 1) <= value * (1 + 1e-12)
