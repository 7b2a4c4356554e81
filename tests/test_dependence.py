"""Term-dependence model families (sdm, fdm, bg, culm) against hand computations and the unigram models.

Window counts in the hand computations are worked out in the comments by the rules of
irgrid.features.windows (Galago's); tests/test_windows.py checks the counting itself.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_window_counts import brute

from irgrid.errors import ConfigError
from irgrid.features import AnalyzedQuery, phrase, unordered
from irgrid.models import MODEL_FAMILIES, get_model
from irgrid.retrieve import Scorer
from tiny_index import TinyIndex

# the Dirichlet-smoothed feature families; the sentence model (parse trees, Jelinek-Mercer) has its own
# tests of the same properties in tests/test_sentence_model.py
FEATURE_FAMILIES = sorted(name for name, model in MODEL_FAMILIES.items() if model.uses_features and not model.uses_parses)
VOCABULARY = ["a", "b", "c", "d"]

documents = st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=9), min_size=1, max_size=12)
queries = st.lists(st.lists(st.sampled_from(VOCABULARY + ["zz"]), min_size=1, max_size=4).map(" ".join),
                   min_size=1, max_size=4)


def topics_of(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": list(texts)})


def run_of(docs: dict[str, list[str]], family: str, point: dict, *texts: str, depth: int = 100,
           topics: pd.DataFrame | None = None) -> pd.DataFrame:
    scorer = Scorer(TinyIndex(docs))
    model = get_model(family)
    checked = model.check_point(point)
    prepared = scorer.prepare(topics if topics is not None else topics_of(*texts), model, [checked])
    return scorer.run(model, prepared, checked, depth)


def test_sdm_equals_the_formula_computed_by_hand():
    docs = {"d1": "a b c".split(), "d2": "b a d d".split(), "d3": "a b a b".split()}
    mu = 10.0
    collection = 11  # 3 + 4 + 4 tokens
    # tf of a, b, #1(a b), #uw8(a b) per document (Indri counts a window's matches without overlaps):
    #   d1 "a b c":   a 1, b 1, #1 1 (a0 b1), #uw8 1 (a0 b1; then a has no next)
    #   d2 "b a d d": a 1, b 1, #1 0 (b before a), #uw8 1 (b0 a1; then b has no next)
    #   d3 "a b a b": a 2, b 2, #1 2 (a0 b1, a2 b3), #uw8 2 (spans 0-1, 1-2, 2-3; 1-2 overlaps 0-1)
    counts = {"d1": (1, 1, 1, 1), "d2": (1, 1, 0, 1), "d3": (2, 2, 2, 2)}
    lengths = {"d1": 3, "d2": 4, "d3": 4}
    cf = (4, 4, 3, 4)  # a, b, #1(a b), #uw8(a b)

    def p(tf, f, length):
        return (tf + mu * cf[f] / collection) / (length + mu)

    expected = {}
    for docno, (a, b, exact, window) in counts.items():
        n = lengths[docno]
        expected[docno] = (0.85 / 2 * (math.log(p(a, 0, n)) + math.log(p(b, 1, n)))
                           + 0.10 * math.log(p(exact, 2, n)) + 0.05 * math.log(p(window, 3, n)))
    run = run_of(docs, "sdm", {"mu": mu}, "a b")
    got = dict(zip(run["docno"], run["score"]))
    assert got.keys() == expected.keys()
    for docno, score in expected.items():
        assert got[docno] == pytest.approx(score, rel=1e-12)
    assert run["docno"].tolist() == sorted(expected, key=lambda d: -expected[d])


def test_a_window_never_seen_in_the_collection_gets_half_an_occurrence():
    # "c a" never occurs as #1 and a, c never share a document: both windows have cf 0, and
    # Indri's 1 / (2|C|) background keeps the score finite
    docs = {"d1": "a b".split(), "d2": "c d".split()}
    run = run_of(docs, "sdm", {"mu": 5.0}, "c a")
    assert np.isfinite(run["score"]).all()
    collection, mu = 4, 5.0
    p_unseen = 0.5 / collection
    # d1 holds a (tf 1) not c: 0.85/2 (log p(c|D) + log p(a|D)) + 0.10 log p(#1) + 0.05 log p(#uw8)
    expected_d1 = (0.85 / 2 * (math.log(mu * 1 / collection / (2 + mu)) + math.log((1 + mu * 1 / collection) / (2 + mu)))
                   + 0.15 * math.log(mu * p_unseen / (2 + mu)))
    assert dict(zip(run["docno"], run["score"]))["d1"] == pytest.approx(expected_d1, rel=1e-12)


# ------------------------------------------------------- a query term absent from the collection

def test_an_unseen_query_term_is_scored_as_indri_scores_it_by_hand():
    # Indri 5.x: #weight(0.85 #combine(a b zz) 0.10 #combine(#1(a b) #1(b zz)) 0.05 #combine(#uw8(a b) #uw8(b zz))).
    # "zz" occurs nowhere: its term and both its windows are NullScorerNodes, scoring 0 occurrences
    # with p(f|C) = 1/(2|C|) at the document's own length, and each counts in its #combine's 1/n.
    docs = {"d1": "a b c".split(), "d2": "b b".split(), "d3": "c a a c".split()}
    mu, collection = 10.0, 9  # 3 + 2 + 4 tokens
    # per document: |D|, tf of a, b, #1(a b), #uw8(a b); cf a 3, b 3, #1(a b) 1, #uw8(a b) 1
    counts = {"d1": (3, 1, 1, 1, 1), "d2": (2, 0, 2, 0, 0), "d3": (4, 2, 0, 0, 0)}

    def log_p(tf, cf, length):  # Dirichlet: log((tf + mu p(f|C)) / (|D| + mu))
        background = cf / collection if cf else 1 / (2 * collection)
        return math.log((tf + mu * background) / (length + mu))

    indri, dropped = {}, {}
    for docno, (n, a, b, exact, window) in counts.items():
        unseen = log_p(0, 0, n)
        indri[docno] = (0.85 / 3 * (log_p(a, 3, n) + log_p(b, 3, n) + unseen)
                        + 0.10 / 2 * (log_p(exact, 1, n) + unseen) + 0.05 / 2 * (log_p(window, 1, n) + unseen))
        # drop_unseen 1: zz and its windows left out, |T| = 2, |O| = |U| = 1
        dropped[docno] = (0.85 / 2 * (log_p(a, 3, n) + log_p(b, 3, n))
                          + 0.10 * log_p(exact, 1, n) + 0.05 * log_p(window, 1, n))
    for rule, expected in ((0, indri), (1, dropped)):
        run = run_of(docs, "sdm", {"mu": mu, "drop_unseen": rule}, "a b zz")
        got = dict(zip(run["docno"], run["score"]))
        assert got.keys() == expected.keys()
        for docno, score in expected.items():
            assert got[docno] == pytest.approx(score, rel=1e-12)
        assert run["docno"].tolist() == sorted(expected, key=lambda d: -expected[d])
    # the unseen features weigh 0.85/3 + 0.10/2 + 0.05/2 of log(mu/(2|C|) / (|D| + mu)): the longer d1
    # loses more than d2, and the two rules rank them differently
    assert indri["d2"] > indri["d1"] and dropped["d1"] > dropped["d2"]


def brute_force_mrf(docs: dict[str, list[str]], text: str, family: str, mu: float, drop_unseen: bool
                    ) -> dict[str, float]:
    """SDM or FDM (max_terms 2, window 8) spelled out over the token lists: Indri's #weight of #combines.

    The windows are counted by the brute-force rules of tests/test_window_counts.py (Indri's, without
    overlaps); every feature is Dirichlet-smoothed, 1/(2|C|) for one never seen; the candidates are
    the documents holding a query term.
    """
    words = text.split()
    present = {w for doc in docs.values() for w in doc}
    pairs = (list(zip(words, words[1:])) if family == "sdm"
             else [(words[i], words[j]) for i in range(len(words)) for j in range(i + 1, len(words))])
    groups = {"T": [("term", (w,)) for w in words], "O": [("#1", pair) for pair in zip(words, words[1:])],
              "U": [("#uw8", pair) for pair in pairs]}
    if drop_unseen:
        groups = {g: [f for f in features if set(f[1]) <= present] for g, features in groups.items()}
    total = sum(len(doc) for doc in docs.values())

    def count(feature, doc):
        kind, terms = feature
        if kind == "term":
            return doc.count(terms[0])
        window = phrase(terms) if kind == "#1" else unordered(terms, 8)
        return brute(window, doc, overlapping=False)

    scores = {}
    for docno, doc in docs.items():
        if not set(words) & set(doc):
            continue
        score = 0.0
        for group, weight in (("T", 0.85), ("O", 0.10), ("U", 0.05)):
            for feature in groups[group]:
                cf = sum(count(feature, other) for other in docs.values())
                background = cf / total if cf else 0.5 / total
                score += weight / len(groups[group]) * math.log((count(feature, doc) + mu * background)
                                                                  / (len(doc) + mu))
        scores[docno] = score
    return scores


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(["sdm", "fdm"]), drop_unseen=st.sampled_from([0, 1]),
       mu=st.sampled_from([1.0, 30.0, 2500.0]))
def test_sdm_and_fdm_score_as_the_brute_force_spelling_under_both_rules(docs, texts, family, drop_unseen, mu):
    collection = {f"d{i}": doc for i, doc in enumerate(docs)}
    point = {"mu": mu, "drop_unseen": drop_unseen} | ({"max_terms": 2} if family == "fdm" else {})
    run = run_of(collection, family, point, *texts, depth=1000)
    for q, text in enumerate(texts):
        expected = brute_force_mrf(collection, text, family, mu, bool(drop_unseen))
        got = run[run["qid"] == f"q{q}"]
        assert dict(zip(got["docno"], got["score"])) == pytest.approx(expected, rel=1e-10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4).map(" ".join),
                                      min_size=1, max_size=4),
       family=st.sampled_from(["sdm", "fdm"]), mu=st.sampled_from([1.0, 30.0, 2500.0]))
def test_without_an_unseen_term_both_rules_give_the_same_runs_to_the_bit(docs, texts, family, mu):
    collection = {f"d{i}": doc for i, doc in enumerate(docs)}
    if not {w for text in texts for w in text.split()} <= {w for doc in docs for w in doc}:
        return  # a query word the documents lack: the rules differ there by design
    indri = run_of(collection, family, {"mu": mu, "drop_unseen": 0}, *texts)
    dropped = run_of(collection, family, {"mu": mu, "drop_unseen": 1}, *texts)
    pd.testing.assert_frame_equal(indri, dropped, check_exact=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(["sdm", "fdm"]))
def test_a_grid_over_both_rules_scores_each_point_as_a_grid_of_that_rule_alone(docs, texts, family):
    # a grid holding drop_unseen 0 and 1 compiles the unseen features once, weighing them 0 at the
    # points that drop them: the runs of those points are the ones compiled without them, to the bit
    scorer = Scorer(TinyIndex({f"d{i}": doc for i, doc in enumerate(docs)}))
    model = get_model(family)
    points = [model.check_point({"mu": 20.0, "drop_unseen": rule}) for rule in (0, 1)]
    together = scorer.prepare(topics_of(*texts), model, points)
    for point in points:
        alone = scorer.prepare(topics_of(*texts), model, [point])
        pd.testing.assert_frame_equal(scorer.run(model, together, point, 10), scorer.run(model, alone, point, 10),
                                      check_exact=True)
        pd.testing.assert_frame_equal(scorer.run(model, together, point, 10),
                                      scorer._run_per_query(model, list(together), point, 10), check_exact=True,
                                      check_dtype=False)


@pytest.mark.parametrize("family", ["sdm", "fdm"])
def test_drop_unseen_must_be_zero_or_one(family):
    with pytest.raises(ConfigError, match="drop_unseen=0.5 must be 0"):
        get_model(family).check_point({"drop_unseen": 0.5})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, mu=st.sampled_from([1.0, 30.0, 2500.0]), seed=st.integers(0, 10**6))
def test_sdm_with_only_terms_ranks_as_query_likelihood(docs, texts, mu, seed):
    docnos = [f"d{n:03d}" for n in np.random.default_rng(seed).permutation(len(docs))]
    collection = dict(zip(docnos, docs))
    # ql_dirichlet drops a query term absent from the collection ("zz"), as sdm does with drop_unseen 1
    sdm = run_of(collection, "sdm", {"mu": mu, "lambda_t": 1.0, "lambda_o": 0.0, "lambda_u": 0.0, "drop_unseen": 1},
                 *texts)
    ql = run_of(collection, "ql_dirichlet", {"mu": mu}, *texts)
    # the SDM score is the QL score over |Q| (a positive constant per query): the same ranking,
    # unless two scores equal but for their last bits tie after the division; none do here
    assert sdm[["qid", "docno", "rank"]].values.tolist() == ql[["qid", "docno", "rank"]].values.tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, mu=st.sampled_from([1.0, 30.0, 2500.0]), family=st.sampled_from(["bg", "culm"]))
def test_bigram_models_with_weight_zero_are_kl_to_the_last_bit(docs, texts, mu, family):
    collection = {f"d{i}": doc for i, doc in enumerate(docs)}
    bigram = run_of(collection, family, {"mu": mu, "bigram_weight": 0.0}, *texts)
    unigram = run_of(collection, "kl_ml", {"mu": mu}, *texts)
    pd.testing.assert_frame_equal(bigram, unigram, check_exact=True)


def test_bg_equals_the_bigram_formula_computed_by_hand():
    docs = {"d1": "a b a c".split(), "d2": "b b a".split()}
    mu, lam, collection = 4.0, 0.25, 7
    cf = {"a": 3, "b": 3}

    def p_s(tf, word, length):
        return (tf + mu * cf[word] / collection) / (length + mu)

    # query "a b": log p_s(a|D) + log(lam P_ML(b|a, D) + (1 - lam) p_s(b|D)), over |Q| = 2
    #   d1 "a b a c": c(a) 2, c(a b) 1 -> P_ML(b|a) = 1/2; tf(b) 1
    #   d2 "b b a":   c(a) 1, c(a b) 0 -> P_ML(b|a) = 0;   tf(b) 2
    expected = {
        "d1": (math.log(p_s(2, "a", 4)) + math.log(lam * 0.5 + (1 - lam) * p_s(1, "b", 4))) / 2,
        "d2": (math.log(p_s(1, "a", 3)) + math.log(lam * 0.0 + (1 - lam) * p_s(2, "b", 3))) / 2,
    }
    run = run_of(docs, "bg", {"mu": mu, "bigram_weight": lam}, "a b")
    got = dict(zip(run["docno"], run["score"]))
    for docno, score in expected.items():
        assert got[docno] == pytest.approx(score, rel=1e-12)


def test_culm_takes_its_bigrams_from_the_parsed_phrases():
    model = get_model("culm")
    point = model.check_point({})
    parsed = AnalyzedQuery("1", ("a", "b", "c", "d"), (("a", "b"), ("c",), ("d",)))
    plain = AnalyzedQuery("1", ("a", "b", "c", "d"))
    windows = lambda compiled: [str(c.feature) for c in compiled if not c.feature.is_term]  # noqa: E731
    assert windows(model.compile(parsed, [point])) == ["#1(a b)"]
    assert windows(model.compile(plain, [point])) == ["#1(a b)", "#1(b c)", "#1(c d)"]
    # bg always takes adjacent query words
    assert windows(get_model("bg").compile(parsed, [point])) == ["#1(a b)", "#1(b c)", "#1(c d)"]


def test_parsed_phrases_reach_the_model_through_the_topics():
    docs = {"d1": "a b c d".split(), "d2": "c d a b".split()}
    topics = topics_of("a b c d")
    topics["phrases"] = [["c d"]]
    scorer = Scorer(TinyIndex(docs))
    model = get_model("culm")
    prepared = scorer.prepare(topics, model, [model.check_point({})])
    assert [t.term for t in prepared.terms if t.group != "T"] == ["#1(c d)"]


def test_fdm_compiles_runs_and_subsets():
    model = get_model("fdm")
    point = model.check_point({"window": 8, "max_terms": 3})
    compiled = model.compile(AnalyzedQuery("1", ("a", "b", "c")), [point])
    assert [str(c.feature) for c in compiled if c.group == "O3"] == ["#1(a b)", "#1(b c)", "#1(a b c)"]
    # Indri's 4 |s|: #uw8 for a pair, #uw12 for three terms
    assert [str(c.feature) for c in compiled if c.group == "U8M3"] == ["#uw8(a b)", "#uw8(a c)", "#uw8(b c)",
                                                                       "#uw12(a b c)"]


def test_fdm_grid_over_max_terms_weighs_each_point_s_own_subsets():
    docs = {"d1": "a b c".split(), "d2": "c b a x".split(), "d3": "a x x b".split()}
    texts = ("a b c", "b a")
    grid = [{"mu": 10.0, "max_terms": m} for m in (2, 3)]
    scorer = Scorer(TinyIndex(docs))
    model = get_model("fdm")
    points = [model.check_point(point) for point in grid]
    together = scorer.prepare(topics_of(*texts), model, points)
    for point in points:
        alone = scorer.prepare(topics_of(*texts), model, [point])
        pd.testing.assert_frame_equal(scorer.run(model, together, point, 10), scorer.run(model, alone, point, 10),
                                      check_exact=True)


def test_sdm_compiles_one_window_group_per_grid_value_and_weighs_only_the_point_s():
    model = get_model("sdm")
    points = [model.check_point({"window": w}) for w in (4, 8)]
    compiled = model.compile(AnalyzedQuery("1", ("a", "b", "a")), points)
    groups = {c.group for c in compiled}
    assert groups == {"T", "O", "U4", "U8"}
    assert model.group_lambda("U4", points[1]) == 0.0
    assert model.group_lambda("U8", points[1]) == points[1]["lambda_u"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(FEATURE_FAMILIES), depth=st.integers(1, 15),
       seed=st.integers(0, 10**6), threads=st.integers(1, 2), drop_unseen=st.sampled_from([0, 1]))
def test_batch_run_equals_per_query_run_for_feature_models(docs, texts, family, depth, seed, threads, drop_unseen):
    docnos = [f"d{n:03d}" for n in np.random.default_rng(seed).permutation(len(docs))]
    scorer = Scorer(TinyIndex(dict(zip(docnos, docs))), threads=threads)
    model = get_model(family)
    point = {"mu": 20.0}
    if "drop_unseen" in model.parameter_names():
        point["drop_unseen"] = drop_unseen
    point = model.check_point(point)
    prepared = scorer.prepare(topics_of(*texts), model, [point])
    expected = scorer._run_per_query(model, list(prepared), point, depth)
    got = scorer.run(model, prepared, point, depth)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_exact=True,
                                  check_dtype=False)
    # the numpy path over the whole set (Scorer.score_all) gives each query's scores to the bit too
    per_query = [scorer.score(model, prepared[q], point) for q in range(len(prepared))]
    assert scorer.score_all(model, prepared, point).tolist() == np.concatenate(per_query).tolist()


# ------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("family", FEATURE_FAMILIES)
def test_a_one_term_query_scores_its_unigram_part_alone(family):
    docs = {"d1": "a b".split(), "d2": "a a c".split(), "d3": "c".split()}
    run = run_of(docs, family, {"mu": 10.0}, "a")
    reference = run_of(docs, "ql_dirichlet", {"mu": 10.0}, "a")
    assert run["docno"].tolist() == reference["docno"].tolist()
    assert np.isfinite(run["score"]).all()


@pytest.mark.parametrize("family", FEATURE_FAMILIES)
def test_terms_that_never_co_occur_and_a_window_wider_than_any_document_give_finite_scores(family):
    docs = {"d1": "a a".split(), "d2": "b".split(), "d3": "c a".split()}
    model = get_model(family)
    grid = {"mu": 10.0}
    if "window" in model.parameter_names():
        grid["window"] = 1000.0  # wider than every document
    run = run_of(docs, family, grid, "a b", "b zz", "zz")
    assert np.isfinite(run["score"]).all()
    assert set(run["qid"]) == {"q0", "q1"}  # the query of an unknown word alone retrieves nothing


def test_a_phrase_of_stop_words_only_adds_no_pair():
    model = get_model("culm")
    query = AnalyzedQuery("1", ("effect", "flow"), ((), ("effect",), ("flow",)))
    assert [c for c in model.compile(query, [model.check_point({})]) if not c.feature.is_term] == []
