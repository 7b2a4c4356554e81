"""Constraint-violation analysis (irgrid.axioms): prefix scores, the four counts, runs.

References are independent code paths: prefix scores recomputed prefix by prefix in plain
Python (math, Counter) from each model's textbook formula, and violation counts from a plain
loop over the steps that follows the definitions of docs/axioms.md word for word. The test
models are defined here (subclasses of RetrievalModel), so these tests do not depend on the
weighting models of irgrid.models.weighting other than bm25.
"""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrid.analysis import Analyzer
from irgrid.axioms import (
    CONSTRAINTS,
    analyse_run,
    analyse_runs,
    batch_count_violations,
    batch_prefix_scores,
    count_violations,
    prefix_layout,
    prefix_scores,
    summarise_violations,
    violations_from_scores,
)
from irgrid.errors import ConfigError
from irgrid.models import CollectionStatistics, QueryTerm, RetrievalModel, get_model

STATS = CollectionStatistics(num_docs=100, total_length=5000, avg_doc_length=50.0)


def qterms(query: list[str], stats: dict[str, tuple[int, int]] | None = None) -> list[SimpleNamespace]:
    """QueryTerm-like objects (term, qtf, df, cf); default df = 10, cf = 20."""
    stats = stats or {}
    return [SimpleNamespace(term=t, qtf=n, df=stats.get(t, (10, 20))[0], cf=stats.get(t, (10, 20))[1])
            for t, n in sorted(Counter(query).items())]


# ------------------------------------------------------------------------- test models
class TfIdfLength(RetrievalModel):
    """A tf-idf with length normalisation, a |D|u part and a query weight (exercises every hook).

    score = 1/|Q| * ( sum_{t in Q, tf>0} qtf log((N+1)/df) log(1+tf) / (0.5 + 0.5 |D|/avgdl)
                      - 0.1 log(1 + |D|u) )
    """

    name = "test_tfidf"
    parameters = ()

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        idf = math.log((stats.num_docs + 1) / term.df)
        return idf * np.log1p(term.tfs) / (0.5 + 0.5 * doc_lengths / stats.avg_doc_length)

    def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
        return -0.1 * np.log1p(doc_unique_terms)

    def query_weight(self, terms):
        return 1.0 / sum(t.qtf for t in terms)


def tfidf_reference(tf: Counter, dl: int, du: int, query, stats, point) -> float:
    total = sum(t.qtf * math.log((stats.num_docs + 1) / t.df) * math.log(1 + tf[t.term])
                / (0.5 + 0.5 * dl / stats.avg_doc_length) for t in query if tf[t.term] > 0)
    return (total - 0.1 * math.log(1 + du)) / sum(t.qtf for t in query)


def dirichlet_reference(tf: Counter, dl: int, du: int, query, stats, point) -> float:
    mu = point["mu"]
    return sum(t.qtf * math.log((tf[t.term] + mu * t.cf / stats.total_length) / (dl + mu)) for t in query)


def ad_reference(tf: Counter, dl: int, du: int, query, stats, point) -> float:
    delta = point["delta"]
    return sum(t.qtf * math.log((max(tf[t.term] - delta, 0) + delta * du * t.cf / stats.total_length) / dl)
               for t in query)


def bm25_reference(tf: Counter, dl: int, du: int, query, stats, point) -> float:
    k1, b = point["k1"], point["b"]
    total = 0.0
    for t in query:
        idf = math.log(1 + (stats.num_docs - t.df + 0.5) / (t.df + 0.5))
        total += t.qtf * idf * tf[t.term] / (tf[t.term] + k1 * (1 - b + b * dl / stats.avg_doc_length))
    return total


REFERENCES = {
    "test_tfidf": (TfIdfLength(), [{}], tfidf_reference),
    "ql_dirichlet": (get_model("ql_dirichlet"), [{"mu": 2.0}, {"mu": 1000.0}], dirichlet_reference),
    "ql_ad": (get_model("ql_ad"), [{"delta": 0.7}], ad_reference),
    "bm25": (get_model("bm25"), [{"k1": 0.9, "b": 0.4}, {"k1": 1.2, "b": 1.0}, {"k1": 2.0, "b": 0.0}],
             bm25_reference),
}


def naive_prefix_scores(reference, query, doc, stats, point) -> list[float]:
    """Score every prefix separately, from scratch."""
    return [reference(Counter(doc[:i]), i, len(set(doc[:i])), query, stats, point) for i in range(1, len(doc) + 1)]


def naive_counts(scores, doc, query_set, rtol=0.0) -> dict[str, int]:
    """The definitions of docs/axioms.md as a loop over the steps (0-based token index i >= 1)."""
    tol = rtol * max((abs(s) for s in scores if math.isfinite(s)), default=0.0)
    counts = dict.fromkeys(CONSTRAINTS, 0)
    increase = {i: scores[i] - scores[i - 1] for i in range(1, len(doc))}
    for i in range(1, len(doc)):
        d = increase[i]
        if doc[i] in query_set:
            if not d > tol:
                counts["C1"] += 1
            previous = [j for j in range(i) if doc[j] == doc[i]]
            if previous and previous[-1] >= 1:  # the previous occurrence was itself an addition
                if not d - increase[previous[-1]] < -tol:
                    counts["C3"] += 1
        else:
            if not d < -tol:
                counts["C2"] += 1
            if i >= 3 and all(doc[k] not in query_set for k in (i - 2, i - 1, i)):
                r0, r1, r2 = -increase[i - 2], -increase[i - 1], -increase[i]
                if not (r1 - r0 < -tol) or not (r2 - r1 < -tol):
                    counts["C4"] += 1
    counts["length"] = len(doc)
    return counts


# ---------------------------------------------------------------- prefix scores: references
VOCAB = list("abcdefgh")


@st.composite
def scenarios(draw):
    num_docs = draw(st.integers(1, 500))
    avgdl = draw(st.floats(5.0, 200.0))
    total = int(num_docs * avgdl)
    stats = CollectionStatistics(num_docs=num_docs, total_length=total, avg_doc_length=total / num_docs)
    doc = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40))
    query = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6))
    term_stats = {}
    for term in sorted(set(query)):
        df = draw(st.integers(1, num_docs))
        term_stats[term] = (df, draw(st.integers(df, 5 * df)))
    return stats, doc, qterms(query, term_stats)


@pytest.mark.parametrize("family", sorted(REFERENCES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_prefix_scores_equal_scoring_each_prefix_separately(family, scenario):
    stats, doc, query = scenario
    model, points, reference = REFERENCES[family]
    for point in points:
        got = prefix_scores(model, point, query, doc, stats)
        expected = naive_prefix_scores(reference, query, doc, stats, point)
        assert got.shape == (len(doc),)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


class Counting(TfIdfLength):
    name = "counting"

    def __init__(self):
        self.term_calls, self.document_calls = [], 0

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        self.term_calls.append(term.term)
        assert len(term.docids) == len(term.tfs) == len(doc_lengths) == len(doc_unique_terms)
        assert np.all(term.tfs > 0)
        return super().term_scores(term, doc_lengths, doc_unique_terms, stats, point)

    def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
        self.document_calls += 1
        return super().document_scores(doc_lengths, doc_unique_terms, terms, stats, point)


def test_one_model_call_per_query_term_for_all_prefixes_of_all_documents():
    rng = np.random.default_rng(3)
    docs = [list(rng.choice(VOCAB, size=int(n))) for n in rng.integers(0, 60, size=50)]
    model = Counting()
    query = qterms(["a", "b", "b", "zz"])  # zz occurs in no document: never scored
    scores, layout = batch_prefix_scores(model, {}, query, docs, STATS)
    assert model.term_calls == ["a", "b"] and model.document_calls == 1
    assert len(scores) == sum(map(len, docs))
    for d, doc in enumerate(docs):  # the batch gives each document's own prefix scores
        own = prefix_scores(TfIdfLength(), {}, query, doc, STATS)
        np.testing.assert_allclose(scores[layout.starts[d]:layout.starts[d] + len(doc)], own, rtol=1e-14)


def test_layout_of_prefixes():
    layout = prefix_layout([["a", "b", "a"], [], ["c", "c", "a", "d"]], qterms(["a", "z"]))
    assert layout.position.tolist() == [1, 2, 3, 1, 2, 3, 4]
    assert layout.unique.tolist() == [1, 2, 2, 1, 1, 2, 3]
    assert layout.doc.tolist() == [0, 0, 0, 2, 2, 2, 2]
    assert layout.query.tolist() == [True, False, True, False, False, True, False]
    assert layout.starts.tolist() == [0, 3, 3] and layout.lengths.tolist() == [3, 0, 4]


# ------------------------------------------------------------ violations: the counting logic
@st.composite
def scored_documents(draw):
    """Documents with arbitrary prefix scores from a small set of values (ties are frequent)."""
    docs = draw(st.lists(st.lists(st.sampled_from(list("qpxyz")), max_size=25), min_size=1, max_size=5))
    # the non-finite values check that a NaN difference counts as a violation and that they
    # stay out of the tolerance's scale
    values = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0, math.inf, -math.inf, math.nan])
    scores = [draw(st.lists(values, min_size=len(doc), max_size=len(doc))) for doc in docs]
    return docs, scores


@settings(max_examples=300, deadline=None)
@given(case=scored_documents(), rtol=st.sampled_from([0.0, 1e-12, 0.2]))
def test_vectorised_counts_equal_the_definitions(case, rtol):
    docs, scores = case
    query = qterms(["q", "p"])
    layout = prefix_layout(docs, query)
    flat = np.array([s for per_doc in scores for s in per_doc], dtype=np.float64)
    got = violations_from_scores(flat, layout, rtol)
    for d, doc in enumerate(docs):
        expected = naive_counts(scores[d], doc, {"q", "p"}, rtol)
        assert {name: int(got[name][d]) for name in CONSTRAINTS} == {name: expected[name] for name in CONSTRAINTS}


@pytest.mark.parametrize("family", sorted(REFERENCES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_count_violations_of_models_equal_the_definitions(family, scenario):
    stats, doc, query = scenario
    model, points, _ = REFERENCES[family]
    for point in points:
        scores = prefix_scores(model, point, query, doc, stats)
        got = count_violations(model, point, query, doc, stats)
        assert got == naive_counts(list(scores), doc, {t.term for t in query}, 1e-12)


# ------------------------------------------------- models built to violate one constraint
def shaped(g, h, label: str) -> RetrievalModel:
    """score = sum_{t in Q, tf > 0} qtf g(tf) + h(|D|)."""

    class Shaped(RetrievalModel):
        name = label

        def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
            return g(term.tfs.astype(np.float64))

        def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
            return h(np.asarray(doc_lengths, dtype=np.float64))

    return Shaped()


# positions:  1 2 3 4 5 6 7 8 9 10 11 12 13 14
CONSTRUCTED = "x q x x x q x x x q  x  x  x  x".split()
# additions (positions >= 2): query terms at 2, 6, 10 (3 C1 checks); C3 checks at 6 (vs 2) and 10
# (vs 6); non-query additions at 3-5, 7-9, 11-14 (10 C2 checks); windows of three successive
# non-query additions end at 5, 9, 13, 14 (4 C4 checks).
CHECKS = {"C1": 3, "C2": 10, "C3": 2, "C4": 4}


def concave(tf):
    return 10 * np.log1p(tf)


def convex_decreasing(dl):
    return 1 / dl


SHAPED = {
    # concave in tf, 1/|D|: every increase shrinks, every reduction 1/(|D|(|D|+1)) shrinks.
    "none": (shaped(concave, convex_decreasing, "ok"), {"C1": 0, "C2": 0, "C3": 0, "C4": 0}),
    # tf saturates at 2: the third q (position 10) adds nothing and the length part takes
    # 1/90 away -> C1 once; its increase -1/90 is below the previous one (C3 holds).
    "C1": (shaped(lambda tf: 10 * np.log1p(np.minimum(tf, 2)), convex_decreasing, "c1"),
           {"C1": 1, "C2": 0, "C3": 0, "C4": 0}),
    # + 0.04 |D|: the reduction 1/((p-1)p) - 0.04 of an addition at position p turns negative
    # from p = 6 (30 > 25): non-query additions at 7, 8, 9, 11, 12, 13, 14 -> C2 = 7; the
    # reductions still shrink (C4 holds) and the linear part cancels in C3.
    "C2": (shaped(concave, lambda dl: 1 / dl + 0.04 * dl, "c2"), {"C1": 0, "C2": 7, "C3": 0, "C4": 0}),
    # linear in tf: each q adds 10 plus a length change that shrinks with |D| -> the increase
    # grows: both C3 checks fail.
    "C3": (shaped(lambda tf: 10 * tf, convex_decreasing, "c3"), {"C1": 0, "C2": 0, "C3": 2, "C4": 0}),
    # -0.01 |D|^2: the reduction 0.01 (2p - 1) grows with p: all four windows fail.
    "C4": (shaped(concave, lambda dl: -0.01 * dl**2, "c4"), {"C1": 0, "C2": 0, "C3": 0, "C4": 4}),
}


@pytest.mark.parametrize("violated", sorted(SHAPED))
def test_model_built_to_violate_one_constraint_violates_that_one_only(violated):
    model, expected = SHAPED[violated]
    got = count_violations(model, {}, qterms(["q"]), CONSTRUCTED, STATS)
    assert got == {**expected, "length": 14}
    if violated != "none":
        assert got[violated] > 0 and all(got[name] == 0 for name in CONSTRAINTS if name != violated)


# ------------------------------------------------------------------- a hand-counted example
HAND_TABLE = np.array([np.nan, 0, -1, -2, -2.5, -3, -4, -4, -3, -6, -6.5, -7.5, -7.75])


def test_hand_counted_example():
    """score = 2 tf(q) + H(|D|), H a table, so every prefix score is chosen by hand.

    position  1  2  3    4   5  6  7  8  9    10    11     12
    term      a  q  b    c   d  q  e  f  q    g     h      k
    tf(q)     0  1  1    1   1  2  2  2  3    3     3      3
    H(|D|)    0 -1 -2 -2.5  -3 -4 -4 -3 -6 -6.5  -7.5  -7.75
    score     0  1  0 -0.5  -1  0  0  1  0 -0.5  -1.5  -1.75
    change       +1 -1 -0.5 -0.5 +1  0 +1 -1 -0.5  -1  -0.25

    C1 (q added, score not up):      position 9 (-1)                                  -> 1
    C2 (other added, score not down): 7 (0, a tie), 8 (+1)                            -> 2
    C3 (increase not below the previous occurrence's): 6 (+1 vs +1 at 2, a tie);
        9 (-1 vs +1) holds                                                           -> 1
    C4 windows of three non-query additions: 3-5 (r = 1, 0.5, 0.5: the tie fails);
        10-12 (r = 0.5, 1, 0.25: r grows at 11)                                       -> 2
    """
    model = shaped(lambda tf: 2 * tf, lambda dl: HAND_TABLE[dl.astype(int)], "hand")
    doc = "a q b c d q e f q g h k".split()
    scores = prefix_scores(model, {}, qterms(["q"]), doc, STATS)
    assert scores.tolist() == [0, 1, 0, -0.5, -1, 0, 0, 1, 0, -0.5, -1.5, -1.75]
    expected = {"C1": 1, "C2": 2, "C3": 1, "C4": 2, "length": 12}
    assert count_violations(model, {}, qterms(["q"]), doc, STATS) == expected
    assert count_violations(model, {}, qterms(["q"]), doc, STATS, rtol=0.0) == expected


def test_first_term_is_the_start_not_an_addition():
    """Position 1 is never checked; a first occurrence at position 1 gives C3 nothing to compare."""
    linear = shaped(lambda tf: 10 * tf, convex_decreasing, "linear")  # fails every C3 check (see SHAPED)
    # q x q: checks at 2 (C2) and 3 (C1); no C3 check, the q at 1 was not an addition
    assert count_violations(linear, {}, qterms(["q"]), "q x q".split(), STATS) == \
        {"C1": 0, "C2": 0, "C3": 0, "C4": 0, "length": 3}
    # x q x q: the q at 2 was an addition -> one C3 check, failed
    assert count_violations(linear, {}, qterms(["q"]), "x q x q".split(), STATS)["C3"] == 1
    # one-term documents and empty documents: nothing to count
    for doc in (["q"], ["x"], []):
        assert count_violations(linear, {}, qterms(["q"]), doc, STATS) == \
            {"C1": 0, "C2": 0, "C3": 0, "C4": 0, "length": len(doc)}
    # C3 compares with the previous occurrence of the same term, not of any query term
    two = qterms(["q", "p"])
    # q at 2 (+10 - 1/2), p at 3 (+10 - 1/6), q at 4 (+10 - 1/12): q vs q at 2 grows -> 1 check, failed;
    # p has a single occurrence
    assert count_violations(linear, {}, two, "x q p q".split(), STATS)["C3"] == 1


@pytest.mark.parametrize("rtol", [0.0, 1e-12])
def test_ties_are_violations(rtol):
    """A model whose score never changes ties at every check: every check is a violation."""
    flat = shaped(lambda tf: 0 * tf, lambda dl: 0 * dl, "flat")
    got = count_violations(flat, {}, qterms(["q"]), CONSTRUCTED, STATS, rtol=rtol)
    assert got == {**CHECKS, "length": 14}
    # the same with BM25 at b = 0: non-query terms leave the score unchanged (C2 ties), so do
    # runs of them (C4 ties); query terms still increase it with diminishing returns
    bm25 = get_model("bm25")
    got = count_violations(bm25, {"k1": 1.2, "b": 0.0}, qterms(["q"]), CONSTRUCTED, STATS, rtol=rtol)
    assert got == {"C1": 0, "C2": 10, "C3": 0, "C4": 4, "length": 14}


def test_ties_within_the_tolerance():
    """Equal reductions computed with rounding error are ties under the default tolerance."""
    model = shaped(concave, lambda dl: -0.1 * dl, "linear-length")
    scores = prefix_scores(model, {}, qterms(["q"]), CONSTRUCTED, STATS)
    reductions = -np.diff(scores)
    assert np.ptp(reductions[[2, 3, 6, 7, 10, 11, 12]]) < 1e-13  # equal up to rounding
    got = count_violations(model, {}, qterms(["q"]), CONSTRUCTED, STATS)
    assert got == {"C1": 0, "C2": 0, "C3": 0, "C4": 4, "length": 14}
    # a clear difference is never a tie: the 1/|D| model of SHAPED["none"] passes at any rtol <= 1e-6
    ok = SHAPED["none"][0]
    assert count_violations(ok, {}, qterms(["q"]), CONSTRUCTED, STATS, rtol=1e-6) == \
        {"C1": 0, "C2": 0, "C3": 0, "C4": 0, "length": 14}


def test_batch_counts_equal_per_document_counts_on_many_documents():
    """Benchmark-sized batch (not timed): 300 random documents of up to 400 terms, one query."""
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(60)]
    docs = [list(rng.choice(vocab, size=int(n), p=np.arange(60, 0, -1) / 1830)) for n in rng.integers(0, 400, 300)]
    # w0 is half the collection (p = 0.5): with mu = 2000 adding it gains less than the length costs
    term_stats = {"w0": (90, 2500), **{f"w{i}": (5 + i, 30 + 2 * i) for i in range(1, 60)}}
    query = qterms(["w0", "w1", "w1", "w7", "w59"], term_stats)
    model = get_model("ql_dirichlet")
    batch = batch_count_violations(model, {"mu": 2000.0}, query, docs, STATS)
    for d in range(0, 300, 17):
        single = count_violations(model, {"mu": 2000.0}, query, docs[d], STATS)
        assert single == {name: int(values[d]) for name, values in batch.items()}
    assert batch["length"].tolist() == [len(doc) for doc in docs]
    # Dirichlet: a non-query term lowers the score by |Q| log((|D|+1+mu)/(|D|+mu)), which shrinks with |D|
    assert batch["C2"].sum() == 0 and batch["C4"].sum() == 0
    assert batch["C1"].sum() > 0 and batch["C3"].sum() > 0


# ------------------------------------------------------------------- runs on a real index
TEXTS = [
    ("d1", "The cat sat on the mat with another cat."),
    ("d2", "A dog chased the cat around the garden, the dog barked."),
    ("d3", "Mats and rugs: a mat is not a rug, but a rug may be a mat."),
    ("d4", "Garden birds sing; a cat watches the birds in the garden."),
    ("d5", "Nothing relevant here at all."),
    ("d6", "cat cat cat dog dog mat"),
]
TOPICS = pd.DataFrame({"qid": ["1", "2"], "text": ["cat on a mat", "garden dog zebra"]})
PLAIN = Analyzer(stemmer="none", stopwords="none")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from irgrid.index import IndexReader, build_index
    from irgrid.index.forward import build_forward_index, forward_index_dir

    root = tmp_path_factory.mktemp("axioms")
    (root / "docs").mkdir()
    table = pa.table({"docno": [d for d, _ in TEXTS], "text": [t for _, t in TEXTS]})
    pq.write_table(table, root / "docs" / "part-0000.parquet")
    # the workflow's layout: the forward index (read by the counting) where the reader looks for it
    build_index(root / "docs", root / "index" / "plain", PLAIN, num_buckets=2, scheduler="sync", progress=False)
    build_forward_index(root / "index" / "plain", forward_index_dir(root / "index" / "plain"))
    return IndexReader(root / "index" / "plain")


def stats_of(index) -> CollectionStatistics:
    return CollectionStatistics(num_docs=index.num_docs, total_length=index.total_length,
                                avg_doc_length=index.avg_doc_length)


@pytest.mark.parametrize("family,point", [("bm25", {}), ("ql_dirichlet", {"mu": 10.0})])
def test_analyse_run_on_a_real_index(index, family, point):
    from irgrid.retrieve import retrieve_grid

    run = retrieve_grid(index, TOPICS, family, [point])[0]
    per_doc = analyse_run(index, run, TOPICS, family, point)
    assert list(per_doc.columns) == ["qid", "docno", "C1", "C2", "C3", "C4", "length"]
    assert per_doc[["qid", "docno"]].values.tolist() == run[["qid", "docno"]].values.tolist()
    model = get_model(family)
    texts = dict(zip(TOPICS["qid"], TOPICS["text"]))
    for row, score in zip(per_doc.itertuples(index=False), run["score"]):
        docid = index.docids_of([row.docno])[row.docno]
        doc = index.forward([docid])[0]
        assert row.length == index.doc_lengths[docid] == len(doc)
        # the query as the Scorer builds it: analysed, "zebra" (not in the collection) dropped
        tokens = [t for t in PLAIN(texts[row.qid]) if t != "zebra"]
        query = [QueryTerm(t, n, *index.term_stats([t])[t], np.zeros(0, np.int32), np.zeros(0, np.int32))
                 for t, n in sorted(Counter(tokens).items())]
        expected = count_violations(model, point, query, doc, stats_of(index))
        assert {name: getattr(row, name) for name in (*CONSTRAINTS, "length")} == expected
        assert prefix_scores(model, point, query, doc, stats_of(index))[-1] == pytest.approx(score, rel=1e-12)
    assert per_doc[list(CONSTRAINTS)].to_numpy().sum() > 0

    # depth: the first documents of each query only, same counts
    top2 = analyse_run(index, run, TOPICS, family, point, depth=2)
    assert top2.groupby("qid").size().max() <= 2
    full = per_doc.groupby("qid").head(2).reset_index(drop=True)
    pd.testing.assert_frame_equal(top2.reset_index(drop=True), full)
    # a query term absent from the collection changes nothing
    without = TOPICS.assign(text=["cat on a mat", "garden dog"])
    pd.testing.assert_frame_equal(analyse_run(index, run, without, family, point), per_doc)


@pytest.mark.parametrize("family,point", [("ql_dirichlet", {"mu": 3.0}), ("bm25", {}), ("ql_ad", {"delta": 0.5}),
                                          ("ql_two_stage", {"mu": 2.0, "lambda": 0.3}), ("kl_ml", {"mu": 5.0}),
                                          ("ql_gjm2", {"mu": 4.0})])
def test_full_prefix_equals_the_scorer_score(index, family, point):
    """The last prefix is the whole document: its score is the one the Scorer gives it."""
    from irgrid.retrieve import Scorer

    model, scorer = get_model(family), Scorer(index)
    (prepared,) = scorer.prepare(pd.DataFrame({"qid": ["q"], "text": ["the cat and a mat, the garden zebra"]}))
    scores = scorer.score(model, prepared, model.check_point(point))
    docs = index.forward(prepared.candidates)
    for doc, score in zip(docs, scores):
        got = prefix_scores(model, point, prepared.terms, doc, scorer.stats)
        assert got[-1] == pytest.approx(score, rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("batch_docs", [1, 3, 20_000])
def test_several_runs_at_once_count_each_document_as_alone(index, monkeypatch, batch_docs):
    """analyse_runs lays out the documents of all runs of a query together (and reads the forward
    index FORWARD_BATCH_DOCS documents at a time): each row still gets its own document's counts."""
    from irgrid.axioms import counting
    from irgrid.retrieve import analyse_queries, retrieve_grid

    bm25 = retrieve_grid(index, TOPICS, "bm25", [{}])[0]
    # two runs sharing no document of a query, in rank order (not docid order), and one without query 1
    odd, even = bm25.iloc[1::2], bm25.iloc[0::2]
    runs = [(odd, "bm25", {}), (even, "ql_dirichlet", {"mu": 10.0}), (even[even["qid"] == "2"], "tfidf", {}),
            (bm25.iloc[:0], "bm25", {})]
    monkeypatch.setattr(counting, "FORWARD_BATCH_DOCS", batch_docs)
    together = analyse_runs(index, runs, TOPICS)
    assert len(together) == len(runs) and together[-1].empty
    queries = analyse_queries(index, TOPICS)
    for (run, family, point), per_doc in zip(runs, together):
        assert per_doc[["qid", "docno"]].values.tolist() == run[["qid", "docno"]].values.tolist()
        for row in per_doc.itertuples(index=False):
            doc = index.forward([index.docids_of([row.docno])[row.docno]])[0]
            expected = count_violations(get_model(family), point, queries[row.qid], doc, stats_of(index))
            assert {name: getattr(row, name) for name in (*CONSTRAINTS, "length")} == expected
    assert sum(int(frame[list(CONSTRAINTS)].to_numpy().sum()) for frame in together) > 0


# ------------------------------------------------- best runs, own and common (analyse_best_runs)
def write_best_run_cells(root, index, runs: dict, means: dict) -> pd.DataFrame:
    """Cells of a one-row experiment (one grid point per model): each model's run and an
    evaluation whose AP is ``means[model]`` on every query, as the table jobs pass them."""
    from irgrid.runs import write_run

    root.mkdir(parents=True, exist_ok=True)
    topics = root / "topics.parquet"
    pq.write_table(pa.Table.from_pandas(TOPICS, preserve_index=False), topics)
    cells = []
    for model, run in runs.items():
        run_path, eval_path = root / f"{model}.run.parquet", root / f"{model}.eval.parquet"
        write_run(run.assign(score=-run["rank"].astype(float)), run_path)
        evaluation = pd.DataFrame({"qid": TOPICS["qid"], "measure": "AP", "value": means[model]})
        pq.write_table(pa.Table.from_pandas(evaluation, preserve_index=False), eval_path)
        cells.append({"collection": "tiny", "queryset": "text", "analyzer": "plain", "model": model,
                      "params": "default", "path": str(eval_path), "run": str(run_path),
                      "index": str(index.path), "topics": str(topics)})
    return pd.DataFrame(cells)


def best_run_counts(root, index, runs, families, common_run, depth=1000):
    from irgrid.axioms.experiment import analyse_best_runs
    from irgrid.tables import TableSpec

    cells = write_best_run_cells(root, index, runs, {model: 0.1 * (i + 1) for i, model in enumerate(runs)})
    spec = TableSpec(experiment="tiny", models=list(runs), baseline=common_run)
    return analyse_best_runs(cells, spec, families, depth=depth, common_run=common_run)


def counts_of(per_doc, model, counted_on):
    rows = per_doc[(per_doc["model"] == model) & (per_doc["counted_on"] == counted_on)]
    return rows.set_index(["qid", "docno"])[[*CONSTRAINTS, "length"]].sort_index()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_common_run_counts_equal_own_counts_on_the_same_documents(index, tmp_path_factory, data):
    """A model counted on a common run that holds the same documents as its own run (in any
    order) gets the same counts, document by document, and the same summary."""
    from irgrid.retrieve import retrieve_grid

    common = retrieve_grid(index, TOPICS, "bm25", [{}])[0][["qid", "docno", "rank"]]
    own = []
    for _, documents in common.groupby("qid", sort=True):
        order = data.draw(st.permutations(list(documents["docno"])))
        own.append(pd.DataFrame({"qid": documents["qid"].iloc[0], "docno": order, "rank": range(1, len(order) + 1)}))
    runs = {"dfr": common, "bm25": pd.concat(own, ignore_index=True)}
    per_doc = best_run_counts(tmp_path_factory.mktemp("same"), index, runs, {"dfr": "inl2", "bm25": "bm25"},
                              common_run="dfr")
    for model in runs:
        pd.testing.assert_frame_equal(counts_of(per_doc, model, "common"), counts_of(per_doc, model, "own"))
        own_rows = per_doc[(per_doc["model"] == model) & (per_doc["counted_on"] == "own")]
        common_rows = per_doc[(per_doc["model"] == model) & (per_doc["counted_on"] == "common")]
        pd.testing.assert_frame_equal(summarise_violations(common_rows), summarise_violations(own_rows))


def test_common_run_counts_differ_when_the_documents_differ(index, tmp_path):
    """The common run holds other documents than a model's own run: the model's common counts are
    those of the common run's documents (count_violations, one document at a time), not its own."""
    from irgrid.retrieve import analyse_queries, retrieve_grid

    common = retrieve_grid(index, TOPICS, "bm25", [{}])[0][["qid", "docno", "rank"]]
    own = common.groupby("qid", sort=False).head(1)  # the first document of each query only
    runs = {"dfr": common, "bm25": own}
    per_doc = best_run_counts(tmp_path, index, runs, {"dfr": "inl2", "bm25": "bm25"}, common_run="dfr")
    assert set(per_doc["counted_on"]) == {"own", "common"}
    bm25_common, bm25_own = counts_of(per_doc, "bm25", "common"), counts_of(per_doc, "bm25", "own")
    assert set(bm25_common.index) == set(zip(common["qid"], common["docno"]))
    assert set(bm25_own.index) == set(zip(own["qid"], own["docno"]))
    queries = analyse_queries(index, TOPICS)
    model = get_model("bm25")
    for (qid, docno), row in bm25_common.iterrows():
        doc = index.forward([index.docids_of([docno])[docno]])[0]
        assert row.to_dict() == count_violations(model, {}, queries[qid], doc, stats_of(index))
    common_summary = summarise_violations(bm25_common.reset_index())
    own_summary = summarise_violations(bm25_own.reset_index())
    assert common_summary["documents"].item() > own_summary["documents"].item()
    assert common_summary["total"].item() != own_summary["total"].item()
    # the common run's own model: the same documents both ways
    pd.testing.assert_frame_equal(counts_of(per_doc, "dfr", "common"), counts_of(per_doc, "dfr", "own"))


def test_common_run_must_be_a_model(index, tmp_path):
    with pytest.raises(ConfigError, match="common run"):
        best_run_counts(tmp_path, index, {"ql": retrieve_bm25(index)}, {"ql": "ql_dirichlet"}, common_run="dfr")


def retrieve_bm25(index):
    from irgrid.retrieve import retrieve_grid

    return retrieve_grid(index, TOPICS, "bm25", [{}])[0][["qid", "docno", "rank"]]


def test_analyse_run_rejects_foreign_runs(index):
    run = pd.DataFrame({"qid": ["1", "3"], "docno": ["d1", "d1"], "rank": [1, 1], "score": [1.0, 1.0]})
    with pytest.raises(ConfigError, match="not in the topics"):
        analyse_run(index, run, TOPICS, "bm25", {})
    run = pd.DataFrame({"qid": ["1"], "docno": ["nope"], "rank": [1], "score": [1.0]})
    with pytest.raises(ConfigError, match="not in the index"):
        analyse_run(index, run, TOPICS, "bm25", {})
    with pytest.raises(ConfigError):
        analyse_run(index, run, TOPICS, "bm25", {"nope": 1.0})
    empty = analyse_run(index, run.iloc[:0], TOPICS, "bm25", {})
    assert empty.empty and list(empty.columns) == ["qid", "docno", "C1", "C2", "C3", "C4", "length"]


def test_summarise_violations_averages_within_then_across_queries():
    per_doc = pd.DataFrame({
        "qid": ["1", "1", "2"], "docno": ["a", "b", "a"],
        "C1": [1, 3, 4], "C2": [0, 2, 0], "C3": [5, 5, 2], "C4": [0, 0, 1], "length": [9, 9, 9],
    })
    # query 1: C1 2, C2 1, C3 5, C4 0, total 8; query 2: 4, 0, 2, 1, total 7
    summary = summarise_violations(per_doc)
    assert summary.to_dict("records") == [
        {"C1": 3.0, "C2": 0.5, "C3": 3.5, "C4": 0.5, "total": 7.5, "queries": 2, "documents": 3}
    ]
    by_query = summarise_violations(per_doc, by_query=True)
    assert by_query["qid"].tolist() == ["1", "2"]
    assert by_query["total"].tolist() == [8.0, 7.0] and by_query["documents"].tolist() == [2, 1]


def test_comparisons_are_signed():
    """C4 is the shape of the score along non-query terms, C2 its direction (docs/axioms.md)."""
    # the score rises by more at each non-query term: C2 at all 10, C4 never
    rising = shaped(concave, lambda dl: 0.01 * dl**2, "rising")
    assert count_violations(rising, {}, qterms(["q"]), CONSTRUCTED, STATS) == \
        {"C1": 0, "C2": 10, "C3": 0, "C4": 0, "length": 14}
    # and by less each time (concave): C2 and C4 at every check
    slowing = shaped(concave, lambda dl: np.sqrt(dl), "slowing")
    assert count_violations(slowing, {}, qterms(["q"]), CONSTRUCTED, STATS) == \
        {"C1": 0, "C2": 10, "C3": 0, "C4": 4, "length": 14}
