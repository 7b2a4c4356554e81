"""Where a clique's query terms sit in each sentence's parse tree, looked up once per query set.

:class:`SentenceParses` holds a collection's parses (:mod:`irgrid.sentences.parsing` makes them) by
index docid, each token mapped through the index's analyzer to the terms it yields (so a
stemmed, stopped query term finds its token); :func:`tree_values` gives, for one clique and
the sentences of its postings, the values the sentence model scores:

``connected``        1.0 when the clique's tokens are connected in the tree (BoolSynR), else 0.0
``span``             the largest number of links between two of its tokens (inf: different trees)
``closeness``        1 / ((1 + dis)(1 + h)): dis the mean links between its tokens, h their height
``mean_closeness``   1 / ((1 + dis)(1 + h')): h' their mean height (the non-contiguous potential)

A sentence whose parse lacks one of the clique's terms although the index counts them together
(a tokenizer that split a word the parser kept whole) gets connected 0, span inf, closeness 0:
co-occurrence without a tree relation.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from ..collections.dependency_parse import Parse, read_parses
from ..errors import InputFormatError
from .trees import ParseTree, clique_values


class SentenceParses:
    """A collection's parses by the index's docids, with each token's analyzed terms; trees built on first use."""

    def __init__(self, parses: Mapping[str, Parse], docnos: Sequence[str], analyzer, source: str = "parses"):
        self._parses = parses
        self._docnos = docnos
        self._analyzer = functools.lru_cache(maxsize=1 << 16)(lambda token: tuple(analyzer(token)))
        self._trees: dict[int, tuple[ParseTree, tuple[tuple[str, ...], ...]]] = {}
        self.source = source

    @classmethod
    def load(cls, path: str | os.PathLike, index) -> SentenceParses:
        """The parses stored at ``path`` (:func:`irgrid.collections.dependency_parse.read_parses`) for ``index``'s documents."""
        return cls(read_parses(path), index.docnos, index.analyzer, source=str(path))

    def tree(self, docid: int) -> tuple[ParseTree, tuple[tuple[str, ...], ...]]:
        """The parse tree of document ``docid`` and the analyzed terms of each of its tokens."""
        found = self._trees.get(docid)
        if found is None:
            docno = str(self._docnos[docid])
            parse = self._parses.get(docno)
            if parse is None:
                raise InputFormatError(self.source, None, f"a parse of every document; document {docno!r} has none "
                                                          "(the parses were made for another collection?)")
            found = self._trees[docid] = (ParseTree(parse), tuple(self._analyzer(token) for token in parse.tokens))
        return found


def closeness(distance: float, height: float) -> float:
    """1 / ((1 + distance)(1 + height)): 1 for one token, 1/4 for a word and its head, 0 across trees."""
    if math.isinf(distance) or math.isinf(height):
        return 0.0
    return 1.0 / ((1.0 + distance) * (1.0 + height))


def tree_values(parses: SentenceParses, clique: Sequence[str], docids: np.ndarray) -> dict[str, np.ndarray]:
    """The tree values of ``clique`` in each sentence of ``docids`` (module docstring), arrays aligned with docids."""
    n = len(docids)
    connected = np.zeros(n, dtype=np.float64)
    span = np.full(n, np.inf)
    near = np.zeros(n, dtype=np.float64)
    mean_near = np.zeros(n, dtype=np.float64)
    for i, docid in enumerate(np.asarray(docids).tolist()):
        tree, token_terms = parses.tree(docid)
        found = clique_values(tree, token_terms, clique)
        if found is None:
            continue
        connected[i] = 1.0 if found.connected else 0.0
        span[i] = found.span
        near[i] = closeness(found.distance, found.height)
        mean_near[i] = closeness(found.distance, found.mean_height)
    return {"connected": connected, "span": span, "closeness": near, "mean_closeness": mean_near}
