"""The phrase model families (uni, p, pu, pm) against hand computations and the properties the paper states.

Counts in the hand computations are worked out in the comments; a phrase is the exact
adjacency window #1 (tests/test_window_counts.py checks the counting).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from irgrid.errors import ConfigError
from irgrid.models import get_model
from irgrid.models.phrase import Inseparability, inseparability_weight, phrase_spans
from irgrid.retrieve import Scorer
from tiny_index import TinyIndex

ALL_WORDS = {"t1": 1.0, "t2": 1.0}  # x < 1 always: every lambda_i = 0
ALL_PHRASES = {"t1": -1.0, "t2": -1.0, "lambda_max": 1.0, "pmi_threshold": -1e9}  # every lambda_i = 1


def topics_with_phrases(*queries: tuple[str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame({"qid": [f"q{i}" for i in range(len(queries))], "text": [text for text, _ in queries],
                         "phrases": [phrases for _, phrases in queries]})


def run_of(docs, family, point, topics, depth=1000):
    scorer = Scorer(TinyIndex(docs))
    model = get_model(family)
    checked = model.check_point(point)
    prepared = scorer.prepare(topics, model, [checked])
    return scorer.run(model, prepared, checked, depth)


def scores_of(run: pd.DataFrame) -> dict[tuple[str, str], float]:
    return {(q, d): s for q, d, s in zip(run["qid"], run["docno"], run["score"])}


DOCS = {
    "d1": "hot dog stand".split(),
    "d2": "hot sun dog".split(),
    "d3": "a dog sleeps".split(),
    "d4": "hot dog hot dog".split(),
    "d5": "cold sun".split(),
}


def test_pm_equals_the_formula_computed_by_hand():
    # N = 5 documents, |C| = 3 + 3 + 3 + 4 + 2 = 15 tokens
    # hot: df 3 (d1 d2 d4), cf 4; dog: df 4 (d1 d2 d3 d4), cf 5; #1(hot dog): df 2 (d1, d4), cf 3 (d1 1, d4 2)
    n, collection, mu = 5, 15, 4.0
    idf_phrase = math.log(5 / 2)
    word_idf = (math.log(5 / 3) + math.log(5 / 4)) / 2
    x = (idf_phrase - word_idf) / idf_phrase  # 0.601...: above t2 = 0.4
    pmi = math.log2((3 / 15) / ((4 / 15) * (5 / 15)))  # 1.17 bits: above the paper's 1
    assert x > 0.4 and pmi > 1.0
    lam = 0.9  # x above t2: lambda_max
    tf = {"d1": (1, 1, 1), "d2": (1, 1, 0), "d3": (0, 1, 0), "d4": (2, 2, 2)}  # hot, dog, #1(hot dog)
    lengths = {"d1": 3, "d2": 3, "d3": 3, "d4": 4}
    cf = (4, 5, 3)

    def log_p(count, f, length):
        return math.log((count + mu * cf[f] / collection) / (length + mu))

    expected = {}
    for docno, (hot, dog, both) in tf.items():
        length = lengths[docno]
        expected[docno] = (lam * log_p(both, 2, length)
                           + (1 - lam) * (log_p(hot, 0, length) + log_p(dog, 1, length)))
    run = run_of(DOCS, "pm", {"mu": mu, "t1": 0.1, "t2": 0.4}, topics_with_phrases(("hot dog", ["hot dog"])))
    got = dict(zip(run["docno"], run["score"]))
    assert set(got) == set(expected)  # d5 holds no query word: not a candidate
    for docno, score in expected.items():
        assert got[docno] == pytest.approx(score, rel=1e-12)
    assert n == len(DOCS)


def test_the_inseparability_of_a_phrase_is_computed_once_from_the_collection():
    scorer = Scorer(TinyIndex(DOCS))
    model = get_model("pm")
    prepared = scorer.prepare(topics_with_phrases(("hot dog", ["hot dog"])), model, [model.check_point({})])
    annotations = {t.term: t.annotation for t in prepared.terms}
    phrase = annotations["#1(hot dog)"]
    assert isinstance(phrase, Inseparability) and phrase.present
    assert (phrase.df, phrase.cf) == (2, 3)
    assert phrase.idf == pytest.approx(math.log(5 / 2))
    assert phrase.pmi == pytest.approx(math.log2((3 / 15) / ((4 / 15) * (5 / 15))))
    # the phrase's words carry the same annotation: their weight is 1 - lambda
    assert annotations["hot"] is phrase and annotations["dog"] is phrase


def test_uni_scores_as_ql_dirichlet_to_the_bit():
    topics = topics_with_phrases(("hot dog sun", ["hot dog"]), ("dog dog cold", ["dog dog"]))
    uni = run_of(DOCS, "uni", {"mu": 7.0}, topics)
    scorer = Scorer(TinyIndex(DOCS))
    ql = get_model("ql_dirichlet")
    point = ql.check_point({"mu": 7.0})
    reference = scorer.run(ql, scorer.prepare(topics[["qid", "text"]]), point, 1000)
    assert scores_of(uni) == scores_of(reference)


docs_strategy = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=8), min_size=1,
                         max_size=10)
query_strategy = st.lists(st.sampled_from(["a", "b", "c", "d", "zz"]), min_size=1, max_size=6)


@st.composite
def queries_with_phrases(draw):
    """Queries with phrases cut out of them at random places (non-overlapping runs of 2 to 4 words)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        words = draw(query_strategy)
        phrases, i = [], 0
        while i < len(words):
            size = draw(st.integers(1, 4))
            phrases.append(" ".join(words[i:i + size]))
            i += size
        out.append((" ".join(words), phrases))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=docs_strategy, queries=queries_with_phrases(), mu=st.sampled_from([0.5, 3.0, 100.0]))
def test_pm_with_every_lambda_0_is_uni_and_with_every_lambda_1_is_p_exactly(docs, queries, mu):
    docs = {f"d{i}": words for i, words in enumerate(docs)}
    topics = topics_with_phrases(*queries)
    uni = scores_of(run_of(docs, "uni", {"mu": mu}, topics))
    p = scores_of(run_of(docs, "p", {"mu": mu}, topics))
    assert scores_of(run_of(docs, "pm", {"mu": mu, **ALL_WORDS}, topics)) == uni
    assert scores_of(run_of(docs, "pm", {"mu": mu, **ALL_PHRASES}, topics)) == p
    assert scores_of(run_of(docs, "pu", {"mu": mu, "phrase_weight": 0.0}, topics)) == uni
    assert scores_of(run_of(docs, "pu", {"mu": mu, "phrase_weight": 1.0}, topics)) == p


@given(x1=st.floats(-0.5, 1.0), x2=st.floats(-0.5, 1.0), t1=st.floats(-0.5, 1.0), width=st.floats(0.0, 1.0),
       lambda_max=st.floats(0.0, 1.0))
# a subnormal lambda_max: the product rounded up past it before the clamp
@example(x1=0.0, x2=0.3125, t1=-0.25, width=0.625, lambda_max=5e-324)
def test_lambda_is_monotone_in_the_idf_difference_and_stays_in_range(x1, x2, t1, width, lambda_max):
    t2 = t1 + width
    low, high = sorted((x1, x2))
    weight_low = inseparability_weight(low, t1, t2, lambda_max)
    weight_high = inseparability_weight(high, t1, t2, lambda_max)
    assert 0.0 <= weight_low <= weight_high <= lambda_max
    if high <= t1:
        assert weight_high == 0.0
    if low >= t2 and t2 > t1:
        assert weight_low == lambda_max


def test_lambda_between_the_thresholds_is_linear():
    assert inseparability_weight(0.25, 0.1, 0.4, 0.9) == pytest.approx(0.45)
    assert inseparability_weight(0.1, 0.1, 0.4, 0.9) == 0.0
    assert inseparability_weight(0.4, 0.1, 0.4, 0.9) == 0.9


def test_a_more_inseparable_phrase_gets_more_weight_on_real_counts():
    # "hot dog" (x = 0.60) against "sun dog": #1(sun dog) only in d2 -> idf log 5, words: sun df 2, dog df 4
    # x(sun dog) = (log 5 - (log 2.5 + log 1.25) / 2) / log 5 = 0.646; both above t2 = 0.4: lambda_max each,
    # so with t2 = 0.7 the order of the weights must follow the order of x
    scorer = Scorer(TinyIndex(DOCS))
    model = get_model("pm")
    prepared = scorer.prepare(topics_with_phrases(("hot dog", ["hot dog"]), ("sun dog", ["sun dog"])), model,
                              [model.check_point({})])
    phrases = {t.term: t.annotation for t in prepared.terms if t.term.startswith("#1")}
    assert phrases["#1(sun dog)"].x == pytest.approx((math.log(5) - (math.log(2.5) + math.log(1.25)) / 2)
                                                     / math.log(5))
    point = model.check_point({"t1": 0.0, "t2": 0.7, "pmi_threshold": -1e9})
    hot, sun = (model.phrase_lambda(phrases[name], point) for name in ("#1(hot dog)", "#1(sun dog)"))
    assert 0.0 < hot < sun < 0.9


def test_a_phrase_with_low_pmi_is_scored_as_words():
    # pmi(hot dog) = 1.17 bits: with the threshold at 2 bits the phrase is words, pm = uni
    topics = topics_with_phrases(("hot dog", ["hot dog"]))
    pm = scores_of(run_of(DOCS, "pm", {"mu": 4.0, "t1": 0.0, "t2": 0.4, "pmi_threshold": 2.0}, topics))
    assert pm == scores_of(run_of(DOCS, "uni", {"mu": 4.0}, topics))
    assert pm != scores_of(run_of(DOCS, "pm", {"mu": 4.0, "t1": 0.0, "t2": 0.4, "pmi_threshold": 1.0}, topics))


def test_a_phrase_absent_from_the_collection_is_left_to_its_words():
    # "sun hot" never occurs adjacent (df 0: idf undefined); "hot zz" names a word absent from every document
    topics = topics_with_phrases(("sun hot", ["sun hot"]), ("hot zz", ["hot zz"]), ("dog sun", []))
    uni = scores_of(run_of(DOCS, "uni", {"mu": 4.0}, topics))
    for family, point in (("p", {}), ("pu", {"phrase_weight": 0.7}), ("pm", ALL_PHRASES)):
        assert scores_of(run_of(DOCS, family, {"mu": 4.0, **point}, topics)) == uni, family


def test_a_query_without_phrases_scores_as_uni():
    topics = topics_with_phrases(("hot dog sun", []), ("cold dog", ["cold", "dog"]))
    topics_unparsed = topics[["qid", "text"]]
    uni = scores_of(run_of(DOCS, "uni", {"mu": 4.0}, topics))
    assert scores_of(run_of(DOCS, "pm", {"mu": 4.0, **ALL_PHRASES}, topics)) == uni
    assert scores_of(run_of(DOCS, "p", {"mu": 4.0}, topics_unparsed)) == uni


def test_t1_above_t2_is_refused_naming_both():
    with pytest.raises(ConfigError, match=r"t1=0\.5 must not exceed t2=0\.4"):
        run_of(DOCS, "pm", {"t1": 0.5, "t2": 0.4}, topics_with_phrases(("hot dog", ["hot dog"])))


def test_phrases_are_found_in_the_analyzed_query_left_to_right_without_overlap():
    terms = ("new", "york", "new", "york", "city", "hall")
    assert phrase_spans(terms, [("new", "york"), ("new", "york", "city"), ("hall",)]) == [(0, 2), (2, 5)]
    # a phrase the analysis made unfindable (a word dropped) is left to its words
    assert phrase_spans(terms, [("york", "hall")]) == []
    assert phrase_spans(terms, None) == []


def test_the_phrase_models_rank_the_same_candidates():
    topics = topics_with_phrases(("hot dog sun", ["hot dog", "sun"]))
    candidates = [set(run_of(DOCS, family, {}, topics)["docno"]) for family in ("uni", "p", "pu", "pm")]
    assert all(c == candidates[0] for c in candidates)
    assert candidates[0] == {"d1", "d2", "d3", "d4", "d5"}
    assert np.isfinite(run_of(DOCS, "p", {}, topics)["score"]).all()


def test_p_is_the_query_as_a_sequence_of_phrases_computed_by_hand():
    # "hot dog sun" with the phrase "hot dog": log p(#1(hot dog)|D) + log p(sun|D)
    # sun: df 2 (d2, d5), cf 2; #1(hot dog): cf 3 (d1 1, d4 2); |C| = 15
    mu, collection = 4.0, 15
    tf = {"d1": (1, 0), "d2": (0, 1), "d3": (0, 0), "d4": (2, 0), "d5": (0, 1)}  # #1(hot dog), sun
    lengths = {"d1": 3, "d2": 3, "d3": 3, "d4": 4, "d5": 2}
    expected = {d: math.log((both + mu * 3 / collection) / (lengths[d] + mu))
                + math.log((sun + mu * 2 / collection) / (lengths[d] + mu)) for d, (both, sun) in tf.items()}
    run = run_of(DOCS, "p", {"mu": mu}, topics_with_phrases(("hot dog sun", ["hot dog", "sun"])))
    got = dict(zip(run["docno"], run["score"]))
    assert set(got) == set(expected)  # d3 has "dog" only: a candidate, scored without the phrase
    for docno, score in expected.items():
        assert got[docno] == pytest.approx(score, rel=1e-12)


def test_the_weights_file_says_why_each_query_scored_as_it_did():
    from irgrid.phrases.weights import phrase_weights

    topics = topics_with_phrases(("hot dog stand", ["hot dog"]), ("cold dog", []), ("sun dog", ["sun dog"]),
                                 ("hot cat", ["hot cat"]))
    points = [{"mu": 4.0, "t1": t1} for t1 in (0.3, 0.1)]
    table = phrase_weights(TinyIndex(DOCS), topics, "pm", points)
    rows = {(q, p): row for q, p, row in zip(table["qid"], table["phrase"].fillna(""), table.to_dict("records"))}
    hot_dog = rows[("q0", "hot dog")]
    # counted by hand in test_pm_equals_the_formula_computed_by_hand: df 2, cf 3, x 0.601 >= t2: lambda_max
    assert (hot_dog["df"], hot_dog["cf"], hot_dog["status"]) == (2, 3, "phrase")
    assert hot_dog["x"] == pytest.approx((math.log(5 / 2) - (math.log(5 / 3) + math.log(5 / 4)) / 2) / math.log(5 / 2))
    # one column per weight setting, ascending in t1, mu left out (it does not change lambda)
    settings = [c for c in table.columns if c.startswith("lambda")]
    assert settings == ["lambda[t1=0.1,t2=0.4,lambda_max=0.9,pmi_threshold=1]",
                        "lambda[t1=0.3,t2=0.4,lambda_max=0.9,pmi_threshold=1]"]
    assert hot_dog[settings[0]] == hot_dog[settings[1]] == pytest.approx(0.9)
    assert rows[("q1", "")]["status"] == "no phrase: scored as words"
    # "sun dog" is adjacent in d2 ("hot sun dog") only; d5 has "sun" without "dog": df 1
    assert rows[("q2", "sun dog")]["df"] == 1
    # "cat" is in no document: the phrase goes with its word
    assert rows[("q3", "hot cat")]["status"].startswith("a word of the phrase is absent")


# Five-word noun phrases a parse gives ("the wide wind tunnel test section" without its article),
# and documents holding their words in order, so that a window of five, of four and the pairs all match.
LONG_DOCS = {
    "d1": "wide wind tunnel test section".split(),
    "d2": "wind tunnel test section wide".split(),
    "d3": "wide wind tunnel".split(),
    "d4": "test section of a wind tunnel".split(),
    "d5": "wide open section".split(),
}
LONG_QUERY = "wide wind tunnel test section"


def test_phrase_paper_caps_a_phrase_at_its_last_four_words():
    from irgrid.analysis.tokenize import head_words
    from irgrid.phrases.lists import MAX_PHRASE_WORDS

    # the paper's dictionary held phrases of 4 words or fewer, as a phrase list here must
    assert get_model("pm").max_phrase_words == MAX_PHRASE_WORDS == 4
    assert head_words("new large scale parallel computer architecture", 4) == "scale parallel computer architecture"
    # words as a phrase list counts them (a hyphen separates two); the kept span is the text's own
    assert head_words("low-speed wind tunnel section", 4) == "speed wind tunnel section"
    assert head_words("the low-speed  Wind Tunnel", 4) == "low-speed Wind Tunnel"
    assert head_words("wind tunnel test section", 4) == "wind tunnel test section"
    assert head_words("中华人民共和国", 4) == "中华人民共和国"  # a segmenter's word is one word, never cut
    # scored exactly as the phrase of its last four words, in every phrase family
    long = topics_with_phrases((LONG_QUERY, [LONG_QUERY]))
    cut = topics_with_phrases((LONG_QUERY, ["wind tunnel test section"]))
    for family, point in [("p", {}), ("pu", {"phrase_weight": 0.3}), ("pm", ALL_PHRASES)]:
        assert scores_of(run_of(LONG_DOCS, family, point, long)) == scores_of(run_of(LONG_DOCS, family, point, cut))
    # by hand, p on d2 ("wind tunnel test section wide"): log p(wide|D) + log p(#1(wind tunnel test section)|D);
    # |C| = 5 + 5 + 3 + 6 + 3 = 22, cf(wide) = 4 (d1 d2 d3 d5), cf(#1 of the last four) = 2 (d1 d2); the
    # whole phrase's window would be in d1 only, and p would score the five words' window, not this one
    mu, collection, length = 4.0, 22, 5
    expected = (math.log((1 + mu * 4 / collection) / (length + mu))
                + math.log((1 + mu * 2 / collection) / (length + mu)))
    got = scores_of(run_of(LONG_DOCS, "p", {"mu": mu}, long))
    assert got[("q0", "d2")] == pytest.approx(expected, rel=1e-12)


def test_term_dependence_models_keep_a_long_phrase_whole():
    # the ADM paper split every parser phrase into adjacent pairs, however long: the pair (wide, wind)
    # of the five-word phrase counts, so the scores differ from those of its last four words
    assert get_model("adm").max_phrase_words is None and get_model("culm").max_phrase_words is None
    long = topics_with_phrases((LONG_QUERY, [LONG_QUERY]))
    cut = topics_with_phrases((LONG_QUERY, ["wind tunnel test section"]))
    for family in ("culm", "adm"):
        assert scores_of(run_of(LONG_DOCS, family, {}, long)) != scores_of(run_of(LONG_DOCS, family, {}, cut))


def test_the_weights_file_shows_the_phrase_as_the_model_cut_it():
    from irgrid.phrases.weights import phrase_weights

    table = phrase_weights(TinyIndex(LONG_DOCS), topics_with_phrases((LONG_QUERY, [LONG_QUERY])), "pm", [{}])
    assert table["phrase"].tolist() == ["wind tunnel test section"]
    # #1(wind tunnel test section): d1 and d2
    assert table["df"].tolist() == [2]


def same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    """Equal to the last bit, the sign of a zero included (== takes -0.0 for 0.0)."""
    return got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()


KERNEL_POINTS = {
    "uni": [{}],
    "p": [{}],
    # weight 0: every phrase's words get -0.0 (the scalar code's -lambda * qtf)
    "pu": [{"phrase_weight": 0.0}, {"phrase_weight": 0.3}, {"phrase_weight": 1.0}],
    "pm": [{"t1": 0.1, "t2": 0.4}, ALL_WORDS, ALL_PHRASES, {"t1": 0.0, "t2": 0.0, "pmi_threshold": 0.5}],
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=docs_strategy, queries=queries_with_phrases(), other=queries_with_phrases(),
       family=st.sampled_from(sorted(KERNEL_POINTS)))
def test_the_kernel_inputs_are_the_scalar_codes_to_the_bit(docs, queries, other, family):
    # PhraseModel.kernel_inputs computes QLDirichlet's per-term loop over arrays, its per-query
    # inputs cached for the set: at each point, and for a second query set after the first, the
    # same bits as the scalar code (query_constants) and the same weights as term_weight
    from irgrid.models.lm import QLDirichlet

    scorer = Scorer(TinyIndex({f"d{i}": words for i, words in enumerate(docs)}))
    model = get_model(family)
    points = [model.check_point({"mu": mu, **point}) for mu in (0.5, 100.0) for point in KERNEL_POINTS[family]]
    for topics in (topics_with_phrases(*queries), topics_with_phrases(*other)):
        prepared = scorer.prepare(topics, model, points)
        for point in points:
            got = model.kernel_inputs(prepared.terms, prepared.query_term_offsets, scorer.stats, point)
            expected = QLDirichlet.kernel_inputs(model, prepared.terms, prepared.query_term_offsets, scorer.stats,
                                                 point)
            assert all(same_bits(g, e) for g, e in zip(got, expected)), point
            weights = model.term_weights(prepared.terms, scorer.stats, point)
            assert same_bits(weights, np.array([model.term_weight(t, point) for t in prepared.terms], np.float64))


def test_a_features_annotation_is_set_on_a_copy_with_every_other_field_kept():
    from dataclasses import fields, replace

    from irgrid.models.base import QueryFeature
    from irgrid.models.phrase import with_annotation

    feature = QueryFeature("#1(a b)", 2, 3, 4, np.array([1, 2], np.int32), np.array([1, 1], np.int32),
                           feature="f", group="P0", group_size=2, values={"depth": np.zeros(2)})
    annotation = Inseparability(True, 3, 4, 0.5, 0.25, 0.5, 1.5)
    got, expected = with_annotation(feature, annotation), replace(feature, annotation=annotation)
    assert type(got) is QueryFeature and got is not feature and feature.annotation is None
    assert all(getattr(got, f.name) is getattr(expected, f.name) for f in fields(QueryFeature))
