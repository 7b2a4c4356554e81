"""``tfidf_sentence``: the sentence-retrieval TF-IDF of Allan, Wade & Bolivar (SIGIR 2003).

    score(s, q) = sum_{t in q} log(tf(t, q) + 1) log(tf(t, s) + 1) log((n + 1) / (0.5 + sf(t)))

The expected values are that formula written out with ``math`` over the token lists (n sentences,
sf(t) the sentences holding t), independently of the index and the scorer. The scorer's three
paths (one query, the query set through numpy, the fused kernel) must give the same numbers to the
last bit.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrid.models import CollectionStatistics, QueryTerm, get_model
from irgrid.retrieve import Scorer
from tiny_index import TinyIndex

# n = 4; sf(cat) = 2, sf(dog) = 2, sf(mat) = 1, sf(bird) = 1
SENTENCES = {
    "s1": ["cat", "sat", "mat"],
    "s2": ["cat", "cat", "dog"],
    "s3": ["dog", "bird"],
    "s4": ["fish"],
}


def scores_of(sentences, query, candidates=None):
    """The model's score of each candidate of one query, through the per-query path."""
    model = get_model("tfidf_sentence")
    index = TinyIndex(sentences)
    scorer = Scorer(index)
    topics = pd.DataFrame({"qid": ["q"], "text": [query]})
    if candidates is not None:
        topics["candidates"] = [candidates]
    prepared = scorer.prepare(topics, model)
    point = model.check_point({})
    if candidates is not None:
        docids, scores = scorer.rank_candidates(model, prepared, 0, point, depth=100)
        return {index.docnos[d]: float(s) for d, s in zip(docids, scores)}
    (query_terms,) = prepared
    scores = scorer.score(model, query_terms, point)
    return {index.docnos[d]: float(s) for d, s in zip(query_terms.candidates, scores)}


def test_hand_computed_scores():
    # "cat" twice in the question: its query part is log(2 + 1); sf(cat) = sf(dog) = 2 of n = 4,
    # so both idfs are log(5 / 2.5) = log 2
    scores = scores_of(SENTENCES, "cat cat dog")
    idf = math.log(5 / 2.5)
    assert set(scores) == {"s1", "s2", "s3"}  # s4 holds no query word
    assert scores["s1"] == pytest.approx(math.log(3) * math.log(2) * idf, rel=1e-12)
    assert scores["s2"] == pytest.approx(math.log(3) * math.log(3) * idf + math.log(2) * math.log(2) * idf,
                                         rel=1e-12)
    assert scores["s3"] == pytest.approx(math.log(2) * math.log(2) * idf, rel=1e-12)
    # the same numbers, multiplied out: ln 3 ln 2 ln 2 = 0.527831..., (ln 3)^2 ln 2 + (ln 2)^3 = 1.169617...
    assert scores["s1"] == pytest.approx(0.52783159, rel=1e-7)
    assert scores["s2"] == pytest.approx(1.16961792, rel=1e-7)
    # a rarer word weighs more: sf(mat) = 1, idf log(5 / 1.5)
    assert scores_of(SENTENCES, "mat")["s1"] == pytest.approx(math.log(2) * math.log(2) * math.log(5 / 1.5),
                                                              rel=1e-12)


def test_a_word_in_every_sentence_still_counts():
    # sf = n: idf log((n + 1) / (n + 0.5)) > 0, unlike ln(N/df) = 0 of SMART's tfidf
    everywhere = {"x1": ["t"], "x2": ["t", "t", "u"]}
    scores = scores_of(everywhere, "t")
    assert scores["x1"] == pytest.approx(math.log(2) * math.log(2) * math.log(3 / 2.5), rel=1e-12)
    assert scores["x2"] == pytest.approx(math.log(2) * math.log(3) * math.log(3 / 2.5), rel=1e-12)
    assert scores["x2"] > scores["x1"] > 0


def test_re_ranking_scores_a_candidate_without_a_question_word_zero():
    scores = scores_of(SENTENCES, "cat dog", candidates=["s2", "s4", "s1"])
    assert list(scores) == ["s2", "s1", "s4"]
    assert scores["s4"] == 0.0


def test_the_scoring_paths_agree_to_the_bit():
    model = get_model("tfidf_sentence")
    point = model.check_point({})
    topics = pd.DataFrame({"qid": ["a", "b", "c"], "text": ["cat cat dog", "bird mat zz", "dog dog dog fish"]})
    for threads in (1, 2):
        scorer = Scorer(TinyIndex(SENTENCES), threads=threads)
        prepared = scorer.prepare(topics, model, [point])
        one_by_one = np.concatenate([scorer.score(model, prepared[q], point) for q in range(len(prepared))])
        assert np.array_equal(scorer.score_all(model, prepared, point), one_by_one)
        # the fused kernel's run against the per-query path's run
        per_query = scorer._run_per_query(model, list(prepared), point, 10)
        fused = scorer.run(model, prepared, point, 10)
        assert model.weighting is not None
        pd.testing.assert_frame_equal(fused.reset_index(drop=True), per_query.reset_index(drop=True),
                                      check_exact=True, check_dtype=False)
        assert fused["score"].tolist()[0] == pytest.approx(1.16961792, rel=1e-7)  # query a's best: s2


# ------------------------------------------------------------------ the formula on random collections

WORDS = ["a", "b", "c", "d", "e"]
sentence_lists = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), min_size=1, max_size=12)
question = st.lists(st.sampled_from(WORDS + ["zz"]), min_size=1, max_size=5)


def reference(sentences: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """The formula over the token lists: every sentence holding a query word."""
    n = len(sentences)
    out = {}
    for docno, tokens in sentences.items():
        matched = [(t, qtf) for t, qtf in Counter(query).items() if t in tokens]
        if matched:
            out[docno] = sum(math.log(qtf + 1) * math.log(tokens.count(t) + 1)
                             * math.log((n + 1) / (0.5 + sum(t in s for s in sentences.values())))
                             for t, qtf in matched)
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=sentence_lists, query=question)
def test_scores_equal_the_formula_on_random_collections(docs, query):
    sentences = {f"s{i:02d}": tokens for i, tokens in enumerate(docs)}
    ours = scores_of(sentences, " ".join(query))
    expected = reference(sentences, query)
    assert set(ours) == set(expected)
    for docno, value in expected.items():
        assert ours[docno] == pytest.approx(value, rel=1e-12)


def contribution(tf, qtf, sf, n, length=1000):
    """One query term's share of a sentence's score, as the scorer forms it (query weight times posting part)."""
    model = get_model("tfidf_sentence")
    term = QueryTerm("t", qtf, sf, sf, np.array([0], dtype=np.int32), np.array([tf], dtype=np.int32))
    stats = CollectionStatistics(num_docs=n, total_length=n * length, avg_doc_length=float(length))
    part = model.term_scores(term, np.array([float(length)]), np.array([1.0]), stats, {})
    return model.term_weight(term, {}) * float(part[0])


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 10**7), data=st.data(), tf=st.integers(1, 500), qtf=st.integers(1, 20))
def test_positive_and_monotone_in_tf_qtf_and_rarity(n, data, tf, qtf):
    sf = data.draw(st.integers(1, n))
    value = contribution(tf, qtf, sf, n)
    assert value > 0  # also at sf = n: (n + 1) / (n + 0.5) > 1
    assert contribution(tf + 1, qtf, sf, n) > value  # more occurrences in the sentence
    assert contribution(tf, qtf + 1, sf, n) > value  # a question word repeated
    if sf < n:
        assert contribution(tf, qtf, sf + 1, n) < value  # a commoner word weighs less
    # no length normalisation: the sentence's length does not enter
    assert contribution(tf, qtf, sf, n, length=5000) == value
