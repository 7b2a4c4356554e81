"""Language-model smoothing: scores against log-likelihoods counted directly from token lists.

The reference (``direct_score``) is an independent code path: plain Python over the query
tokens, the textbook p_s(t|D) of each model, math.log. The models' scores go through the
Scorer (term_scores / document_scores split, numpy), on the TinyIndex double and on a real
index built with build_index.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrid.analysis import Analyzer
from irgrid.errors import ConfigError
from irgrid.models import MODEL_FAMILIES, get_model, smoothed_probabilities
from irgrid.retrieve import Scorer, retrieve_grid
from tiny_index import TinyIndex

DOCS = {
    "d1": "a b a c".split(),
    "d2": "b c c".split(),
    "d3": "a d".split(),
    "d4": "e e e e e".split(),
    "d5": "c a c a c b".split(),
}

LM_FAMILIES = ["ql_jm", "ql_dirichlet", "ql_ad", "ql_two_stage", "ql_gjm1", "ql_gjm2", "kl_ml"]
POINTS = {
    "ql_jm": [{"lambda": 0.1}, {"lambda": 0.7}, {"lambda": 1.0}],
    "ql_dirichlet": [{"mu": 2.0}, {"mu": 1000.0}],
    "ql_ad": [{"delta": 0.1}, {"delta": 0.7}, {"delta": 0.999}],
    "ql_two_stage": [{"mu": 2.0, "lambda": 0.3}, {"mu": 500.0, "lambda": 0.0}, {"mu": 3.0, "lambda": 1.0}],
    "ql_gjm1": [{"mu": 2.0}, {"mu": 1000.0}],
    "ql_gjm2": [{"mu": 2.0}, {"mu": 1000.0}],
    "kl_ml": [{"mu": 2.0}, {"mu": 1000.0}],
}


# ------------------------------------------------------------------ the independent reference


def textbook_probability(family: str, point: dict, tf: int, dl: int, du: int, p: float) -> float:
    """p_s(t|D) as the papers write it (Zhai & Lafferty 2001/2002; the GJM-2 paper)."""
    if family == "ql_jm":
        lam = point["lambda"]
        return (1 - lam) * tf / dl + lam * p
    if family in ("ql_dirichlet", "kl_ml"):
        mu = point["mu"]
        return (tf + mu * p) / (dl + mu)
    if family == "ql_ad":
        delta = point["delta"]
        return max(tf - delta, 0) / dl + delta * du / dl * p
    if family == "ql_two_stage":
        mu, lam = point["mu"], point["lambda"]
        return (1 - lam) * (tf + mu * p) / (dl + mu) + lam * p
    if family == "ql_gjm1":
        mu = point["mu"]
        return dl / (dl + mu) * tf / dl + mu / (dl + mu) * p
    if family == "ql_gjm2":
        mu = point["mu"]
        return du / (du + mu) * tf / dl + mu / (du + mu) * p
    raise AssertionError(family)


def direct_score(family: str, point: dict, docs: dict[str, list[str]], docno: str, query: list[str]) -> float:
    """log P(q|D) (kl_ml: divided by |q|), looping over the query tokens."""
    collection = [token for tokens in docs.values() for token in tokens]
    doc = docs[docno]
    kept = [token for token in query if token in collection]  # absent from the collection: dropped
    total = 0.0
    for token in kept:
        p = collection.count(token) / len(collection)
        total += math.log(textbook_probability(family, point, doc.count(token), len(doc), len(set(doc)), p))
    return total / len(kept) if family == "kl_ml" else total


def scores_of(index, family: str, query: str, point: dict) -> dict[str, float]:
    model = get_model(family)
    scorer = Scorer(index)
    (prepared,) = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": [query]}))
    scores = scorer.score(model, prepared, model.check_point(point))
    return {index.docnos[d]: float(s) for d, s in zip(prepared.candidates, scores)}


def close(a: float, b: float) -> bool:
    # 1e-12 relative; the absolute 1e-12 only matters for a log-likelihood within 1e-12 of 0
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# ------------------------------------------------------------------ hand-sized checks


@pytest.mark.parametrize("family", LM_FAMILIES)
def test_scores_equal_direct_log_likelihood(family):
    index = TinyIndex(DOCS)
    for point in POINTS[family]:
        for query in ["a c", "a a c zzz", "b d", "c c c a b d e"]:
            scores = scores_of(index, family, query, point)
            tokens = query.split()
            expected_candidates = {d for d, toks in DOCS.items() if set(toks) & set(tokens)}
            assert set(scores) == expected_candidates
            for docno, score in scores.items():
                assert score == pytest.approx(direct_score(family, point, DOCS, docno, tokens), rel=1e-12), (
                    family, point, query, docno)


def test_ql_jm_by_hand():
    # d1 = a b a c (|D| = 4), |C| = 20, cf(a) = 5, cf(c) = 6, lambda = 0.3 (collection weight)
    index = TinyIndex(DOCS)
    scores = scores_of(index, "ql_jm", "a c", {"lambda": 0.3})
    expected = math.log(0.7 * 2 / 4 + 0.3 * 5 / 20) + math.log(0.7 * 1 / 4 + 0.3 * 6 / 20)
    assert scores["d1"] == pytest.approx(expected, rel=1e-12)


def test_ql_ad_by_hand():
    # d5 = c a c a c b: |D| = 6, |D|u = 3; delta = 0.5, so the collection weight is 0.5*3/6 = 0.25
    index = TinyIndex(DOCS)
    scores = scores_of(index, "ql_ad", "a d", {"delta": 0.5})
    expected = math.log(1.5 / 6 + 0.25 * 5 / 20) + math.log(0.25 * 1 / 20)
    assert scores["d5"] == pytest.approx(expected, rel=1e-12)


def test_ql_gjm2_by_hand():
    # d4 = e e e e e: |D| = 5, |D|u = 1; mu = 4: lambda_D = 4/5, ML weight 1/5; p(e|C) = 5/20
    index = TinyIndex(DOCS)
    scores = scores_of(index, "ql_gjm2", "e", {"mu": 4.0})
    assert scores["d4"] == pytest.approx(math.log(1 / 5 * 5 / 5 + 4 / 5 * 5 / 20), rel=1e-12)
    # not (tf + mu p)/(|D|u + mu) = (5 + 1)/5 > 1
    assert scores["d4"] < 0


def test_parameter_ranges_reject_bad_values():
    bad = {
        "ql_jm": [{"lambda": 0.0}, {"lambda": -0.1}, {"lambda": 1.01}],
        "ql_dirichlet": [{"mu": 0.0}, {"mu": -5.0}],
        "ql_ad": [{"delta": 0.0}, {"delta": 1.0}, {"delta": 1.5}],
        "ql_two_stage": [{"mu": 0.0}, {"lambda": -0.01}, {"lambda": 1.2}],
        "ql_gjm1": [{"mu": 0.0}, {"mu": -1.0}],
        "ql_gjm2": [{"mu": 0.0}, {"mu": -1.0}],
        "kl_ml": [{"mu": 0.0}],
    }
    for family, points in bad.items():
        model = MODEL_FAMILIES[family]
        model.check_point({})  # the defaults are admissible
        for point in points:
            with pytest.raises(ConfigError, match="outside"):
                model.check_point(point)
        with pytest.raises(ConfigError, match="no parameter"):
            model.check_point({"k1": 1.0})


def test_families_and_parameters_registered():
    declared = {family: MODEL_FAMILIES[family].parameter_names() for family in LM_FAMILIES}
    assert declared == {
        "ql_jm": ["lambda"],
        "ql_dirichlet": ["mu"],
        "ql_ad": ["delta"],
        "ql_two_stage": ["mu", "lambda"],
        "ql_gjm1": ["mu"],
        "ql_gjm2": ["mu"],
        "kl_ml": ["mu"],
    }


def test_gjm1_is_not_computed_by_dirichlet():
    """The identity test below compares two computations, not one."""
    from irgrid.models import QLGJM1, QLDirichlet

    assert not issubclass(QLGJM1, QLDirichlet)
    assert QLGJM1.term_scores is not QLDirichlet.term_scores
    assert QLGJM1.document_scores is not QLDirichlet.document_scores


def test_jm_lambda_one_gives_equal_scores_and_docno_order():
    index = TinyIndex(DOCS)
    scores = scores_of(index, "ql_jm", "a c b", {"lambda": 1.0})
    collection_only = math.log(5 / 20) + math.log(6 / 20) + math.log(3 / 20)  # cf a, c, b = 5, 6, 3
    assert len(set(scores.values())) == 1
    assert next(iter(scores.values())) == pytest.approx(collection_only, rel=1e-12)
    run = retrieve_grid(index, pd.DataFrame({"qid": ["1"], "text": ["a c b"]}), "ql_jm", [{"lambda": 1.0}])[0]
    assert list(run["docno"]) == ["d1", "d2", "d3", "d5"]  # all tied: docno order


def test_smoothed_probabilities_rejects_empty_document():
    with pytest.raises(ValueError):
        smoothed_probabilities(get_model("ql_jm"), {}, [0, 0], 0, 0, [0.5, 0.5])


# ------------------------------------------------------------------ property tests

VOCAB = "abcdefg"
doc_strategy = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12)
collection_strategy = st.lists(doc_strategy, min_size=1, max_size=7).map(
    lambda docs: {f"d{i}": tokens for i, tokens in enumerate(docs)}
)
query_strategy = st.lists(st.sampled_from(VOCAB + "xyz"), min_size=1, max_size=7)  # x, y, z never indexed
mu_strategy = st.floats(0.01, 1e4)


def random_point(family: str, data) -> dict:
    if family == "ql_jm":
        return {"lambda": data.draw(st.floats(1e-6, 1.0), label="lambda")}
    if family == "ql_ad":
        return {"delta": data.draw(st.floats(1e-3, 0.999), label="delta")}
    if family == "ql_two_stage":
        return {"mu": data.draw(mu_strategy, label="mu"), "lambda": data.draw(st.floats(0.0, 1.0), label="lambda")}
    return {"mu": data.draw(mu_strategy, label="mu")}


def topics_of(queries: list[list[str]]) -> pd.DataFrame:
    return pd.DataFrame({"qid": [str(i) for i in range(len(queries))], "text": [" ".join(q) for q in queries]})


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(docs=collection_strategy, query=query_strategy, family=st.sampled_from(LM_FAMILIES), data=st.data())
def test_random_scores_equal_direct_log_likelihood(docs, query, family, data):
    point = random_point(family, data)
    scores = scores_of(TinyIndex(docs), family, " ".join(query), point)
    for docno, score in scores.items():
        assert close(score, direct_score(family, point, docs, docno, query)), (docno, score)


@PROPERTY
@given(docs=collection_strategy, query=query_strategy, mu=mu_strategy)
def test_gjm1_equals_dirichlet(docs, query, mu):
    index = TinyIndex(docs)
    gjm1 = scores_of(index, "ql_gjm1", " ".join(query), {"mu": mu})
    dirichlet = scores_of(index, "ql_dirichlet", " ".join(query), {"mu": mu})
    assert list(gjm1) == list(dirichlet)
    assert np.allclose(list(gjm1.values()), list(dirichlet.values()), rtol=1e-12, atol=1e-12)


@PROPERTY
@given(
    docs=st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=7, unique=True), min_size=1, max_size=7).map(
        lambda docs: {f"d{i}": tokens for i, tokens in enumerate(docs)}
    ),
    query=query_strategy,
    mu=mu_strategy,
)
def test_gjm2_equals_dirichlet_when_all_terms_distinct(docs, query, mu):
    index = TinyIndex(docs)
    assert (index.doc_lengths == index.doc_unique_terms).all()
    gjm2 = scores_of(index, "ql_gjm2", " ".join(query), {"mu": mu})
    dirichlet = scores_of(index, "ql_dirichlet", " ".join(query), {"mu": mu})
    assert list(gjm2) == list(dirichlet)
    assert np.allclose(list(gjm2.values()), list(dirichlet.values()), rtol=1e-12, atol=1e-12)


@PROPERTY
@given(docs=collection_strategy, queries=st.lists(query_strategy, min_size=1, max_size=4), mu=mu_strategy)
def test_kl_ml_ranks_as_ql_dirichlet_and_scores_ql_over_query_length(docs, queries, mu):
    index = TinyIndex(docs)
    kl, ql = retrieve_grid(index, topics_of(queries), "kl_ml", [{"mu": mu}])[0], retrieve_grid(
        index, topics_of(queries), "ql_dirichlet", [{"mu": mu}]
    )[0]
    # Rank-equivalent: the same documents per query, and in kl_ml's order the query likelihoods
    # never rise. (Exact equality of the orders would fail on near-ties: dividing two scores
    # one ulp apart by |Q| can make them equal, and the docno tie-break then decides.)
    assert kl.groupby("qid")["docno"].apply(set).to_dict() == ql.groupby("qid")["docno"].apply(set).to_dict()
    ql_score = dict(zip(zip(ql["qid"], ql["docno"]), ql["score"]))
    for qid, ranking in kl.groupby("qid", sort=False):
        likelihoods = np.array([ql_score[(qid, docno)] for docno in ranking["docno"]])
        assert (np.diff(likelihoods) <= 1e-12 * np.abs(likelihoods[1:]).clip(min=1.0)).all()
    kept_length = {
        str(i): sum(1 for token in q if any(token in d for d in docs.values())) for i, q in enumerate(queries)
    }
    expected = ql["score"].to_numpy() / ql["qid"].map(kept_length).to_numpy()
    assert np.allclose(kl["score"].to_numpy(), expected, rtol=1e-12, atol=1e-12)


@PROPERTY
@given(docs=collection_strategy, family=st.sampled_from(LM_FAMILIES), data=st.data())
def test_smoothed_model_is_a_distribution(docs, family, data):
    point = random_point(family, data)
    vocabulary = sorted({token for tokens in docs.values() for token in tokens})
    collection = Counter(token for tokens in docs.values() for token in tokens)
    total = sum(collection.values())
    docno = data.draw(st.sampled_from(sorted(docs)), label="docno")
    doc = docs[docno]
    tf = [doc.count(term) for term in vocabulary]
    probs = [collection[term] / total for term in vocabulary]
    model = get_model(family)
    p_s = smoothed_probabilities(model, point, tf, len(doc), len(set(doc)), probs)
    assert (p_s > 0).all()
    assert math.isclose(float(p_s.sum()), 1.0, rel_tol=1e-12)
    # the helper is the same p_s the scores are the log of
    for term, value in zip(vocabulary, p_s):
        expected = textbook_probability(family, point, doc.count(term), len(doc), len(set(doc)), collection[term] / total)
        assert math.isclose(value, expected, rel_tol=1e-12)
    # and the scorer's split (term_scores + document_scores) adds up to sum_t log p_s
    query = data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=6), label="query")
    scores = scores_of(TinyIndex(docs), family, " ".join(query), point)
    if docno in scores:
        log_likelihood = sum(math.log(p_s[vocabulary.index(token)]) for token in query)
        if family == "kl_ml":
            log_likelihood /= len(query)
        assert close(scores[docno], log_likelihood)


@PROPERTY
@given(docs=collection_strategy, query=query_strategy, lam=st.floats(1e-6, 1.0))
def test_jm_collection_weight_one_means_equal_scores(docs, query, lam):
    index = TinyIndex(docs)
    ones = scores_of(index, "ql_jm", " ".join(query), {"lambda": 1.0})
    assert len(set(ones.values())) <= 1
    # for any lambda, p_s >= lambda p(t|C), so every score is >= common + |q| log lambda
    if ones:
        some = scores_of(index, "ql_jm", " ".join(query), {"lambda": lam})
        common = next(iter(ones.values()))
        kept = sum(1 for token in query if token in index.term_stats([token]))
        for score in some.values():
            assert score >= common + kept * math.log(lam) - 1e-12


# ------------------------------------------------------------------ grids


GRID_CASES = [
    ("ql_dirichlet", [{"mu": m} for m in (1.0, 10.0, 100.0, 1000.0, 2500.0)]),
    ("ql_gjm2", [{"mu": m} for m in (1.0, 10.0, 100.0, 1000.0)]),
    ("kl_ml", [{"mu": m} for m in (5.0, 500.0)]),
    ("ql_jm", [{"lambda": v} for v in (0.1, 0.5, 0.9, 1.0)]),
    ("ql_ad", [{"delta": v} for v in (0.2, 0.7)]),
    ("ql_two_stage", [{"mu": m, "lambda": v} for m in (10.0, 1000.0) for v in (0.0, 0.5)]),
]
TOPICS = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["a c", "b b e zzz", "d c a"]})


@pytest.mark.parametrize("family,points", GRID_CASES, ids=[case[0] for case in GRID_CASES])
def test_grid_equals_separate_points(family, points):
    index = TinyIndex(DOCS)
    grid = retrieve_grid(index, TOPICS, family, points)
    separate = [retrieve_grid(index, TOPICS, family, [point])[0] for point in points]
    assert len(grid) == len(points)
    for together, alone in zip(grid, separate):
        pd.testing.assert_frame_equal(together, alone)
    # one prepare(), many score() calls: the same runs as a fresh Scorer per point
    model = get_model(family)
    scorer = Scorer(index)
    prepared = scorer.prepare(TOPICS)
    for point, alone in zip(points, separate):
        pd.testing.assert_frame_equal(scorer.run(model, prepared, model.check_point(point)), alone)


# ------------------------------------------------------------------ a real index


REAL_DOCS = [
    ("r1", "The cat sat on the mat with another cat."),
    ("r2", "A dog and a cat. The dog chased the cat."),
    ("r3", "Mats and dogs; mat, dog, mat."),
    ("r4", "nothing here matches"),
    ("r5", "cat cat cat dog"),
]
PLAIN = Analyzer(stemmer="none", stopwords="none")


@pytest.fixture(scope="module")
def real_index(tmp_path_factory):
    from irgrid.index import IndexReader, build_index

    root = tmp_path_factory.mktemp("lm-index")
    (root / "docs").mkdir()
    table = pa.table({"docno": [d for d, _ in REAL_DOCS], "text": [t for _, t in REAL_DOCS]})
    pq.write_table(table, root / "docs" / "part-0000.parquet")
    build_index(root / "docs", root / "index", PLAIN, num_buckets=2, scheduler="sync", progress=False)
    return IndexReader(root / "index")


@pytest.mark.parametrize("family", LM_FAMILIES)
def test_real_index_scores_equal_direct_log_likelihood(real_index, family):
    docs = {docno: PLAIN(text) for docno, text in REAL_DOCS}
    topics = pd.DataFrame({"qid": ["1", "2"], "text": ["cat mat unicorn", "the dog and the cat"]})
    points = POINTS[family]
    runs = retrieve_grid(real_index, topics, family, points)
    for point, run in zip(points, runs):
        for qid, text in zip(topics["qid"], topics["text"]):
            query = PLAIN(text)
            got = run[run["qid"] == qid]
            assert set(got["docno"]) == {d for d, toks in docs.items() if set(toks) & set(query)}
            for docno, score in zip(got["docno"], got["score"]):
                assert score == pytest.approx(direct_score(family, point, docs, docno, query), rel=1e-12)
            assert list(got["score"]) == sorted(got["score"], reverse=True)


@settings(max_examples=80, deadline=None)
@given(terms=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 40),
                                st.floats(1e-6, 1e4, allow_nan=False, allow_infinity=False)),
                      min_size=1, max_size=12),
       seed=st.integers(0, 2**32 - 1))
def test_each_postings_dirichlet_part_is_log1p_of_tf_over_mu_p_whatever_the_term_table(terms, seed):
    # tabulated_posting_parts gives a term with many postings for its largest tf a table of its parts
    # (one log1p per tf value) and the others a log1p a posting; either way every posting's part must
    # be log1p(tf / (mu p(t|C))) as math computes it, written over whatever the reused array held
    from irgrid.models.parts import WEIGHTINGS
    from irgrid.models.parts.base import tabulated_posting_parts

    rng = np.random.default_rng(seed)
    counts = [count for count, _, _ in terms]
    tfs = np.concatenate([rng.integers(1, largest + 1, count) for count, largest, _ in terms]).astype(np.int32)
    constants = np.array([constant for _, _, constant in terms])
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    out = np.full(len(tfs), np.nan)
    got = tabulated_posting_parts(WEIGHTINGS["dirichlet"].kernel_key, np.zeros(1), tfs, constants, offsets, out)
    assert got is out
    expected = [math.log1p(float(tf) / constants[i]) for i in range(len(terms)) for tf in tfs[offsets[i]:offsets[i + 1]]]
    assert np.array_equal(got.view(np.int64), np.array(expected, dtype=np.float64).view(np.int64))


@settings(max_examples=80, deadline=None)
@given(lengths=st.lists(st.integers(0, 400).map(float) | st.floats(0, 500, allow_nan=False), min_size=1,
                        max_size=60),
       mu=st.floats(1e-3, 1e4, allow_nan=False), seed=st.integers(0, 2**32 - 1))
def test_each_candidates_dirichlet_value_is_log_of_length_plus_mu_with_or_without_the_table(lengths, mu, seed):
    # candidate_document_values looks whole lengths up in document_value_table (one log per length up
    # to the largest) and computes the others: either way each value must be math's log(|D| + mu)
    from irgrid.models.parts import WEIGHTINGS
    from irgrid.models.parts.base import candidate_document_values, document_value_table

    key = WEIGHTINGS["dirichlet"].kernel_key
    doc_lengths = np.array(lengths, dtype=np.float64)
    params = np.array([mu])
    candidates = np.random.default_rng(seed).integers(0, len(lengths), 3 * len(lengths)).astype(np.int32)
    table = document_value_table(key, doc_lengths, params)
    whole = all(length == math.floor(length) and length <= len(lengths) for length in lengths)
    assert len(table) == (int(max(lengths)) + 1 if whole else 0)
    out = np.full(len(candidates), np.nan)
    got = candidate_document_values(key, doc_lengths, candidates, params, table, out)
    assert got is out
    expected = np.array([math.log(lengths[c] + mu) for c in candidates], dtype=np.float64)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))
