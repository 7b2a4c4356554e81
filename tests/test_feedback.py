"""Pseudo-relevance feedback (irgrid.feedback): RM3 against hand-computed relevance models, the
weighted-query hook against repeated query terms, and the feedback stage against a brute-force
re-implementation on a hand-made index. Anserini's own runs: tests/test_peers.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irgrid.errors import ConfigError
from irgrid.feedback import stage
from irgrid.feedback.axiom import JavaRandom, _mutual_information, pool
from irgrid.feedback.rm3 import anserini_document_vector, anserini_relevance_model, relevance_model
from irgrid.models import get_model
from irgrid.models.feedback import feedback_model
from irgrid.models.sentence import SentenceMRF
from irgrid.retrieve import Scorer, retrieve_grid
from tests.common import record_first_stages
from tests.tiny_index import TinyForwardIndex

DOCS = {
    "d1": "apple banana apple cherry".split(),
    "d2": "banana durian durian elder".split(),
    "d3": "apple cherry fig fig fig".split(),
    "d4": "grape honeydew kiwi".split(),
    "d5": "apple banana grape".split(),
}


def topics(*texts):
    import pandas as pd

    return pd.DataFrame({"qid": [str(i + 1) for i in range(len(texts))], "text": list(texts)})


# --- the relevance models, by hand ----------------------------------------------------------------


def test_anserini_relevance_model_by_hand():
    # doc 1: x 2, y 1 (norm 3), score 2; doc 2: x 1, z 1 (norm 2), score 1
    # p(x) = 2/3*2 + 1/2*1 = 11/6, p(y) = 2/3, p(z) = 1/2; two terms kept: x, y; L1: 11/15, 4/15
    vectors = [{"x": np.float32(2), "y": np.float32(1)}, {"x": np.float32(1), "z": np.float32(1)}]
    expanded = anserini_relevance_model(["a", "b", "b"], vectors, [2.0, 1.0], fb_terms=2, original_query_weight=0.5)
    expected = {"a": 0.5 / 3, "b": 0.5 * 2 / 3, "x": 0.5 * 11 / 15, "y": 0.5 * 4 / 15}
    assert set(expanded) == set(expected)
    for word, weight in expected.items():
        assert expanded[word] == pytest.approx(weight, rel=1e-6)


def _rm3reranker_weights(vectors, scores):
    """p(w|R) before pruning, as Rm3Reranker.estimateRelevanceModel's loops compute it: for each word,
    documents in rank order, fbWeight += (weight / norm) * score, every operation in float."""
    f32 = np.float32
    norms = [f32(sum(float(v) for v in vector.values())) for vector in vectors]
    out = {}
    for word in sorted({word for vector in vectors for word in vector}):
        weight = f32(0)
        for vector, norm, score in zip(vectors, norms, scores):
            if norm > f32(0.001):
                weight = f32(weight + f32(f32(vector.get(word, f32(0)) / norm) * f32(score)))
        out[word] = weight
    return out


def test_anserini_relevance_model_sums_in_floats_as_rm3reranker():
    rng = np.random.default_rng(7)
    vocabulary = [f"w{i}" for i in range(60)]
    for _ in range(200):
        vectors = [{str(w): np.float32(rng.integers(1, 9)) for w in rng.choice(vocabulary, int(rng.integers(0, 15)),
                                                                               replace=False)}
                   for _ in range(int(rng.integers(1, 8)))]
        scores = [float(np.float32(s)) for s in rng.uniform(0, 25, len(vectors))]
        fb_terms = int(rng.integers(1, 30))
        expected = _rm3reranker_weights(vectors, scores)
        kept = sorted(expected, key=lambda word: (-float(expected[word]), word))[:fb_terms]
        norm = sum(float(expected[word]) for word in kept)
        relevance = {word: np.float32(float(expected[word]) / norm) for word in kept}
        # original query weight 0: the expanded query is the relevance model, to the float
        got = anserini_relevance_model(["w0"], vectors, scores, fb_terms, 0.0)
        assert {w: v for w, v in got.items() if v} == {w: float(v) for w, v in relevance.items() if v}


def test_anserini_cuts_equal_weights_by_the_word():
    # y and w weigh the same: FeatureVector (Anserini 0.21) orders equal weights by the word, so w stays
    vectors = [{"y": np.float32(1), "w": np.float32(1), "x": np.float32(2)}]
    expanded = anserini_relevance_model([], vectors, [1.0], fb_terms=2, original_query_weight=0.0)
    assert set(expanded) == {"w", "x"}
    assert expanded["x"] == pytest.approx(2 / 3, rel=1e-6) and expanded["w"] == pytest.approx(1 / 3, rel=1e-6)


def test_anserini_document_vector_filters_words_as_rm3reranker():
    counts = {"ok": 3, "a": 9, "x" * 21: 9, "x" * 20: 1, "Upper": 9, "déjà": 9, "1984": 2, "common": 9}
    df = {word: 1 for word in counts} | {"common": 11}  # 11 of 100 documents: over 10%
    vector = anserini_document_vector(counts, df, num_docs=100, fb_terms=10)
    assert dict(vector) == {"ok": 3, "x" * 20: 1, "1984": 2}
    # exactly 10% is kept (the filter drops a ratio above 0.1)
    assert "common" in anserini_document_vector(counts, df | {"common": 10}, num_docs=100, fb_terms=10)
    # cut to the fb_terms most frequent, equal counts by the word
    assert list(anserini_document_vector({"bb": 1, "aa": 1, "cc": 2}, dict.fromkeys(["aa", "bb", "cc"], 1), 100, 2)) == [
        "cc", "aa"]


def test_textbook_relevance_model_by_hand():
    # p(D|Q) = exp(s) / sum exp(s) over scores log 3 and log 1: 3/4 and 1/4
    documents = [{"x": 1, "y": 3}, {"x": 2, "z": 2}]
    expanded = relevance_model(["q"], documents, [4, 4], [math.log(3), 0.0], fb_terms=2, original_query_weight=0.2)
    p = {"x": 1 / 4 * 3 / 4 + 2 / 4 * 1 / 4, "y": 3 / 4 * 3 / 4, "z": 2 / 4 * 1 / 4}  # 5/16, 9/16, 2/16
    kept = p["x"] + p["y"]
    assert expanded == pytest.approx({"q": 0.2, "x": 0.8 * p["x"] / kept, "y": 0.8 * p["y"] / kept})
    assert sum(expanded.values()) == pytest.approx(1.0)


# --- Ax ---------------------------------------------------------------------------------------------


def test_java_random_draws_as_the_jdk():
    # printed by OpenJDK 17: new Random(seed), six nextInt(3204) then three nextInt(1024) (a power of two)
    expected = {42: [530, 1407, 324, 1160, 1494, 1825, 283, 724, 681],
                0: [2436, 52, 2353, 1235, 1799, 1289, 563, 119, 611],
                2147483647: [189, 1285, 1203, 1775, 1340, 1198, 69, 48, 466]}
    for seed, draws in expected.items():
        random = JavaRandom(seed)
        assert [random.next_int(3204) for _ in range(6)] + [random.next_int(1024) for _ in range(3)] == draws


def test_ax_pool_keeps_the_top_documents_and_draws_the_rest():
    by_docno = np.arange(3204)[::-1]  # position i of the docno order holds docid 3203 - i
    chosen = pool([7, 8], by_docno, 6, seed=42)
    # Random(42) draws positions 530, 1407, 324, 1160: docids 3203 - position
    assert chosen == {7, 8, 3203 - 530, 3203 - 1407, 3203 - 324, 3203 - 1160}
    assert pool(range(10), by_docno, 5, seed=1) == set(range(10))  # already full


def test_mutual_information_by_hand():
    # 8 documents; x in 4 of them; y1 in the same 4, y2 in 2 of x's and 2 others, y3 in all 8
    mi = _mutual_information(4, np.array([4, 4, 8]), np.array([4, 2, 4]), 8)
    # identical halves: I = 2 * (1/2 log 2) = log 2; independent: 0; a word in every document: 0
    assert mi == pytest.approx([math.log(2), 0.0, 0.0], abs=1e-7)


# --- weighted queries ------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["bm25", "bm25_lucene", "ql_dirichlet", "ql_lucene", "ql_jm", "kl_ml"])
def test_whole_weights_score_as_repeated_query_terms(family):
    index = TinyForwardIndex(DOCS)
    model = get_model(family)
    point = model.check_point({})
    scorer = Scorer(index)
    repeated = scorer.run(model, scorer.prepare(topics("apple apple banana fig"), model, [point]), point, 10)
    weighted = scorer.prepare_weighted({"1": {"apple": 2.0, "banana": 1.0, "fig": 1.0, "absent": 5.0}})
    run = scorer.run(model, weighted, point, 10)
    assert list(run["docno"]) == list(repeated["docno"])
    assert np.allclose(run["score"], repeated["score"], rtol=1e-12)


# --- the feedback stage ----------------------------------------------------------------------------


def brute_force_rm3_bm25(index, query: str, point: dict, depth: int = 10) -> list[tuple[str, float]]:
    """bm25+rm3_anserini from the documents' token lists: first-stage BM25 by hand, the relevance
    model of rm3.anserini_relevance_model, the expanded query scored term by term."""
    docs = list(index.docs.values())
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)

    def bm25(term, doc):
        df = sum(term in d for d in docs)
        tf = doc.count(term)
        if not tf:
            return 0.0
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + point["k1"] * (1 - point["b"] + point["b"] * len(doc) / avgdl))

    tokens = query.split()
    first = sorted(((sum(bm25(t, d) for t in tokens), i) for i, d in enumerate(docs) if set(tokens) & set(d)),
                   key=lambda item: (-item[0], index.docnos[item[1]]))[:int(point["fb_docs"])]
    df = {t: sum(t in d for d in docs) for d in docs for t in d}
    vectors = [anserini_document_vector({t: docs[i].count(t) for t in docs[i]}, df, n, int(point["fb_terms"]))
               for _, i in first]
    expanded = anserini_relevance_model(tokens, vectors, [s for s, _ in first], int(point["fb_terms"]),
                                        point["original_query_weight"])
    scored = [(sum(w * bm25(t, d) for t, w in expanded.items()), index.docnos[i]) for i, d in enumerate(docs)
              if set(expanded) & set(d)]
    return [(docno, score) for score, docno in sorted(scored, key=lambda item: (-item[0], item[1]))[:depth]]


def test_feedback_run_equals_brute_force():
    # df filter: in 5 documents every word is in more than 10% of them; 100 padding documents keep it off
    docs = DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)}
    index = TinyForwardIndex(docs)
    point = {"k1": 1.2, "b": 0.75, "fb_docs": 2, "fb_terms": 3, "original_query_weight": 0.6}
    run = retrieve_grid(index, topics("apple banana"), "bm25+rm3_anserini", [point], depth=10)[0]
    expected = brute_force_rm3_bm25(index, "apple banana", point)
    assert list(run["docno"]) == [docno for docno, _ in expected]
    assert np.allclose(run["score"], [score for _, score in expected], rtol=1e-6)


def test_a_feedback_grid_runs_its_first_stage_once_per_family_point(monkeypatch):
    calls = []
    original = stage.first_stage

    def counted(scorer, model, queries, point, depth):
        calls.append((dict(point), depth))
        return original(scorer, model, queries, point, depth)

    monkeypatch.setattr(stage, "first_stage", counted)
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)})
    grid = [{"k1": k1, "b": 0.75, "fb_docs": fb_docs, "fb_terms": fb_terms, "original_query_weight": weight}
            for k1 in (0.9, 1.2) for fb_docs in (1, 3) for fb_terms in (2, 5) for weight in (0.3, 0.7)]
    runs = retrieve_grid(index, topics("apple banana", "durian"), "bm25+rm3_anserini", grid, depth=10)
    assert len(runs) == 16
    # one first stage per k1, as deep as the deepest fb_docs
    assert calls == [({"k1": 0.9, "b": 0.75}, 3), ({"k1": 1.2, "b": 0.75}, 3)]
    # each point's run is the one it gets alone
    for point, run in zip(grid, runs):
        alone = retrieve_grid(index, topics("apple banana", "durian"), "bm25+rm3_anserini", [point], depth=10)[0]
        assert run.equals(alone)


@pytest.mark.parametrize("family", ["bm25", "ql_dirichlet", "ql_lucene", "tfidf", "inl2"])
def test_feedback_works_with_every_bag_of_words_family(family):
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)})
    run = retrieve_grid(index, topics("apple banana"), f"{family}+rm3", [{}], depth=10)[0]
    # the expansion reaches documents without a query word (d3 shares cherry and fig with d1)
    assert "d3" in set(run["docno"]) and len(run) <= 10


def test_feedback_families_declare_their_parameters():
    model = get_model("bm25_lucene+rm3_anserini")
    assert model.parameter_names() == ["k1", "b", "fb_docs", "fb_terms", "original_query_weight"]
    assert model.check_point({}) == {"k1": 0.9, "b": 0.4, "fb_docs": 10, "fb_terms": 10, "original_query_weight": 0.5}
    with pytest.raises(ConfigError, match="fb_docs=2.5 is not a whole number"):
        model.check_point({"fb_docs": 2.5})
    with pytest.raises(ConfigError, match="original_query_weight"):
        model.check_point({"original_query_weight": 1.5})
    with pytest.raises(ConfigError, match="unknown feedback method 'rm9'"):
        get_model("bm25+rm9")
    with pytest.raises(ConfigError, match="unknown model family 'bm26'"):
        get_model("bm26+rm3")
    # a feature family on no registered bag-of-words family, declaring none (the sentence MRF declares ql_jm)
    lonely = type("Lonely", (SentenceMRF,), {"name": "lonely", "expands_as": ""})
    with pytest.raises(ConfigError, match="'lonely' is built on no bag-of-words family"):
        feedback_model("lonely+rm3", {"lonely": lonely, "sdm": type(get_model("sdm"))})
    with pytest.raises(ConfigError, match="has a feedback stage already"):
        get_model("bm25+rm3+rm3")
    with pytest.raises(ConfigError, match="drop_unseen"):  # the first-stage family's own checks still run
        get_model("sdm+rm3").check_point({"drop_unseen": 0.5})


@pytest.mark.parametrize(("family", "expansion"), [("sdm", "ql_dirichlet"), ("fdm", "ql_dirichlet"),
                                                   ("pm", "ql_dirichlet"), ("adm", "kl_ml"), ("bg", "kl_ml"),
                                                   ("bm25", "bm25"), ("ql_lucene", "ql_lucene"),
                                                   ("mrf_sentence", "ql_jm")])
def test_a_feature_familys_expanded_query_is_scored_by_its_bag_of_words_family(family, expansion):
    model = get_model(f"{family}+rm3")
    assert type(model).expansion is type(get_model(expansion))
    # each of the expansion family's parameters takes a value of the model's point
    point = type(model).expansion_point(model.check_point({}))
    assert list(point) == type(model).expansion.parameter_names()
    assert set(point.values()) <= set(model.check_point({}).values())


def test_sdm_with_rm3_ranks_as_query_likelihood_with_rm3_where_sdm_is_query_likelihood():
    # SDM with lambda_T = 1 scores a one-word query as query likelihood does (no pair, so no window;
    # the one term's group average is the term), so RM3's posterior over the feedback documents, the
    # expanded query and the second stage (query likelihood at the same mu) are the same
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad", "apple"] if i % 7 == 0 else ["pad"] for i in range(100)})
    feedback = {"fb_docs": 3, "fb_terms": 4, "original_query_weight": 0.4}
    sdm = {"mu": 30.0, "lambda_t": 1.0, "lambda_o": 0.0, "lambda_u": 0.0, **feedback}
    queries = topics("apple", "fig", "banana")
    run = retrieve_grid(index, queries, "sdm+rm3", [sdm], depth=20)[0]
    expected = retrieve_grid(index, queries, "ql_dirichlet+rm3", [{"mu": 30.0, **feedback}], depth=20)[0]
    assert len(run) > 3
    assert list(zip(run["qid"], run["docno"])) == list(zip(expected["qid"], expected["docno"]))
    assert np.allclose(run["score"], expected["score"], rtol=1e-9)


def test_rm3_leaves_out_words_of_more_than_fb_max_df_of_the_documents():
    # of 25 documents: apple in 24, banana in 3, cherry and grape in 2 each
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad", "apple"] for i in range(20)})
    feedback_docs = np.array([0, 4])  # d1, d5: both with apple and banana
    rankings = {"1": (feedback_docs, np.array([-1.0, -2.0]))}
    terms_of = stage.document_terms(index, feedback_docs)
    point = {"fb_docs": 2, "fb_terms": 10, "original_query_weight": 0.5}
    every_word = stage.expanded_queries("rm3", index, {"1": ["banana"]}, rankings, terms_of, point)["1"]
    filtered = stage.expanded_queries("rm3", index, {"1": ["banana"]}, rankings, terms_of,
                                      {**point, "fb_max_df": 0.15})["1"]
    assert "apple" in every_word and "apple" not in filtered
    # by hand: d1 = apple banana apple cherry, d5 = apple banana grape; p(D|Q) = softmax(-1, -2);
    # p(w|D) = tf / |D| with |D| the whole document's length, apple left out, then renormalised
    p1, p5 = 1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1))
    relevance = {"banana": p1 / 4 + p5 / 3, "cherry": p1 / 4, "grape": p5 / 3}
    total = sum(relevance.values())
    expected = {word: 0.5 * (word == "banana") + 0.5 * p / total for word, p in relevance.items()}
    assert filtered.keys() == expected.keys()
    assert all(math.isclose(filtered[word], expected[word], rel_tol=1e-12) for word in expected)


def test_anserinis_rm3_refuses_negative_first_stage_scores():
    # it weighs a feedback document by its raw score (Lucene's are >= 0); a log-likelihood would turn
    # the relevance model upside down
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)})
    with pytest.raises(ConfigError, match=r"must not be negative.*'\+rm3'"):
        retrieve_grid(index, topics("apple banana"), "ql_dirichlet+rm3_anserini", [{"mu": 30.0}], depth=10)
    assert len(retrieve_grid(index, topics("apple banana"), "ql_lucene+rm3_anserini", [{"mu": 30.0}], depth=10)[0])


def test_sdm_with_rm3_takes_its_feedback_documents_from_sdm(monkeypatch):
    calls = record_first_stages(monkeypatch)
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)})
    run = retrieve_grid(index, topics("apple banana"), "sdm+rm3", [{"mu": 30.0}], depth=10)[0]
    assert calls == ["sdm"]
    # the expansion reaches documents without a query word (d3 shares cherry and fig with d1)
    assert "d3" in set(run["docno"])


def test_ax_runs_on_a_collection_smaller_than_its_pool():
    index = TinyForwardIndex(DOCS)
    model = get_model("bm25+ax_anserini")
    assert model.parameter_names() == ["k1", "b", "fb_docs", "fb_terms", "ax_n", "ax_beta", "ax_seed"]
    # a pool of 2 x 30 documents in a collection of 5: the whole collection, then the query is re-weighted
    run = retrieve_grid(index, topics("apple banana"), "bm25+ax_anserini", [{"fb_docs": 2}], depth=10)[0]
    assert set(run["docno"]) <= set(DOCS) and len(run) > 0
    with pytest.raises(ConfigError, match="ax_seed=1.5 is not a whole number"):
        model.check_point({"ax_seed": 1.5})


@pytest.mark.parametrize("as_arrow", [True, False])
def test_the_second_stage_gives_the_same_runs_a_block_of_queries_at_a_time(monkeypatch, as_arrow):
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad"] for i in range(100)})
    queries = topics("apple banana", "durian", "fig grape", "kiwi apple", "elder")
    grid = [{"k1": 1.2, "b": 0.75, "fb_docs": fb_docs, "fb_terms": 3, "original_query_weight": 0.5}
            for fb_docs in (1, 3)]
    whole = retrieve_grid(index, queries, "bm25+rm3_anserini", grid, depth=10, as_arrow=as_arrow)
    words = {"1": ["apple", "banana"], "2": ["durian"], "3": ["fig", "grape"]}
    # a budget of 4 postings: apple (4) + banana (3) is over it alone, durian (1) + fig (1) + grape (2) is 4
    assert stage.query_blocks(index, words, 4) == [["1"], ["2", "3"]]
    assert stage.query_blocks(index, {}, 4) == [[]]
    monkeypatch.setattr(stage, "FEEDBACK_BLOCK_POSTINGS", 3)  # every query a block of its own
    blocked = retrieve_grid(index, queries, "bm25+rm3_anserini", grid, depth=10, as_arrow=as_arrow)
    for one, other in zip(whole, blocked):
        assert len(one) > 5
        assert one.equals(other)


def test_a_textbook_rm3_grid_with_fb_max_df_gives_each_points_own_run():
    # the filtered counts are made once for the grid and shared by its points
    index = TinyForwardIndex(DOCS | {f"pad{i:03d}": ["pad", "apple"] for i in range(20)})
    grid = [{"mu": 30.0, "fb_docs": fb_docs, "fb_terms": 5, "original_query_weight": 0.5, "fb_max_df": 0.15}
            for fb_docs in (1, 2, 3)]
    queries = topics("banana", "cherry fig")
    runs = retrieve_grid(index, queries, "ql_dirichlet+rm3", grid, depth=10)
    for point, run in zip(grid, runs):
        assert run.equals(retrieve_grid(index, queries, "ql_dirichlet+rm3", [point], depth=10)[0])
        assert len(run) > 2
