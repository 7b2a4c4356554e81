"""The query-set engine (flat postings, numba candidates and top-k) against the per-query path.

The per-query path (Scorer.score + Scorer.rank: numpy, a lexsort per query) is the
reference: models were checked against hand computations and peers through it.
The batch path must give the same runs to the last bit, for every model.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core import ir
from numba.core import types as numba_types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import AnalysisPass, PassManager, register_pass
from numba.core.typed_passes import AnnotateTypes, IRLegalization, NoPythonSupportedFeatureValidation

from irgrid.models import MODEL_FAMILIES, get_model
from irgrid.retrieve import PreparedQuerySet, Scorer
from irgrid.retrieve import populated as populated_module
from irgrid.retrieve import prepared as prepared_module
from irgrid.retrieve.ranking import _result_offsets, candidate_slots, result_offsets
from irgrid.runs import read_run, write_run
from tiny_index import TinyIndex

VOCABULARY = ["a", "b", "c", "d", "e", "f"]

documents = st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8), min_size=1, max_size=15)
queries = st.lists(st.lists(st.sampled_from(VOCABULARY + ["zz"]), min_size=1, max_size=4).map(" ".join),
                   min_size=1, max_size=5)


def per_query_run(scorer, model, prepared, point, depth):
    return scorer._run_per_query(model, list(prepared), point, depth)


BAG_OF_WORDS = sorted(name for name, model in MODEL_FAMILIES.items() if not model.uses_features)
FEATURE_FAMILIES = sorted(name for name, model in MODEL_FAMILIES.items() if model.uses_features)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(BAG_OF_WORDS),
       depth=st.integers(1, 20), seed=st.integers(0, 10**6))
def test_batch_run_equals_per_query_run(docs, texts, family, depth, seed):
    # docnos in an order unrelated to docids, so the tie-break by docno is exercised
    rng = np.random.default_rng(seed)
    docnos = [f"d{n:03d}" for n in rng.permutation(len(docs))]
    index = TinyIndex(dict(zip(docnos, docs)))
    scorer = Scorer(index)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    point = model.check_point({})
    prepared = scorer.prepare(topics, model, [point])
    assert isinstance(prepared, PreparedQuerySet)
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


@settings(deadline=None)  # a Scorer an example, on a loaded machine
@given(docids=st.lists(st.lists(st.integers(0, 4), max_size=12), min_size=1, max_size=4), populated=st.booleans())
def test_docno_column_is_arrows_take_whatever_the_rows_before(docids, populated):
    # fixed-width docnos are gathered by numpy, their offsets kept for the next call of as many rows;
    # populated: into an array mapped by populated_empty, however small
    scorer = Scorer(TinyIndex({f"d{n:02d}": ["a"] for n in (3, 1, 4, 0, 2)}))
    threshold = 0 if populated else populated_module.POPULATED_BYTES
    for rows in docids:
        rows = np.array(rows, dtype=np.int32)
        with mock.patch.object(populated_module, "POPULATED_BYTES", threshold):
            column = scorer.docno_column(rows)
        assert column.equals(scorer.docnos_arrow.take(pa.array(rows)))


# no deadline: the first example loads (or compiles) the numba kernel
@settings(deadline=None)
@given(values=st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=60), data=st.data())
def test_kth_largest_is_the_kth_of_the_sorted_values(values, data):
    from irgrid.retrieve.ranking import kth_largest

    k = data.draw(st.integers(1, len(values)))
    assert kth_largest(np.array(values), k) == sorted(values, reverse=True)[k - 1]


# ---------------------------------------------------------------- fused kernels and ranking

FUSED_FAMILIES = sorted(name for name, model in MODEL_FAMILIES.items() if model.weighting is not None)


def test_the_grid_models_have_fused_kernels():
    # the families grids are swept over most; a kernel silently dropped would only show as slowness
    assert {"bm25", "ql_dirichlet", "kl_ml"} <= set(FUSED_FAMILIES)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(FUSED_FAMILIES), depth=st.integers(1, 20),
       seed=st.integers(0, 10**6), k1=st.sampled_from([0.0, 0.3, 1.2, 3.0]), b=st.sampled_from([0.0, 0.5, 1.0]),
       mu=st.sampled_from([1.0, 50.0, 2000.0]), threads=st.integers(1, 3))
def test_fused_kernel_equals_per_query_path_at_any_point_and_threads(docs, texts, family, depth, seed, k1, b, mu,
                                                                    threads):
    rng = np.random.default_rng(seed)
    docnos = [f"d{n:03d}" for n in rng.permutation(len(docs))]
    scorer = Scorer(TinyIndex(dict(zip(docnos, docs))), threads=threads)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    # each family at a point of the parameters it has (the sentence TF-IDF has none)
    drawn = {"k1": k1, "b": b, "mu": mu}
    point = model.check_point({name: drawn[name] for name in model.parameter_names() if name in drawn})
    prepared = scorer.prepare(topics, model, [point])
    expected = per_query_run(scorer, model, prepared, point, depth)
    got = scorer.run(model, prepared, point, depth)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                  check_exact=True, check_dtype=False)
    # any range of queries ranks as in the whole set
    docids, scores, offsets = scorer.top(model, prepared, point, depth)
    q = int(rng.integers(len(prepared)))
    one_docids, one_scores, one_offsets = scorer.top(model, prepared, point, depth, q, q + 1)
    assert one_docids.tolist() == docids[offsets[q]:offsets[q + 1]].tolist()
    assert one_scores.tolist() == scores[offsets[q]:offsets[q + 1]].tolist()
    assert one_offsets.tolist() == [0, offsets[q + 1] - offsets[q]]


BLOCK_FAMILIES = ["bm25", "ql_dirichlet", "kl_ml", "sdm"]  # BM25, Dirichlet, a query weight, feature weights


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(BLOCK_FAMILIES), depth=st.integers(1, 20),
       seed=st.integers(0, 10**6), threads=st.integers(1, 3), block=st.integers(1, 8),
       values=st.lists(st.tuples(st.sampled_from([0.0, 0.3, 1.2, 3.0]), st.sampled_from([0.0, 0.5, 1.0]),
                                 st.sampled_from([1.0, 50.0, 2000.0]), st.sampled_from([0.0, 0.2, 0.7]),
                                 st.sampled_from([0, 1])),
                       min_size=1, max_size=10))
def test_a_block_of_points_ranks_each_point_as_the_per_query_path(docs, texts, family, depth, seed, threads, block,
                                                                   values):
    # the fused kernel scores a block of points per pass over the postings (their accumulators side
    # by side, Dirichlet points grouped by mu); each point's run must be the per-query path's, to the bit
    import irgrid.retrieve as retrieve

    rng = np.random.default_rng(seed)
    docnos = [f"d{n:03d}" for n in rng.permutation(len(docs))]
    scorer = Scorer(TinyIndex(dict(zip(docnos, docs))), threads=threads)
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    if family == "bm25":
        points = [{"k1": k1, "b": b} for k1, b, _, _, _ in values]
    elif family == "sdm":
        # a block may mix the rules for unseen terms: their features weigh 0 at the points that drop them
        points = [{"mu": mu, "lambda_t": 1.0 - weight, "lambda_o": weight, "lambda_u": 0.0, "drop_unseen": drop}
                  for _, _, mu, weight, drop in values]
    else:
        points = [{"mu": mu} for _, _, mu, _, _ in values]
    points = [model.check_point(point) for point in points]
    prepared = scorer.prepare(topics, model, points)
    saved = retrieve.BLOCK_POINTS
    retrieve.BLOCK_POINTS = block
    try:
        tables = scorer.run_tables(model, prepared, points, depth)
    finally:
        retrieve.BLOCK_POINTS = saved
    assert len(tables) == len(points)
    for point, table in zip(points, tables):
        expected = per_query_run(scorer, model, prepared, point, depth)
        got = table.to_pandas().astype({"qid": object, "docno": object})
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                      check_exact=True, check_dtype=False)


def test_long_runs_of_tied_scores_are_cut_by_docno():
    # 3,000 documents, one term, the same tf and length: every score ties, so the depth-th
    # place is decided by docno alone (docnos in an order unrelated to docids)
    rng = np.random.default_rng(7)
    numbers = rng.permutation(3000)
    docs = {f"doc{n:05d}": ["a", "b"] if n % 3 else ["a", "c"] for n in numbers}
    scorer = Scorer(TinyIndex(docs))
    prepared = scorer.prepare(pd.DataFrame({"qid": ["1"], "text": ["a"]}))
    for family in ("bm25", "ql_dirichlet", "tfidf"):
        model = get_model(family)
        run = scorer.run(model, prepared, model.check_point({}), depth=1000)
        assert run["docno"].tolist() == [f"doc{n:05d}" for n in range(1000)]
        assert run["score"].nunique() == 1


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), depth=st.sampled_from([5, 100, 1000]), lengths=st.integers(1, 4),
       populated=st.booleans())
def test_a_grid_with_long_tied_segments_ranks_as_a_sort_of_every_candidate(seed, depth, lengths, populated):
    # thousands of candidates a query at few distinct (tf, length) pairs: long runs of tied scores at
    # the cut and within the best, docnos in an order unrelated to docids; a grid of several blocks
    # reads its ties' docno ranks and its postings' lengths gathered once (Scorer.grid_layout), a
    # point alone looks them up: both must be a sort of every candidate by (-score, docno).
    # populated: the kernel's outputs and the gathered layout mapped by populated_empty, however small
    import irgrid.retrieve as retrieve

    rng = np.random.default_rng(seed)
    numbers = rng.permutation(3000)
    docs = {f"doc{n:05d}": list(rng.choice(["a", "b", "c", "x"], size=int(rng.integers(1, 1 + lengths)), p=[0.4, 0.3, 0.2, 0.1]))
            for n in numbers}
    scorer = Scorer(TinyIndex(docs))
    docnos = np.asarray(scorer.docnos)
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["a", "a b", "b c a"]})
    model = get_model("bm25")
    points = [model.check_point({"k1": k1, "b": b}) for k1 in (0.6, 1.2) for b in (0.0, 0.75)]
    prepared = scorer.prepare(topics, model, points)
    threshold = 0 if populated else populated_module.POPULATED_BYTES
    with mock.patch.object(retrieve, "BLOCK_POINTS", 2), mock.patch.object(populated_module, "POPULATED_BYTES", threshold):
        grid = scorer.top_points(model, prepared, points, depth)
        alone_of_points = [scorer.top(model, prepared, point, depth) for point in points]
    assert getattr(prepared, "_grid_layout", None) is not None
    for point, (docids, scores, offsets), alone in zip(points, grid, alone_of_points):
        for q, query in enumerate(prepared):
            query_scores = scorer.score(model, query, point)
            expected = sorted(range(len(query.candidates)), key=lambda c: (-query_scores[c], docnos[query.candidates[c]]))
            expected = expected[:depth]
            for got_docids, got_scores, got_offsets in ((docids, scores, offsets), alone):
                rows = slice(got_offsets[q], got_offsets[q + 1])
                assert got_docids[rows].tolist() == query.candidates[expected].tolist()
                assert got_scores[rows].view(np.int64).tolist() == query_scores[expected].view(np.int64).tolist()


def test_one_block_of_points_gathers_no_grid_layout():
    # the arrays a grid gathers once (Scorer.grid_layout) would cost a single pass over the postings
    # (one point, one block of points) more than they save
    from irgrid.retrieve import BLOCK_POINTS

    scorer = Scorer(TinyIndex({"d1": ["a", "b"], "d2": ["a"], "d3": ["b", "b"]}))
    model = get_model("bm25")
    points = [model.check_point({"k1": 0.1 * (i + 1)}) for i in range(BLOCK_POINTS + 1)]
    prepared = scorer.prepare(pd.DataFrame({"qid": ["1"], "text": ["a b"]}), model, points)
    for block in (points[:1], points[:BLOCK_POINTS]):
        scorer.top_points(model, prepared, block, 10)
        assert getattr(prepared, "_grid_layout", None) is None
    scorer.top_points(model, prepared, points, 10)
    assert getattr(prepared, "_grid_layout", None) is not None


class _Typed(Exception):
    """Carries a fresh compilation's type annotation out of :class:`_TypedOnly`'s pipeline."""

    def __init__(self, annotation):
        super().__init__()
        self.annotation = annotation


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterAnnotation(AnalysisPass):
    _name = "irgrid_tests_stop_after_annotation"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        raise _Typed(state.type_annotation)


class _TypedOnly(CompilerBase):
    """numba's nopython pipeline up to its type annotation (the same passes, in the same order, as
    ``define_nopython_pipeline``), without the lowering to machine code: the annotation is what the check
    reads, and the lowering of every kernel's every signature is most of a fresh compilation's time."""

    def define_pipelines(self):
        manager = PassManager("typed_only")
        manager.passes.extend(DefaultPassBuilder.define_untyped_pipeline(self.state).passes)
        manager.passes.extend(DefaultPassBuilder.define_typed_pipeline(self.state).passes)
        manager.add_pass(NoPythonSupportedFeatureValidation, "ensure features that are in use are in a valid form")
        manager.add_pass(IRLegalization, "ensure IR is legal prior to lowering")
        manager.add_pass(AnnotateTypes, "annotate types")
        manager.add_pass(_StopAfterAnnotation, "stop after the annotation")
        manager.finalize()
        return [manager]


def integers_typed_as_floats(dispatcher, signature):
    """The lines of ``dispatcher``'s fresh compilation for ``signature`` where integers become a float64:
    an arithmetic operation, a ``max``/``min`` of integers or a variable given integers of mixed signedness
    (numba types uint64 and int64 together as float64)."""
    options = {key: value for key, value in dispatcher.targetoptions.items() if key not in ("cache", "nopython")}
    fresh = njit(pipeline_class=_TypedOnly, **options)(dispatcher.py_func)
    try:
        fresh.compile(signature)
    except _Typed as typed:
        annotation = typed.annotation
    else:
        raise AssertionError("the typed-only pipeline ended without its annotation")
    types = annotation.typemap
    found = []
    for block in annotation.blocks.values():
        for statement in block.find_insts(ir.Assign):
            value, operands = statement.value, None
            if isinstance(value, ir.Var):
                operands = [types[value.name]]
            elif isinstance(value, ir.Expr) and value.op in ("binop", "inplace_binop") and "div" not in value.fn.__name__:
                operands = [types[value.lhs.name], types[value.rhs.name]]
            elif (isinstance(value, ir.Expr) and value.op == "call"
                  and getattr(types[value.func.name], "typing_key", None) in (max, min)):
                operands = [types[arg.name] for arg in value.args]
            if (operands and all(isinstance(t, (numba_types.Integer, numba_types.Boolean)) for t in operands)
                    and isinstance(types[statement.target.name], numba_types.Float)):
                found.append(f"{dispatcher.py_func.__name__}:{statement.loc.line} {operands}")
    return found


def test_integers_typed_as_floats_finds_a_count_of_mixed_signedness():
    @njit
    def mixed(start, step):
        count = start
        for _ in range(3):
            count += step
        return count

    @njit
    def unmixed(start, step):
        count = start
        for _ in range(3):
            count += np.uint64(step)
        return count

    mixed(np.uint64(1), np.int64(2))
    unmixed(np.uint64(1), np.int64(2))
    assert integers_typed_as_floats(mixed, mixed.signatures[0])
    assert integers_typed_as_floats(unmixed, unmixed.signatures[0]) == []


@pytest.mark.slow  # types every ranking kernel afresh
def test_the_kernels_integer_arithmetic_stays_integer():
    # the kernels index through unsigned integers; numba types some mixes of integers as float64 (a
    # count or offset that would silently become a float): every kernel's every signature used by a
    # grid (two blocks: the layout), one point and top_k
    from numba.core.registry import CPUDispatcher

    from irgrid.retrieve import BLOCK_POINTS, ranking

    scorer = Scorer(TinyIndex({f"d{i}": list("abcab"[:1 + i % 5]) + ["c"] * (i % 3) for i in range(40)}))
    topics = pd.DataFrame({"qid": ["1", "2"], "text": ["a b", "b c a"]})
    for family, points in (("bm25", [{"k1": 0.1 * (i + 1)} for i in range(BLOCK_POINTS + 1)]),
                           ("ql_dirichlet", [{"mu": 10.0}] * (BLOCK_POINTS + 1)), ("tfidf_sentence", [{}])):
        model = get_model(family)
        points = [model.check_point(point) for point in points]
        prepared = scorer.prepare(topics, model, points)
        scorer.top_points(model, prepared, points, 5)
        scorer.top_points(model, prepared, points[:1], 5)
    tfidf = get_model("tfidf")
    scorer.top(tfidf, scorer.prepare(topics, tfidf, [{}]), tfidf.check_point({}), 5)
    kernels = [kernel for kernel in vars(ranking).values() if isinstance(kernel, CPUDispatcher)]
    checked, floats = set(), []
    # a kernel loaded from numba's cache never compiled its callees: typing a fresh copy of it does
    while unchecked := [(k, s) for k in kernels for s in k.signatures if (k, s) not in checked]:
        checked.add(unchecked[0])
        floats += integers_typed_as_floats(*unchecked[0])
    assert {"score_and_rank", "_rank_segment", "_collect_reaching", "_write_by_candidate_ranks",
            "sort_by_score_then_docno", "_prefix_sorted_keys", "top_k"} <= {k.py_func.__name__ for k, _ in checked}
    assert floats == []

@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-4, 4).map(float) | st.floats(-1e3, 1e3, allow_nan=False), min_size=1,
                       max_size=400),
       depth=st.integers(1, 60), seed=st.integers(0, 10**6))
def test_top_k_is_the_head_of_the_sort_by_score_then_docno(values, depth, seed):
    from irgrid.retrieve.ranking import top_k

    scores = np.array(values, dtype=np.float64)
    n = len(scores)
    candidates = np.arange(n, dtype=np.int32)
    docno_rank = np.random.default_rng(seed).permutation(n).astype(np.int32)
    docids, ranked_scores, offsets = top_k(scores, candidates, np.array([0, n], dtype=np.int64), docno_rank, depth)
    expected = sorted(range(n), key=lambda d: (-scores[d], docno_rank[d]))[:depth]
    assert docids.tolist() == expected
    assert ranked_scores.tolist() == scores[expected].tolist()
    assert offsets.tolist() == [0, min(depth, n)]


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=40),
       n=st.integers(1, 6000), depth=st.integers(1, 1200), seed=st.integers(0, 10**6))
def test_top_k_of_long_segments_with_many_ties_is_the_head_of_the_sort(levels, n, depth, seed):
    # segments long enough for the sampled threshold, the cut at the depth-th and the radix passes;
    # few distinct scores, so long runs tie at the threshold and within the best, and depth may pass n
    from irgrid.retrieve.ranking import top_k

    rng = np.random.default_rng(seed)
    scores = np.array(levels, dtype=np.float64)[rng.integers(0, len(levels), n)]
    candidates = rng.permutation(n).astype(np.int32)
    docno_rank = rng.permutation(n).astype(np.int32)
    docids, ranked_scores, offsets = top_k(scores, candidates, np.array([0, n], dtype=np.int64), docno_rank, depth)
    expected = sorted(range(n), key=lambda c: (-scores[c], docno_rank[candidates[c]]))[:depth]
    assert docids.tolist() == candidates[expected].tolist()
    assert ranked_scores.tolist() == scores[expected].tolist()
    assert offsets.tolist() == [0, min(depth, n)]


def test_best_positions_holds_every_score_tied_with_the_last_kept():
    from irgrid.retrieve.ranking import best_positions

    rng = np.random.default_rng(3)
    for n, depth in [(50_000, 1000), (9_000, 1000), (5_000, 10), (1_001, 1000)]:
        scores = np.round(rng.standard_normal(n), 2)  # many ties
        kept = best_positions(scores, depth)
        kth = np.sort(scores)[::-1][depth - 1]
        assert set(np.flatnonzero(scores >= kth)) <= set(kept.tolist())
        assert len(kept) >= depth and len(set(kept.tolist())) == len(kept)


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=3000, unique=True),
       spread_bits=st.integers(0, 63), index_bits=st.integers(0, 12))
def test_radix_keys_are_ordered_by_their_highest_varying_bits(keys, spread_bits, index_bits):
    """The ranker's keys (often sharing their high bits) come back a permutation, ordered by the
    PREFIX_BITS highest bits that vary above the index bits (the exact insertion pass orders the rest)."""
    from irgrid.retrieve.ranking import PREFIX_BITS, _prefix_sorted_keys

    values = np.array(keys, dtype=np.int64)
    # as the ranker's keys are: close scores share the high bits, the low ones vary
    narrow = np.unique((values >> np.int64(spread_bits)) if spread_bits else values)
    for array in (values, narrow, -narrow[::-1]):
        got = _prefix_sorted_keys(array.copy(), index_bits).tolist()
        assert sorted(got) == sorted(array.tolist())
        unsigned = [key + 2**63 for key in got]  # signed order as unsigned
        varying = 0
        for key in unsigned:
            varying |= key ^ unsigned[0]
        top = max(index_bits, (varying >> index_bits).bit_length() + index_bits)
        prefixes = [key >> max(index_bits, top - PREFIX_BITS) for key in unsigned]
        assert prefixes == sorted(prefixes)


#: scores drawn as (base, ulps above it): many exact ties, and scores equal but for their last bits
NEAR_TIE_BASES = st.lists(st.integers(-3, 3).map(float) | st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
                          min_size=1, max_size=6)
NEAR_TIE_PICKS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), min_size=1, max_size=2500)


def _near_tied_scores(bases: list[float], picks: list[tuple[int, int]]) -> np.ndarray:
    """Each pick's base score moved up by its number of ulps."""
    values = []
    for base, ulps in picks:
        value = bases[base % len(bases)]
        for _ in range(ulps):
            value = np.nextafter(value, np.inf)
        values.append(value)
    return np.array(values, dtype=np.float64)


@settings(max_examples=200, deadline=None)
@given(bases=NEAR_TIE_BASES, picks=NEAR_TIE_PICKS,
       seed=st.integers(0, 10**6), subset=st.booleans())
def test_sort_by_score_then_docno_is_a_sort_of_the_pairs(bases, picks, seed, subset):
    """Many tied scores, and scores equal but for their last bits (so equal in the radix passes'
    bits), ordered as a sort of (-score, docno rank) orders them."""
    from irgrid.retrieve.ranking import sort_by_score_then_docno

    scores = _near_tied_scores(bases, picks)
    n = len(scores)
    rng = np.random.default_rng(seed)
    candidates = rng.permutation(n).astype(np.int32)
    docno_rank = rng.permutation(n).astype(np.int32)
    positions = np.flatnonzero(rng.random(n) < 0.7) if subset else np.arange(n)
    expected = sorted(positions.tolist(), key=lambda c: (-scores[c], docno_rank[candidates[c]]))
    # the ties' ranks looked up in the table of every document, or read from the candidates' own (a grid's)
    for candidate_ranks in (np.zeros(0, dtype=np.int32), docno_rank[candidates]):
        order = sort_by_score_then_docno(scores, positions.astype(np.int64), candidates, docno_rank, candidate_ranks)
        assert order.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(bases=NEAR_TIE_BASES, picks=NEAR_TIE_PICKS,
       depth=st.integers(1, 3000), seed=st.integers(0, 10**6), subset=st.booleans())
def test_write_by_candidate_ranks_is_the_head_of_a_lexsort(bases, picks, depth, seed, subset):
    """A grid's ranking of the collected items (ranks read with the items): the head of
    np.lexsort((rank, -score)) of the same items, with many ties, scores a few ulps apart and a
    depth that may pass the items."""
    from irgrid.retrieve.ranking import _write_by_candidate_ranks

    scores = _near_tied_scores(bases, picks)
    n = len(scores)
    rng = np.random.default_rng(seed)
    candidates = rng.permutation(n).astype(np.int32) + 7
    candidate_ranks = rng.permutation(n).astype(np.int32)
    positions = np.flatnonzero(rng.random(n) < 0.7) if subset else np.arange(n)
    expected = positions[np.lexsort((candidate_ranks[positions], -scores[positions]))][:depth]
    out_docids = np.full(len(expected) + 2, -1, dtype=np.int32)
    out_scores = np.full(len(expected) + 2, np.nan)
    _write_by_candidate_ranks(scores, positions.astype(np.int64), candidates, candidate_ranks, depth, out_docids,
                              out_scores, 1)
    assert out_docids[1:-1].tolist() == candidates[expected].tolist()
    assert out_scores[1:-1].view(np.int64).tolist() == scores[expected].view(np.int64).tolist()
    assert out_docids[0] == -1 and out_docids[-1] == -1  # nothing written outside its rows


@settings(max_examples=200, deadline=None)
@given(levels=st.lists(st.integers(-3, 3).map(float) | st.floats(-1e3, 1e3, allow_nan=False), min_size=1,
                       max_size=40),
       n=st.integers(1, 700), seed=st.integers(0, 10**6))
def test_collect_reaching_is_flatnonzero(levels, n, seed):
    # words of 64 scores and the tail after the last whole word; the threshold one of the scores (ties)
    from irgrid.retrieve.ranking import _collect_reaching

    rng = np.random.default_rng(seed)
    scores = np.array(levels, dtype=np.float64)[rng.integers(0, len(levels), n)]
    threshold = scores[rng.integers(0, n)]
    work = np.full(n + 1, -1, dtype=np.int64)
    count = _collect_reaching(scores, threshold, work)
    assert work[:count].tolist() == np.flatnonzero(scores >= threshold).tolist()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-3, 3).map(float) | st.floats(-1e3, 1e3, allow_nan=False), min_size=1,
                       max_size=20_000),
       depth=st.integers(1, 1200))
def test_sample_threshold_is_the_selection_over_the_strided_sample(values, depth):
    from irgrid.retrieve.ranking import SAMPLE_SIZE, _sample_threshold

    scores = np.array(values, dtype=np.float64)
    n = len(scores)
    sample = scores[::max(1, n // SAMPLE_SIZE)][:SAMPLE_SIZE]
    above = min(int(1.5 * depth * len(sample) / n), len(sample) - 1)
    assert _sample_threshold(scores, depth) == np.sort(sample)[::-1][above]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(BLOCK_FAMILIES + ["piv", "fdm"]),
       depth=st.integers(1, 20), seed=st.integers(0, 10**6), budget=st.integers(0, 12), rows=st.integers(0, 40),
       mus=st.lists(st.sampled_from([1.0, 50.0, 2000.0]), min_size=1, max_size=6))
def test_a_query_set_in_blocks_ranks_as_the_whole_set(docs, texts, family, depth, seed, budget, rows, mus):
    # a query set over the postings budget is read and ranked a block of queries at a time, and with
    # more than one block the points a few at a time: every point's run must be the per-query path's
    import irgrid.retrieve as retrieve
    from irgrid.retrieve import retrieve_grid

    rng = np.random.default_rng(seed)
    docnos = [f"d{n:03d}" for n in rng.permutation(len(docs))]
    index = TinyIndex(dict(zip(docnos, docs)))
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    points = [model.check_point({"mu": mu} if "mu" in model.parameter_names() else {}) for mu in mus]
    saved = retrieve.QUERY_BLOCK_POSTINGS, retrieve.PASS_RESULT_ROWS
    retrieve.QUERY_BLOCK_POSTINGS, retrieve.PASS_RESULT_ROWS = budget, rows
    try:
        runs = retrieve_grid(index, topics, family, points, depth)
    finally:
        retrieve.QUERY_BLOCK_POSTINGS, retrieve.PASS_RESULT_ROWS = saved
    scorer = Scorer(index)
    prepared = scorer.prepare(topics, model, points)
    assert len(runs) == len(points)
    for point, run in zip(points, runs):
        expected = per_query_run(scorer, model, prepared, point, depth)
        pd.testing.assert_frame_equal(run.reset_index(drop=True), expected.reset_index(drop=True),
                                      check_exact=True, check_dtype=False)


def test_query_blocks_hold_consecutive_queries_within_the_budget():
    from irgrid.retrieve import query_blocks

    # df: a 3, b 2, c 1 (four documents); query postings: q1 5, q2 1, q3 6, q4 0, q5 3
    index = TinyIndex({"d1": ["a", "b"], "d2": ["a", "b"], "d3": ["a", "c"], "d4": ["d"]})
    topics = pd.DataFrame({"qid": ["q1", "q2", "q3", "q4", "q5"], "text": ["a b", "c", "a b c", "zz", "a"]})
    assert [block["qid"].tolist() for block in query_blocks(index, topics, budget=6)] == [
        ["q1", "q2"], ["q3", "q4"], ["q5"]]
    # a query over the budget is a block of its own (q1, q3); a set within it is returned whole
    assert [block["qid"].tolist() for block in query_blocks(index, topics, budget=4)] == [
        ["q1"], ["q2"], ["q3"], ["q4", "q5"]]
    assert query_blocks(index, topics, budget=15)[0] is topics


def flat_query_set(queries):
    """docids, term_offsets, query_term_offsets of queries (each a list of its terms' document sets)."""
    terms = [sorted(postings) for query in queries for postings in query]
    docids = np.array([d for postings in terms for d in postings], dtype=np.int32)
    term_offsets = np.concatenate([[0], np.cumsum([len(p) for p in terms])]).astype(np.int64)
    query_term_offsets = np.concatenate([[0], np.cumsum([len(q) for q in queries])]).astype(np.int64)
    return docids, term_offsets, query_term_offsets


def first_occurrence_numbering(queries):
    """The reference: a dict per query, its documents numbered in order of first occurrence in its postings."""
    expected_candidates, expected_offsets, expected_slots = [], [0], []
    for query in queries:
        slot_of: dict[int, int] = {}
        for postings in query:
            for d in sorted(postings):
                if d not in slot_of:
                    slot_of[d] = len(expected_candidates)
                    expected_candidates.append(d)
                expected_slots.append(slot_of[d])
        expected_offsets.append(len(expected_candidates))
    return expected_candidates, expected_offsets, expected_slots


@settings(max_examples=200, deadline=None)
@given(queries=st.lists(st.lists(st.sets(st.integers(0, 30), max_size=12), max_size=5), max_size=6),
       populated=st.booleans())
def test_candidate_slots_are_a_first_occurrence_numbering_of_each_querys_documents(queries, populated):
    # populated: every output array mapped by populated_empty, however small
    docids, term_offsets, query_term_offsets = flat_query_set(queries)
    with mock.patch.object(populated_module, "POPULATED_BYTES", 0 if populated else populated_module.POPULATED_BYTES):
        candidates, candidate_offsets, slots = candidate_slots(docids, term_offsets, query_term_offsets, 31)
    expected_candidates, expected_offsets, expected_slots = first_occurrence_numbering(queries)
    assert candidates.tolist() == expected_candidates
    assert candidate_offsets.tolist() == expected_offsets
    assert slots.tolist() == expected_slots


@settings(max_examples=200, deadline=None)
@given(data=st.data(), num_docs=st.integers(1, 140),
       pool=st.lists(st.lists(st.sets(st.integers(0, 7), max_size=8), min_size=1, max_size=9), min_size=1, max_size=3))
def test_candidate_slots_with_shared_documents_repeated_queries_and_the_map_full(data, num_docs, pool):
    # documents shared by many terms (a few of them, 8 in all, mostly near the map's end), the same
    # query several times in a row and apart, and documents up to num_docs - 1 (any size of map,
    # 64-multiple or not); the reference is the dict numbering above
    top = num_docs - 1
    pool = [[{max(0, top - d) if d % 2 else min(top, d) for d in postings} for postings in query] for query in pool]
    order = data.draw(st.lists(st.integers(0, len(pool) - 1), max_size=8))
    queries = [pool[k] for k in order]
    docids, term_offsets, query_term_offsets = flat_query_set(queries)
    candidates, candidate_offsets, slots = candidate_slots(docids, term_offsets, query_term_offsets, num_docs)
    expected_candidates, expected_offsets, expected_slots = first_occurrence_numbering(queries)
    assert candidates.tolist() == expected_candidates
    assert candidate_offsets.tolist() == expected_offsets
    assert slots.tolist() == expected_slots


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(FUSED_FAMILIES), depth=st.integers(1, 20),
       mu=st.sampled_from([1.0, 50.0, 2000.0]), order=st.randoms(use_true_random=False),
       ahead=st.sampled_from([0, 3, 1 << 20]))
def test_queries_ranked_one_at_a_time_first_rank_as_the_whole_set(docs, texts, family, depth, mu, order, ahead):
    # a block's parts are made for the queries asked for and those up to `ahead` postings after
    # (PreparedQuerySet.block_parts): queries ranked one at a time in any order, then the whole set,
    # must rank as a fresh set ranked whole
    with mock.patch.object(prepared_module, "BLOCK_PARTS_POSTINGS", ahead):
        _rank_one_at_a_time_then_whole(docs, texts, family, depth, mu, order)


def _rank_one_at_a_time_then_whole(docs, texts, family, depth, mu, order):
    scorer = Scorer(TinyIndex({f"d{n:03d}": doc for n, doc in enumerate(docs)}))
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    point = model.check_point({"mu": mu} if "mu" in model.parameter_names() else {})
    expected = scorer.top(model, scorer.prepare(topics, model, [point]), point, depth)
    prepared = scorer.prepare(topics, model, [point])
    asked = list(range(len(prepared)))
    order.shuffle(asked)
    for q in asked[:len(asked) // 2 + 1]:
        docids, scores, offsets = scorer.top(model, prepared, point, depth, q, q + 1)
        assert docids.tolist() == expected[0][expected[2][q]:expected[2][q + 1]].tolist()
        assert scores.tolist() == expected[1][expected[2][q]:expected[2][q + 1]].tolist()
    got = scorer.top(model, prepared, point, depth)
    for got_array, expected_array in zip(got, expected):
        assert got_array.tolist() == expected_array.tolist()


@pytest.mark.parametrize("length", [0, 1, 1000, (1 << 22) // 8 + 1])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_a_populated_array_holds_what_is_written_as_numpys_does(length, dtype):
    values = np.random.default_rng(length).integers(-1000, 1000, length).astype(dtype)
    for threshold in (0, populated_module.POPULATED_BYTES):
        with mock.patch.object(populated_module, "POPULATED_BYTES", threshold):
            array = populated_module.populated_empty(length, dtype)
        assert array.shape == (length,) and array.dtype == np.dtype(dtype) and array.flags.writeable
        array[:] = values
        assert np.array_equal(array, values)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), rows=st.integers(1, 50), length=st.integers(0, 200),
       dtype=st.sampled_from([np.int32, np.float64, np.uint8]), populated=st.booleans())
def test_gathered_is_numpys_fancy_indexing(data, rows, length, dtype, populated):
    table = np.random.default_rng(rows).integers(0, 100, rows).astype(dtype)
    indices = np.array(data.draw(st.lists(st.integers(0, rows - 1), min_size=length, max_size=length)), np.int32)
    with mock.patch.object(populated_module, "POPULATED_BYTES", 0 if populated else populated_module.POPULATED_BYTES):
        got = populated_module.gathered(table, indices)
    expected = table[indices]
    assert got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, texts=queries, family=st.sampled_from(FUSED_FAMILIES), depth=st.integers(1, 20),
       order=st.randoms(use_true_random=False))
def test_queries_ranked_one_at_a_time_at_alternating_points_rank_as_fresh_sets(docs, texts, family, depth, order):
    # PreparedQuerySet.block_inputs keeps the last block's stacked inputs: a query ranked at one point
    # after another point's query must get its own point's inputs, not the kept ones
    scorer = Scorer(TinyIndex({f"d{n:03d}": doc for n, doc in enumerate(docs)}))
    topics = pd.DataFrame({"qid": [f"q{i}" for i in range(len(texts))], "text": texts})
    model = get_model(family)
    names = model.parameter_names()
    points = [model.check_point({name: value for name, value in values.items() if name in names})
              for values in ({"k1": 0.5, "b": 0.2, "mu": 10.0}, {"k1": 2.0, "b": 0.9, "mu": 3000.0})]
    expected = [scorer.top(model, scorer.prepare(topics, model, points), point, depth) for point in points]
    prepared = scorer.prepare(topics, model, points)
    asked = [(q, p) for q in range(len(prepared)) for p in range(len(points))]
    order.shuffle(asked)
    for q, p in asked:
        docids, scores, _ = scorer.top(model, prepared, points[p], depth, q, q + 1)
        want_docids, want_scores, offsets = expected[p]
        assert docids.tolist() == want_docids[offsets[q]:offsets[q + 1]].tolist()
        assert scores.tolist() == want_scores[offsets[q]:offsets[q + 1]].tolist()


@settings(max_examples=200, deadline=None)
@given(counts=st.lists(st.integers(0, 3000), min_size=1, max_size=40), depth=st.integers(1, 2000), data=st.data())
def test_result_offsets_in_numpy_are_the_kernels(counts, depth, data):
    """The Scorer's offsets of a block of queries' rankings (numpy, so that no JIT kernel starts numba) are the
    integers the kernels compute for themselves (_result_offsets), for any block of the queries."""
    candidate_offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=candidate_offsets[1:])
    first = data.draw(st.integers(0, len(counts) - 1))
    last = data.draw(st.integers(first, len(counts)))
    got = result_offsets(candidate_offsets, first, last, depth)
    expected = _result_offsets(candidate_offsets, first, last, depth)[0]
    assert got.dtype == expected.dtype == np.int64
    assert np.array_equal(got, expected)
    assert got[-1] == sum(min(depth, n) for n in counts[first:last])
