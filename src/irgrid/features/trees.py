"""Where a group of query terms sits in a sentence's dependency parse tree.

The MRF sentence-retrieval features ask three things of a group of query terms in a
sentence: are they syntactically connected (``BoolSynR``), how far apart are they in the
tree (``dis``), and how high is the smallest subtree holding them (``h``).  This module
answers them for one :class:`~irgrid.collections.dependency_parse.Parse` (:class:`ParseTree`), first
for a group of tokens (:meth:`ParseTree.group`), then for a clique of query terms, choosing
which occurrence of each term to use (:func:`clique_values`).

Definitions (tokens are 0-based; a parse may be a forest, see :mod:`.parse`):

``depth(t)``
    0 for a root; ``depth(head(t)) + 1`` otherwise.
``links(a, b)``
    the number of edges on the tree path between tokens ``a`` and ``b`` (0 when
    ``a == b``), ``inf`` when they are in different trees of the forest.
``lca(nodes)``
    the lowest common ancestor of a set of tokens of one tree (``None`` across trees).

For a group of tokens ``nodes`` (one token per query term of the group; a token may
repeat when it carries two of the group's query terms), :meth:`ParseTree.group` gives a
:class:`GroupValues`:

``connected``
    True iff the *distinct* tokens induce a connected subgraph of the tree using only the
    edges ``(token, head)`` with both ends in the set.  One distinct token: True; two
    tokens: True iff one is the other's head.  False across trees.
``distance``
    the mean of ``links(n_i, n_j)`` over all unordered pairs ``i < j`` of the group's
    positions (a pair of the same token counts 0); 0 for a group of one.
``height``
    ``max_i depth(n_i) - depth(lca(nodes))``: the height of the smallest subtree holding
    the group.
``mean_height``
    ``mean_i (depth(n_i) - depth(lca(nodes)))`` (so ``mean_height <= height``).
``span``
    the largest ``links(n_i, n_j)`` over the pairs (0 for a group of one).

When the group's tokens are in different trees, ``connected`` is False and the four
numbers are ``inf``.

Choosing occurrences (:func:`clique_values`).  ``token_terms[t]`` is the tuple of
analyzed terms token ``t`` yields (none for a stop word, two for ``new-york``).  A query
term may occur at several tokens (:func:`occurrences`); for a clique (a tuple of query
terms, repeats allowed) every combination of one occurrence per clique position is
considered, and the one minimising ``(distance, height, mean_height, sorted tokens)``
lexicographically is kept (the sums of links and of heights are compared, as integers,
in place of the means: same order, no rounding).  A combination across trees comes after
every combination inside one tree.  A query term repeated in the clique may take the
same token at both positions, as ``#uwN(a a)`` may match one occurrence of ``a`` twice
(:mod:`irgrid.features.windows`): the repeat then adds nothing (distance 0 between the
copies), and one occurrence of ``a`` suffices for the clique to co-occur.  A clique with a
term that no token yields gets ``None`` (no co-occurrence).

The cap.  When the number of combinations (the product of the positions' occurrence
counts) exceeds ``cap`` (default 4096), the choice is greedy instead: the pivot is the
clique position whose term has the fewest occurrences (the first such position); for
each occurrence ``p`` of the pivot, every other position takes its term's occurrence
nearest to ``p`` in links (ties: the lower token; a repeat of the pivot's term takes
``p`` itself), and of these candidates (one per pivot occurrence) the one with the
smallest key above is kept.  That is as many candidates as the pivot has occurrences, and
it may miss the exhaustive optimum (tests/test_sentence_tree.py shows a case).

Costs.  A :class:`ParseTree` precomputes, once per parse, the depths, the heads and two
``n x n`` integer matrices: the links between every two tokens and the depth of their
lowest common ancestor (the number of common ancestors-or-self of ``a`` and ``b`` is
``depth(lca(a, b)) + 1``, so both come from one product of the ancestor matrix with its
transpose).  The depth of the lca of a set is the smallest depth of the lca of two of its
members, so a group's values are table look-ups.  Small choices are made in Python, large
ones (more than ``_VECTOR_MIN`` combinations) with numpy over all combinations at once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..collections.dependency_parse import ROOT, Parse

INF = math.inf
#: more combinations than this are compared with numpy, fewer in plain Python
_VECTOR_MIN = 48


@dataclass(frozen=True)
class GroupValues:
    """Where a group of tokens sits in a parse tree (module docstring); inf / False across trees."""

    connected: bool
    distance: float
    height: float
    mean_height: float
    span: float


ACROSS_TREES = GroupValues(False, INF, INF, INF, INF)
_ONE_TOKEN = GroupValues(True, 0.0, 0.0, 0.0, 0.0)


class ParseTree:
    """A parse's depths, heads, links and lca depths, precomputed once (module docstring)."""

    __slots__ = ("parse", "heads", "n", "_depth", "_depth_np", "_links", "_links_np", "_lcad", "_lcad_np")

    def __init__(self, parse: Parse) -> None:
        self.parse = parse
        heads = tuple(int(h) for h in parse.heads)
        self.heads = heads
        n = self.n = len(heads)
        depth = [-1] * n
        for start in range(n):
            path, node = [], start
            while node != ROOT and depth[node] < 0:
                path.append(node)
                node = heads[node]
            d = -1 if node == ROOT else depth[node]
            for token in reversed(path):
                d += 1
                depth[token] = d
        self._depth = depth
        depth_np = self._depth_np = np.asarray(depth, dtype=np.int64)
        # ancestors[t, a] = 1 when a is t or an ancestor of t: climb from every token at once
        ancestors = np.zeros((n, n), dtype=np.float64)
        if n:
            parent = np.asarray(heads + (ROOT,), dtype=np.int64)  # parent[n] = ROOT: "above a root"
            parent[parent == ROOT] = n
            rows = np.arange(n)
            current = rows.copy()
            while True:
                alive = current < n
                if not alive.any():
                    break
                ancestors[rows[alive], current[alive]] = 1.0
                current = parent[current]
        # common ancestors-or-self of a and b: the path from their tree's root to lca(a, b)
        lcad = (ancestors @ ancestors.T).astype(np.int64) - 1  # -1: different trees
        links = depth_np[:, None] + depth_np[None, :] - 2 * lcad
        links[lcad < 0] = -1
        self._lcad_np = lcad
        self._links_np = links
        self._lcad = lcad.tolist()
        self._links = links.tolist()

    @classmethod
    def from_heads(cls, heads: Sequence[int]) -> ParseTree:
        """A tree from 0-based heads alone (-1: a root), checked as a :class:`Parse` is."""
        n = len(heads)
        return cls(Parse(tuple(str(i) for i in range(n)), tuple(int(h) for h in heads), ("",) * n))

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"ParseTree(heads={self.heads!r})"

    def _check(self, token: int) -> int:
        token = int(token)
        if not 0 <= token < self.n:
            raise IndexError(f"token {token} outside 0..{self.n - 1}")
        return token

    def head(self, t: int) -> int:
        """The head of token ``t`` (-1 for a root)."""
        return self.heads[self._check(t)]

    def depth(self, t: int) -> int:
        """0 for a root, the head's depth + 1 otherwise."""
        return self._depth[self._check(t)]

    @property
    def max_depth(self) -> int:
        """The largest depth of a token (-1 for an empty parse)."""
        return max(self._depth, default=-1)

    def links(self, a: int, b: int) -> float:
        """The number of edges between ``a`` and ``b`` (an int), ``inf`` when they are in different trees."""
        found = self._links[self._check(a)][self._check(b)]
        return INF if found < 0 else found

    def lca(self, nodes: Iterable[int]) -> int | None:
        """The lowest common ancestor of ``nodes`` (one of them, or above them), ``None`` across trees."""
        tokens = [self._check(t) for t in nodes]
        if not tokens:
            raise ValueError("the lca of no tokens")
        lcad = self._lcad
        first = tokens[0]
        target = min(lcad[first][t] for t in tokens)
        if target < 0:
            return None
        node, depth, heads = first, self._depth, self.heads
        while depth[node] > target:
            node = heads[node]
        return node

    def group(self, nodes: Sequence[int]) -> GroupValues:
        """The values of a group of tokens, one per query term (repeats allowed): module docstring."""
        tokens = [self._check(t) for t in nodes]
        m = len(tokens)
        if m == 0:
            raise ValueError("a group of no tokens")
        if m == 1:
            return _ONE_TOKEN
        pairs = self._pairwise(tokens)
        if pairs is None:
            return ACROSS_TREES
        total, span, top = pairs
        depths = [self._depth[t] for t in tokens]
        distinct = set(tokens)
        heads = self.heads
        edges = sum(1 for t in distinct if heads[t] in distinct)
        return GroupValues(connected=edges == len(distinct) - 1,
                           distance=total / (m * (m - 1) // 2),
                           height=float(max(depths) - top),
                           mean_height=(sum(depths) - m * top) / m,
                           span=float(span))

    # -- choosing occurrences ------------------------------------------------------------------------

    def _key(self, tokens: Sequence[int]) -> tuple:
        """The order of :func:`clique_values`: (across trees, sum of links, height, sum of heights, sorted tokens)."""
        pairs = self._pairwise(tokens)
        if pairs is None:
            return (1, 0, 0, 0, tuple(sorted(tokens)))
        total, _, top = pairs
        depths = [self._depth[t] for t in tokens]
        return (0, total, max(depths) - top, sum(depths) - len(tokens) * top, tuple(sorted(tokens)))

    def _pairwise(self, tokens: Sequence[int]) -> tuple[int, int, int] | None:
        """(sum of links over the pairs, largest links, depth of the group's lca); None across trees."""
        links, lcad = self._links, self._lcad
        m = len(tokens)
        total = span = 0
        top = self._depth[tokens[0]]
        for i in range(m):
            row_links, row_lcad = links[tokens[i]], lcad[tokens[i]]
            for j in range(i + 1, m):
                found = row_links[tokens[j]]
                if found < 0:
                    return None
                total += found
                if found > span:
                    span = found
                if row_lcad[tokens[j]] < top:
                    top = row_lcad[tokens[j]]
        return total, span, top

    def _best_python(self, candidates: Iterable[Sequence[int]]) -> tuple[int, ...]:
        return tuple(min(candidates, key=self._key))

    def _best_numpy(self, lists: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The best of every combination of one token from each of ``lists``, compared all at once."""
        m = len(lists)
        grids = np.meshgrid(*[np.asarray(options, dtype=np.int64) for options in lists], indexing="ij")
        combos = np.stack([grid.ravel() for grid in grids], axis=1)  # (K, m), in itertools.product order
        depths = self._depth_np[combos]
        if m == 1:
            total = height = height_sum = across = np.zeros(len(combos), dtype=np.int64)
        else:
            first, second = np.triu_indices(m, k=1)
            pair_links = self._links_np[combos[:, first], combos[:, second]]
            across = (pair_links < 0).any(axis=1)
            total = pair_links.sum(axis=1)
            top = self._lcad_np[combos[:, first], combos[:, second]].min(axis=1)
            height = depths.max(axis=1) - top
            height_sum = depths.sum(axis=1) - m * top
            total = np.where(across, 0, total)
            height = np.where(across, 0, height)
            height_sum = np.where(across, 0, height_sum)
        ordered = np.sort(combos, axis=1)
        keys = [ordered[:, c] for c in range(m - 1, -1, -1)] + [height_sum, height, total, across.astype(np.int64)]
        best = int(np.lexsort(keys)[0])
        return tuple(int(t) for t in combos[best])

    def _best_greedy(self, lists: Sequence[Sequence[int]]) -> tuple[int, ...]:
        """The cap's choice (module docstring): each pivot occurrence with every other term's nearest occurrence."""
        pivot = min(range(len(lists)), key=lambda i: len(lists[i]))
        links = self._links
        candidates = []
        for p in lists[pivot]:
            row = links[p]
            tokens = []
            for i, options in enumerate(lists):
                if i == pivot:
                    tokens.append(p)
                else:
                    tokens.append(min(options, key=lambda o: (INF if row[o] < 0 else row[o], o)))
            candidates.append(tokens)
        return self._best_python(candidates)


@lru_cache(maxsize=4096)
def tree_of(parse: Parse) -> ParseTree:
    """The :class:`ParseTree` of ``parse``, remembered for the last 4096 parses."""
    return ParseTree(parse)


def occurrences(token_terms: Sequence[Sequence[str]], term: str) -> list[int]:
    """The tokens that yield ``term``, in order (a token yielding it twice listed once)."""
    return [t for t, terms in enumerate(token_terms) if term in terms]


def _occurrence_lists(tree: ParseTree, token_terms: Sequence[Sequence[str]],
                      clique: Sequence[str]) -> list[list[int]] | None:
    if not clique:
        raise ValueError("an empty clique")
    if len(token_terms) != tree.n:
        raise ValueError(f"{len(token_terms)} tokens' terms for a parse of {tree.n} tokens")
    found: dict[str, list[int]] = {term: [] for term in clique}
    for t, terms in enumerate(token_terms):
        for term in terms:
            tokens = found.get(term)
            if tokens is not None and (not tokens or tokens[-1] != t):
                tokens.append(t)
    lists = [found[term] for term in clique]
    if any(not tokens for tokens in lists):
        return None
    return lists


def choose_occurrences(tree: ParseTree, token_terms: Sequence[Sequence[str]], clique: Sequence[str],
                       cap: int = 4096) -> tuple[int, ...] | None:
    """The token chosen for each position of ``clique`` (module docstring), ``None`` when a term is absent."""
    lists = _occurrence_lists(tree, token_terms, clique)
    if lists is None:
        return None
    combinations = math.prod(len(tokens) for tokens in lists)
    if combinations == 1:
        return tuple(tokens[0] for tokens in lists)
    if combinations > cap:
        return tree._best_greedy(lists)
    if combinations > _VECTOR_MIN:
        return tree._best_numpy(lists)
    return tree._best_python(itertools.product(*lists))


def clique_values(tree: ParseTree, token_terms: Sequence[tuple[str, ...]], clique: Sequence[str],
                  cap: int = 4096) -> GroupValues | None:
    """The :class:`GroupValues` of the best occurrences of ``clique``'s terms, ``None`` when one is absent.

    ``token_terms[t]``: the analyzed terms token ``t`` yields.  More than ``cap`` combinations of
    occurrences: the greedy choice (module docstring).
    """
    chosen = choose_occurrences(tree, token_terms, clique, cap)
    return None if chosen is None else tree.group(chosen)
