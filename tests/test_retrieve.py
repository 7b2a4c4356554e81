"""The query-set engine (flat postings, numba candidates and top-k) against the per-query path.

The per-query path (Scorer.score + Scorer.rank: numpy, a lexsort per query) is the
reference: models were checked against hand computations and peers through it.
The batch path must give the same runs to the last bit, for every model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrid.models import MODEL_FAMILIES, get_model
from irgrid.retrieve import PreparedQuerySet, Scorer, read_run, write_run
from tiny_index import TinyIndex

VOCABULARY = ["a", "b", "c", "d", "e", "f"]

documents = st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8), min_size=1, max_size=15)
queries = st.lists(st.lists(st.sampled_from(VOCABULARY + ["zz"]), min_size=1, max_size=4).map(" ".join),
                   min_size=1, max_size=5)


def per_query_run(scorer, model, prepared, point, depth):
    return scorer._run_per_query(model, list(prepared), point, depth)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(sorted(MODEL_FAMILIES)),
       depth=st.integers(1, 20), seed=st.integers(0, 10**6))
def test_batch_run_equals_per_query_run(docs, texts, family, depth, seed):
    # docnos in an order unrelated to docids, so the tie-break by docno is exercised
    rng = np.random.default_rng(seed)
    docnos = [f"d{n:03d}" for n in rng.permutation(len(docs))]
    index = TinyIndex(dict(zip(docnos, docs)))
    scorer = Scorer(index)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    prepared = scorer.prepare(topics)
    assert isinstance(prepared, PreparedQuerySet)
    model = get_model(family)
    point = model.check_point({})
    expected = per_query_run(scorer, model, prepared, point, depth)
    got = scorer.run(model, prepared, point, depth)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                  check_exact=True, check_dtype=False)


def test_candidates_are_documents_with_a_query_term():
    docs = {"d1": ["a", "b"], "d2": ["c"], "d3": ["b", "b"], "d4": ["d"]}
    scorer = Scorer(TinyIndex(docs))
    prepared = scorer.prepare(pd.DataFrame({"qid": ["1", "2", "3"], "text": ["b a", "zz", "d c"]}))
    assert [sorted(scorer.docnos[q.candidates]) for q in prepared] == [["d1", "d3"], [], ["d2", "d4"]]
    for q in prepared:  # every posting points at its own document among the candidates
        for term, slots in zip(q.terms, q.slots):
            assert q.candidates[slots].tolist() == term.docids.tolist()


def test_arrow_run_round_trips_through_write_run(tmp_path):
    docs = {"d1": ["a", "b"], "d2": ["a"], "d3": ["b", "b"]}
    scorer = Scorer(TinyIndex(docs))
    prepared = scorer.prepare(pd.DataFrame({"qid": ["1"], "text": ["a b"]}))
    model = get_model("bm25")
    table = scorer.run_table(model, prepared, model.check_point({}), depth=10)
    assert isinstance(table, pa.Table)
    write_run(table, tmp_path / "run.parquet")
    back = read_run(tmp_path / "run.parquet")
    assert back["docno"].tolist()[0] in {"d1", "d3"} and back["rank"].tolist() == [1, 2, 3]
    pd.testing.assert_frame_equal(back, scorer.run(model, prepared, model.check_point({}), 10), check_dtype=False)


@given(values=st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=60), data=st.data())
def test_kth_largest_is_the_kth_of_the_sorted_values(values, data):
    from irgrid.ranking import kth_largest

    k = data.draw(st.integers(1, len(values)))
    assert kth_largest(np.array(values), k) == sorted(values, reverse=True)[k - 1]
