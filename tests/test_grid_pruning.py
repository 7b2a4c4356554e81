"""benchmarks/grid_pruning.py's MaxScore counts: a hand-worked case, and random cases against a plain reference."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from common import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
grid_pruning = pytest.importorskip("grid_pruning")

# three terms of one query, (docid, weighted score) postings; the documents' scores:
# d1 1.0, d2 2.5, d3 5.5, d4 1.0, d5 1.0, d6 3.0, so the top 2's threshold is 3.0
HAND = {"A": [(1, 1.0), (2, 0.5), (5, 1.0)], "B": [(2, 2.0), (3, 1.5)], "C": [(3, 4.0), (4, 1.0), (6, 3.0)]}


def flat(terms: dict[str, list[tuple[int, float]]]):
    docids = np.array([d for postings in terms.values() for d, _ in postings], dtype=np.int32)
    contributions = np.array([c for postings in terms.values() for _, c in postings])
    offsets = np.cumsum([0] + [len(postings) for postings in terms.values()]).astype(np.int64)
    bounds = np.array([max(c for _, c in postings) for postings in terms.values()])
    return docids, contributions, offsets, bounds


def counted(terms, initial, depth, block_size):
    docids, contributions, offsets, bounds = flat(terms)
    counts = np.zeros(len(grid_pruning.COUNTS), dtype=np.int64)
    final = grid_pruning.maxscore_query(docids, contributions, offsets, bounds, initial, depth, block_size, counts)
    return dict(zip(grid_pruning.COUNTS, counts.tolist())), final


def test_hand_worked_oracle_daat_and_block_max():
    # theta 3: bounds A 1, B 2, C 4; A alone sums below 3 (non-essential). B and C's documents 2, 3, 4, 6 are
    # touched (5 postings); d2 2.0 + 1 reaches 3: A looked up (0.5); d3 looked up, absent; d4 1.0 + 1 < 3
    # dropped; d6 3.0 + 1: looked up, absent. d2, d3, d6 fully scored and each enters the heap of 2.
    oracle, final = counted(HAND, 3.0, 2, 0)
    assert final == 3.0
    assert oracle == {"touched": 4, "block_skipped": 0, "essential_postings": 5, "lookups": 3,
                      "nonessential_postings": 1, "fully_scored": 3, "inserted": 3}
    # from -inf: d1, d2 fill the heap (threshold 1.0: nothing non-essential yet), d3 raises it to 2.5 and makes
    # A non-essential; d4 (1.0 + 1 < 2.5) dropped, d5 (A's only) never touched, d6 looked up in A, enters
    daat, final = counted(HAND, -np.inf, 2, 0)
    assert final == 3.0
    assert daat == {"touched": 5, "block_skipped": 0, "essential_postings": 7, "lookups": 1,
                    "nonessential_postings": 0, "fully_scored": 4, "inserted": 4}
    # blocks of one posting: a term's bound at d is its first posting at or after d. d2: 0.5 + 2 + 4 >= 3, scored,
    # then 2.0 + A's 0.5 < 3 dropped; d3: 1 + 1.5 + 4, A looked up; d4: 1 + 0 + 1 < 3 skipped; d6: 0 + 0 + 3,
    # 3.0 + 0 reaches 3: A looked up
    blocks, final = counted(HAND, 3.0, 2, 1)
    assert final == 3.0
    assert blocks == {"touched": 4, "block_skipped": 1, "essential_postings": 4, "lookups": 2,
                      "nonessential_postings": 0, "fully_scored": 2, "inserted": 2}


def reference_oracle(terms, theta):
    """Oracle MaxScore counted from its definition, over each document's dictionary of terms."""
    bounds = {t: max(c for _, c in postings) for t, postings in terms.items()}
    ascending = sorted(terms, key=lambda t: bounds[t])  # ties: the terms' order (a stable sort)
    prefix = np.cumsum([0.0] + [bounds[t] for t in ascending])
    limit = theta - grid_pruning.SLACK * abs(theta)
    non_essential = max(k for k in range(len(prefix)) if prefix[k] < limit) if limit > 0 else 0
    essential = set(ascending[non_essential:])
    documents: dict[int, dict[str, float]] = {}
    for t, postings in terms.items():
        for d, c in postings:
            documents.setdefault(d, {})[t] = c
    counts = dict.fromkeys(grid_pruning.COUNTS, 0)
    for parts in documents.values():
        if not essential & parts.keys():
            continue
        counts["touched"] += 1
        score = sum(c for t, c in parts.items() if t in essential)
        counts["essential_postings"] += len(essential & parts.keys())
        for r in range(non_essential - 1, -1, -1):
            if score + prefix[r + 1] < limit:
                break
            counts["lookups"] += 1
            if ascending[r] in parts:
                score += parts[ascending[r]]
                counts["nonessential_postings"] += 1
        else:
            counts["fully_scored"] += 1
    return counts, sorted((sum(parts.values()) for parts in documents.values()), reverse=True)


@pytest.mark.parametrize("seed", range(20))
def test_random_queries_against_the_reference(seed):
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 6))
    terms = {}
    for t in range(int(rng.integers(1, 5))):
        docs = np.sort(rng.choice(40, size=int(rng.integers(1, 25)), replace=False))
        terms[f"t{t}"] = [(int(d), float(rng.integers(1, 20)) / 4 * (t + 1)) for d in docs]
    _, scores = reference_oracle(terms, 0.0)
    theta = scores[depth - 1] if len(scores) >= depth else -np.inf
    expected, _ = reference_oracle(terms, theta)
    oracle, final = counted(terms, theta, depth, 0)
    assert {k: oracle[k] for k in expected if k not in ("inserted", "block_skipped")} == {
        k: v for k, v in expected.items() if k not in ("inserted", "block_skipped")}
    assert oracle["fully_scored"] >= sum(score >= theta for score in scores)
    all_postings = sum(len(postings) for postings in terms.values())
    for initial, block_size in ((-np.inf, 0), (-np.inf, 4), (theta, 4), (-np.inf, 1)):
        other, other_final = counted(terms, initial, depth, block_size)
        assert other_final == final  # every variant finds the exact depth-th score
        assert other["essential_postings"] + other["nonessential_postings"] <= all_postings
        if np.isfinite(theta):
            assert final == theta
        if block_size == 0:  # a threshold reached late scores at least what theta known in advance does
            assert other["essential_postings"] >= oracle["essential_postings"]


def bounded(terms, initial, depth, block_size):
    """``bounded_daat`` of one query (candidates in docid order) over ``block_bounds`` of blocks of ``block_size``."""
    docids, contributions, offsets, _ = flat(terms)
    candidates = np.unique(docids)
    slots = np.searchsorted(candidates, docids)
    scores = np.bincount(slots, weights=contributions, minlength=len(candidates))
    bounds = grid_pruning.block_bounds(contributions, offsets, slots, len(candidates), block_size)
    counts = np.zeros((1, 2), dtype=np.int64)
    final = np.empty(1)
    grid_pruning.bounded_daat(np.array([0, len(candidates)]), np.arange(len(candidates)), bounds, scores,
                              np.bincount(slots, minlength=len(candidates)), np.array([initial]), depth, counts, final)
    return counts[0].tolist(), final[0], bounds, scores


def test_hand_worked_block_bounds():
    # blocks of 2: A [1.0, 0.5] [1.0], B [2.0, 1.5], C [4.0, 1.0] [3.0]; a document's bound sums the blocks of the
    # terms it holds: d1 1, d2 1 + 2, d3 2 + 4, d4 4, d5 1, d6 3
    counts, final, bounds, _ = bounded(HAND, 3.0, 2, 2)
    assert bounds.tolist() == [1.0, 3.0, 6.0, 4.0, 1.0, 3.0]
    assert counts == [6, 4] and final == 3.0  # d2, d3, d4, d6 reach theta 3: their 6 postings scored
    # from -inf: d1, d2 fill the heap (threshold 1.0), d3 raises it to 2.5, d4 (bound 4) scored, d5 (1) skipped,
    # d6 (3) scored and raises it to 3.0
    counts, final, _, _ = bounded(HAND, -np.inf, 2, 2)
    assert counts == [7, 5] and final == 3.0


@pytest.mark.parametrize("seed", range(10))
def test_block_bounds_bound_and_one_posting_blocks_are_the_scores(seed):
    rng = np.random.default_rng(seed)
    terms = {}
    for t in range(int(rng.integers(1, 5))):
        docs = np.sort(rng.choice(60, size=int(rng.integers(1, 40)), replace=False))
        terms[f"t{t}"] = [(int(d), float(rng.integers(1, 20)) / 4 * (t + 1)) for d in docs]
    depth = int(rng.integers(1, 8))
    _, _, bounds_one, scores = bounded(terms, -np.inf, depth, 1)
    assert np.array_equal(bounds_one, scores)  # a block of one posting is bounded by its own score
    ordered = np.sort(scores)[::-1]
    theta = ordered[depth - 1] if len(ordered) >= depth else -np.inf
    for block_size in (1, 3, 8, 100):
        oracle, final, bounds, _ = bounded(terms, theta, depth, block_size)
        assert np.all(bounds >= scores)
        assert oracle[1] == int(np.sum(bounds >= theta))
        daat, daat_final, _, _ = bounded(terms, -np.inf, depth, block_size)
        assert final == daat_final == theta
        assert daat[1] >= oracle[1]
