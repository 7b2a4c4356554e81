"""The sentence model (mrf_sentence: FIDM, SDM, FDM) and the re-ranking protocol, on hand-parsed sentences.

Expected scores are worked out here from the formulas of docs/models.md ("MRF sentence
retrieval") with the trees drawn in the comments, not taken from the code's output.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.collections.dependency_parse import Parse
from irgrid.features.sentence_parses import SentenceParses
from irgrid.models import get_model
from irgrid.retrieve import Scorer, retrieve_grid
from tiny_index import TinyIndex

# d1  gang members said          said(root) <- members <- gang       depths: said 0, members 1, gang 2
# d2  members of gang            members(root) <- of <- gang         depths: members 0, of 1, gang 2
# d3  prison                     prison(root)
# d4  members said gang          said(root) <- members, said <- gang  (gang and members are siblings)
SENTENCES = {
    "d1": (["gang", "members", "said"], [2, 3, 0]),
    "d2": (["members", "of", "gang"], [0, 1, 2]),
    "d3": (["prison"], [0]),
    "d4": (["members", "said", "gang"], [2, 0, 2]),
}


def parses_of(sentences):
    return {docno: Parse.from_one_based(tokens, heads, ["dep"] * len(tokens))
            for docno, (tokens, heads) in sentences.items()}


def tiny(sentences=SENTENCES):
    index = TinyIndex({docno: tokens for docno, (tokens, _) in sentences.items()})
    return index, SentenceParses(parses_of(sentences), index.docnos, index.analyzer)


def run(index, parses, text, point, family="mrf_sentence", topics=None):
    topics = topics if topics is not None else pd.DataFrame({"qid": ["q"], "text": [text]})
    [ranked] = retrieve_grid(index, topics, family, [point], parses=parses)
    return dict(zip(ranked["docno"], ranked["score"]))


def test_sdm_scores_by_hand():
    index, parses = tiny()
    point = {"alpha_i": 0.5, "lambda_i": 1.0, "lambda_sr": 0.5, "alpha_sr": 0.5, "beta_sr": 0.5}
    scores = run(index, parses, "gang members", point)
    total = 3 + 3 + 1 + 3  # |C|
    cf = {"gang": 3, "members": 3}

    def f_i(term, tf, length):
        return math.log(0.5 * tf / length + 0.5 * cf[term] / total)

    # the clique (gang members): d1 connected, dis 1, h 1 -> closeness 1/4;
    # d2 not connected, dis 2, h 2 -> 1/9; d4 siblings: not connected, dis 2, h 1 -> 1/6
    e = {"d1": 0.5 * 1 + 0.5 * 0.25, "d2": 0.5 * 0 + 0.5 / 9, "d4": 0.5 * 0 + 0.5 / 6}
    background = sum(e.values()) / 4  # averaged over all 4 sentences (d3 has 0)
    for docno in ("d1", "d2", "d4"):
        expected = 0.5 * (f_i("gang", 1, 3) + f_i("members", 1, 3)) * 1.0 \
            + 0.5 * math.log(0.5 * e[docno] + 0.5 * background)
        assert scores[docno] == pytest.approx(expected, rel=1e-12)
    # the connected pair wins: same words, same lengths, only the tree differs
    assert scores["d1"] > scores["d4"] > scores["d2"]
    assert "d3" not in scores  # no query word: not a candidate of the pooled protocol


def test_fdm_noncontiguous_group_by_hand():
    # query "gang said members": contiguous (gang said), (said members), (gang said members);
    # non-contiguous (gang members). With lambda_sr = 0 only the non-contiguous potential adds.
    index, parses = tiny()
    point = {"alpha_i": 0.5, "lambda_i": 1.0, "lambda_sr": 0.0, "lambda_pr": 1.0, "alpha_pr": 0.5, "beta_pr": 1.0,
             "proximity": 2}
    scores = run(index, parses, "gang said members", point)
    base = run(index, parses, "gang said members", {"alpha_i": 0.5})
    # beta_pr = 1: e = BoolSynP = (span <= 2); gang-members span: d1 1, d2 2, d4 2 -> every one proximate
    background = 3 / 4
    for docno in ("d1", "d2", "d4"):
        assert scores[docno] - base[docno] == pytest.approx(math.log(0.5 + 0.5 * background), rel=1e-12)
    point["proximity"] = 1  # now only d1's pair is within 1 link
    scores = run(index, parses, "gang said members", point)
    background = 1 / 4
    assert scores["d1"] - base["d1"] == pytest.approx(math.log(0.5 + 0.5 * background), rel=1e-12)
    assert scores["d2"] - base["d2"] == pytest.approx(math.log(0.5 * background), rel=1e-12)


def test_fidm_is_jelinek_mercer_query_likelihood():
    index, parses = tiny()
    for alpha in (0.1, 0.5, 0.9):
        fidm = run(index, parses, "gang members prison", {"alpha_i": alpha})
        ql = run(index, parses, "gang members prison", {"lambda": alpha}, family="ql_jm")
        assert sorted(fidm) == sorted(ql)
        for docno in fidm:  # the same sum, divided by |Q| = 3 (Indri's #combine)
            assert fidm[docno] * 3 == pytest.approx(ql[docno], rel=1e-12)


def test_sdm_with_no_weight_on_groups_is_fidm_to_the_bit():
    index, parses = tiny()
    fidm = run(index, parses, "gang members said", {"alpha_i": 0.3})
    sdm = run(index, parses, "gang members said", {"alpha_i": 0.3, "lambda_sr": 0.0, "lambda_pr": 0.0,
                                                   "beta_sr": 1.0})
    assert fidm == sdm


def test_model_without_parses_says_what_it_needs():
    index, _ = tiny()
    with pytest.raises(ValueError, match="needs the collection's sentence parses"):
        run(index, None, "gang members", {"lambda_sr": 0.5})


def test_a_parse_missing_for_a_candidate_names_it():
    index, parses = tiny()
    partial = SentenceParses({"d1": parses_of(SENTENCES)["d1"]}, index.docnos, index.analyzer, source="p.parquet")
    with pytest.raises(ValueError, match="p.parquet.*'d2'"):
        run(index, partial, "gang members", {"lambda_sr": 0.5})


def test_a_query_term_absent_from_every_sentence_changes_nothing():
    index, parses = tiny()
    point = {"lambda_sr": 0.5, "lambda_pr": 0.2}
    with_absent = run(index, parses, "gang zebra members", point)
    assert set(with_absent) == {"d1", "d2", "d4"}
    assert all(math.isfinite(score) for score in with_absent.values())


@settings(max_examples=60, deadline=None)
@given(beta=st.floats(0.01, 1.0), alpha=st.floats(0.01, 0.99), lam=st.floats(0.01, 1.0))
def test_connected_beats_unconnected_at_any_setting(beta, alpha, lam):
    # d1 and d4 hold the same words with the same lengths; only d1 connects gang to members
    index, parses = tiny()
    scores = run(index, parses, "gang members", {"lambda_sr": lam, "alpha_sr": alpha, "beta_sr": beta})
    assert scores["d1"] > scores["d4"]


# -- the re-ranking protocol --------------------------------------------------------------------

def test_rerank_ranks_every_candidate_and_only_those():
    index, parses = tiny()
    topics = pd.DataFrame({"qid": ["q"], "text": ["gang members"], "candidates": [["d3", "d2", "d1", "zz"]]})
    for family, point in (("kl_ml", {"mu": 10}), ("tfidf", {}), ("tfidf_sentence", {}),
                          ("mrf_sentence", {"lambda_sr": 0.5})):
        [ranked] = retrieve_grid(index, topics, family, [point], parses=parses)
        # d4 matches but is not a candidate; d3 matches nothing but is one; zz is not in the collection
        assert list(ranked["docno"]) [:2] == ["d1", "d2"]
        assert set(ranked["docno"]) == {"d1", "d2", "d3"}
        assert list(ranked["rank"]) == [1, 2, 3]


def test_rerank_scores_a_candidate_without_query_terms_as_the_model_does():
    index, parses = tiny()
    topics = pd.DataFrame({"qid": ["q"], "text": ["gang"], "candidates": [["d3"]]})
    [ranked] = retrieve_grid(index, topics, "ql_jm", [{"lambda": 0.5}])
    # log(0.5 * 0 / 1 + 0.5 * cf(gang) / |C|) with cf 3, |C| 10
    assert ranked["score"].iloc[0] == pytest.approx(math.log(0.5 * 3 / 10), rel=1e-12)


def test_rerank_breaks_ties_by_docno_not_by_candidate_order():
    docs = {f"s{i:02d}": ["same", "words"] for i in range(6)}
    index = TinyIndex(docs)
    forward = pd.DataFrame({"qid": ["q"], "text": ["same"], "candidates": [list(docs)]})
    backward = pd.DataFrame({"qid": ["q"], "text": ["same"], "candidates": [list(reversed(docs))]})
    [a] = retrieve_grid(index, forward, "tfidf", [{}])
    [b] = retrieve_grid(index, backward, "tfidf", [{}])
    assert list(a["docno"]) == list(b["docno"]) == sorted(docs)


def test_rerank_query_without_candidates_ranks_nothing():
    index, _ = tiny()
    topics = pd.DataFrame({"qid": ["q", "r"], "text": ["gang", "gang"], "candidates": [[], ["d1"]]})
    [ranked] = retrieve_grid(index, topics, "tfidf", [{}])
    assert list(ranked["qid"]) == ["r"]


def test_word_count_counts_question_words_present():
    index = TinyIndex({"a": ["x", "y", "y"], "b": ["x", "z"], "c": ["w"]})
    scores = run(index, None, "x y q y", {"idf": 0}, family="word_count")
    assert scores == {"a": 2.0, "b": 1.0}  # y counted once however often it occurs in a or in the question
    weighted = run(index, None, "x y", {"idf": 1}, family="word_count")
    assert weighted["a"] == pytest.approx(math.log(3 / 2) + math.log(3 / 1))


def test_scorer_paths_agree_for_the_sentence_model():
    # score (one query) and score_all (the query set) give the same numbers
    index, parses = tiny()
    model = get_model("mrf_sentence")
    point = model.check_point({"lambda_sr": 0.3, "lambda_pr": 0.2})
    scorer = Scorer(index)
    topics = pd.DataFrame({"qid": ["a", "b"], "text": ["gang members said", "said gang"]})
    queries = scorer.prepare(topics, model, [point], parses=parses)
    together = scorer.score_all(model, queries, point)
    apart = np.concatenate([scorer.score(model, queries[q], point) for q in range(len(queries))])
    assert np.array_equal(together, apart)


def test_clique_statistics_by_label():
    from irgrid.sentences.diagnostics import clique_statistics

    index, parses = tiny()
    topics = pd.DataFrame({"qid": ["q"], "text": ["gang members"]})
    qrels = pd.DataFrame({"qid": ["q", "q", "q", "q"], "docno": ["d1", "d2", "d3", "d4"], "relevance": [1, 0, 0, 0]})
    table = clique_statistics(index, topics, qrels, parses).set_index(["group", "relevant"])
    # one contiguous group (gang members): connected in d1 only; closeness 1/4 (d1), 1/9 (d2), 1/6 (d4)
    assert table.loc[("contiguous", 1), "cooccurrences"] == 1
    assert table.loc[("contiguous", 1), "connected"] == 1.0
    assert table.loc[("contiguous", 1), "closeness"] == pytest.approx(0.25)
    assert table.loc[("contiguous", 0), "cooccurrences"] == 2
    assert table.loc[("contiguous", 0), "connected"] == 0.0
    assert table.loc[("contiguous", 0), "proximate"] == 1.0  # both within 2 links
    assert table.loc[("contiguous", 0), "closeness"] == pytest.approx((1 / 9 + 1 / 6) / 2)


def test_a_sentence_without_tokens_is_ranked_with_a_finite_score():
    # TrecQA's reader keeps a candidate whose lines are empty as a document of no text: re-ranked, it
    # is scored as a sentence where nothing matched (tf / |S| taken as 0), never NaN
    sentences = dict(SENTENCES, d5=([], []))
    index, parses = tiny(sentences)
    topics = pd.DataFrame({"qid": ["q"], "text": ["gang members"], "candidates": [["d1", "d5"]]})
    for family, point in (("mrf_sentence", {"lambda_sr": 0.5, "lambda_pr": 0.2}), ("kl_ml", {"mu": 10}),
                          ("tfidf", {}), ("tfidf_sentence", {}), ("word_count", {})):
        [ranked] = retrieve_grid(index, topics, family, [point], parses=parses)
        assert list(ranked["docno"]) == ["d1", "d5"]
        assert np.isfinite(ranked["score"]).all()


@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abcd"), min_size=0, max_size=8), min_size=1, max_size=8),
       texts=st.lists(st.lists(st.sampled_from("abcdz"), min_size=1, max_size=4).map(" ".join), min_size=1,
                      max_size=3),
       depth=st.integers(1, 10), seed=st.integers(0, 10**6))
def test_batch_run_equals_per_query_run_and_scores_are_finite(docs, texts, depth, seed):
    # random sentences, each parsed as a chain (every token the head of the next), random docnos
    docnos = [f"d{n:03d}" for n in np.random.default_rng(seed).permutation(len(docs))]
    sentences = {docno: (tokens, ([0] + list(range(1, len(tokens))))[:len(tokens)]) for docno, tokens in zip(docnos, docs)}
    index, parses = tiny(sentences)
    model = get_model("mrf_sentence")
    point = model.check_point({"lambda_sr": 0.3, "lambda_pr": 0.2, "beta_sr": 0.5})
    scorer = Scorer(index)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    prepared = scorer.prepare(topics, model, [point], parses=parses)
    expected = scorer._run_per_query(model, list(prepared), point, depth)
    got = scorer.run(model, prepared, point, depth)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_exact=True,
                                  check_dtype=False)
    assert np.isfinite(got["score"]).all()
