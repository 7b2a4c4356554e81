"""ADM (seed 000): the paper's four constraints on the reconstructed weights, and what they do to scores.

C1, C2 constrain the weight of a dependency in the collection, P(wi,wj|C); C3, C4 its weight in
a document, P(wi,wj|D) (docs/models.md, "ADM"). Each is checked twice: as a property of the weight
function over any values where the premise holds (hypothesis), and on a constructed collection
where the premise holds, through the scorer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.features import AnalyzedQuery
from irgrid.models import get_model
from irgrid.retrieve import Scorer, feature_counts
from tiny_index import TinyIndex

ADM = get_model("adm")
weights = st.floats(0.01, 0.99)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 10**6), data=st.data(), alpha=weights)
def test_c1_more_co_occurrence_documents_weigh_more_in_the_collection(n, data, alpha):
    # premise: DF(q1,q2) > DF(q2,q3) and DF(q1) = DF(q3)
    df2 = data.draw(st.integers(1, n))
    df13 = data.draw(st.integers(1, n))
    low = data.draw(st.integers(0, min(df2, df13) - 1))
    high = data.draw(st.integers(low + 1, min(df2, df13)))
    assert ADM.collection_weight(high, df13, df2, n, alpha) > ADM.collection_weight(low, df13, df2, n, alpha)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 10**6), data=st.data(), alpha=weights)
def test_c2_with_equal_co_occurrence_the_more_frequent_term_weighs_more(n, data, alpha):
    # premise: DF(q1,q2) = DF(q2,q3) and DF(q1) > DF(q3)
    df2 = data.draw(st.integers(1, n))
    df3 = data.draw(st.integers(1, n - 1))
    df1 = data.draw(st.integers(df3 + 1, n))
    pair = data.draw(st.integers(0, min(df2, df3)))
    assert ADM.collection_weight(pair, df1, df2, n, alpha) > ADM.collection_weight(pair, df3, df2, n, alpha)


@settings(max_examples=300, deadline=None)
@given(length=st.integers(2, 10**5), data=st.data(), beta=weights)
def test_c3_more_co_occurrences_weigh_more_in_the_document(length, data, beta):
    # premise: C_D(q1,q2) > C_D(q2,q3) and C_D(q1) = C_D(q3)
    c13 = data.draw(st.integers(1, length))
    c2 = data.draw(st.integers(1, length))
    low = data.draw(st.integers(0, 2 * length))
    high = data.draw(st.integers(low + 1, 2 * length + 1))
    assert ADM.document_weight(high, c13, c2, length, beta) > ADM.document_weight(low, c13, c2, length, beta)


@settings(max_examples=300, deadline=None)
@given(length=st.integers(2, 10**5), data=st.data(), beta=weights)
def test_c4_with_equal_co_occurrence_the_more_frequent_term_weighs_more_in_the_document(length, data, beta):
    # premise: C_D(q1,q2) = C_D(q2,q3) and C_D(q1) > C_D(q3)
    c2 = data.draw(st.integers(1, length))
    c3 = data.draw(st.integers(0, length - 1))
    c1 = data.draw(st.integers(c3 + 1, length))
    pair = data.draw(st.integers(0, 2 * length))
    assert ADM.document_weight(pair, c1, c2, length, beta) > ADM.document_weight(pair, c3, c2, length, beta)


# ------------------------------------------------------------------ the same, through the scorer


def prepared_pairs(docs, text, point):
    scorer = Scorer(TinyIndex(docs))
    checked = ADM.check_point(point)
    prepared = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": [text]}), ADM, [checked])
    return scorer, prepared, checked


def pair_weights_in_collection(docs, text, point):
    scorer, prepared, checked = prepared_pairs(docs, text, point)
    terms = prepared.query_terms(0)
    df = {t.term: t.df for t in terms}
    return {t.term: ADM.collection_weight(t.df, df[t.feature.terms[0]], df[t.feature.terms[1]], scorer.stats.num_docs,
                                          checked["alpha"]) for t in terms if t.group.startswith("L")}


def test_c1_on_a_collection():
    # DF(a) = DF(c) = 2; a and b co-occur (window 2) in two documents, b and c in one
    docs = {"d1": "a b x".split(), "d2": "a b y".split(), "d3": "c b z".split(), "d4": "c x x x b".split()}
    weights_ = pair_weights_in_collection(docs, "a b c", {"window": 2})
    assert weights_["#uw2(a b)"] > weights_["#uw2(b c)"]


def test_c2_on_a_collection():
    # DF(a b) = DF(b c) = 1 (window 2); DF(a) = 3 > DF(c) = 1
    docs = {"d1": "a b".split(), "d2": "a x".split(), "d3": "a y".split(), "d4": "b c".split()}
    weights_ = pair_weights_in_collection(docs, "a b c", {"window": 2})
    assert weights_["#uw2(a b)"] > weights_["#uw2(b c)"]


def dependence_scores(docs, text, point):
    scorer, prepared, checked = prepared_pairs(docs, text, point)
    query = prepared[0]
    lengths = scorer.doc_lengths[query.candidates]
    scores = ADM.dependence_scores(query.terms, feature_counts(query), lengths, scorer.stats, checked)
    return dict(zip(np.asarray(scorer.docnos)[query.candidates], scores))


def test_c3_on_a_collection_the_document_with_more_co_occurrences_gains_more():
    # same length, same counts of a and b; a b adjacent twice in d1, once in d2
    docs = {"d1": "a b a b x x".split(), "d2": "a b x a x b".split(), "d3": "x y z".split()}
    scores = dependence_scores(docs, "a b", {"window": 2})
    assert scores["d1"] > scores["d2"] > 0


def test_c4_on_a_collection_the_document_with_more_of_a_term_gains_more():
    # one co-occurrence each (window 2), same length; d1 holds a three times, d2 once
    docs = {"d1": "a b x a x a".split(), "d2": "a b x y x z".split(), "d3": "x y z".split()}
    scores = dependence_scores(docs, "a b", {"window": 2})
    assert scores["d1"] > scores["d2"] > 0


def test_a_pair_common_in_the_collection_adds_less_to_a_document_than_a_rare_one():
    # the RSV divides by P(wi,wj|C): with the same evidence in d1 (each pair adjacent once, each term
    # once), the dependency seen in three documents (a b) is worth less than one seen in one (c d:
    # "c x d" spans 3 > 2), as idf does for terms
    docs = {"d1": "a b c d".split(), "d2": "a b".split(), "d3": "a b".split(), "d4": "c x d".split()}
    common = dependence_scores(docs, "a b", {"window": 2, "beta": 0.9})["d1"]
    rare = dependence_scores(docs, "c d", {"window": 2, "beta": 0.9})["d1"]
    assert rare > common > 0


@pytest.mark.parametrize("text", ["a", "a a", "b zz"])
def test_a_query_without_a_pair_scores_as_kl(text):
    docs = {"d1": "a b".split(), "d2": "a a c".split(), "d3": "b".split()}
    scorer, prepared, checked = prepared_pairs(docs, text, {"mu": 50.0})
    kl = get_model("kl_ml")
    adm_run = scorer.run(ADM, prepared, checked, 10)
    kl_prepared = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": [text]}), kl, [{"mu": 50.0}])
    kl_run = scorer.run(kl, kl_prepared, kl.check_point({"mu": 50.0}), 10)
    pd.testing.assert_frame_equal(adm_run, kl_run, check_exact=True)


def test_parsed_phrases_give_the_pairs():
    parsed = AnalyzedQuery("1", ("effect", "of", "high", "speed", "flow"), (("effect",), ("high", "speed", "flow")))
    compiled = ADM.compile(parsed, [ADM.check_point({"window": 4})])
    assert [str(c.feature) for c in compiled if not c.feature.is_term] == ["#uw4(high speed)", "#uw4(speed flow)"]
    plain = AnalyzedQuery("1", ("effect", "of", "flow"))
    compiled = ADM.compile(plain, [ADM.check_point({"window": 4})])
    assert [str(c.feature) for c in compiled if not c.feature.is_term] == ["#uw4(effect of)", "#uw4(of flow)"]
