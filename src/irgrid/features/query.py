"""Query features: what a query is compiled into before any document is scored.

A feature is a single term or a window over two or more terms, written in Indri's
query language so a reader can check a compiled query by eye:

=============  ===========================================================================
``a``          the term itself
``#1(a b c)``  exact phrase: ``a`` then ``b`` then ``c`` at consecutive positions
``#odN(a b)``  ordered window: each term after the previous one, at most N positions on
``#uwN(a b)``  unordered window: all terms, in any order, inside a span of at most N positions
=============  ===========================================================================

Each feature becomes postings ``(docid, count)`` with its own df and cf
(:mod:`irgrid.features.windows` says how a window is counted), so every smoothing
formula scores a window exactly as it scores a term.  A model family compiles a
query into *groups* of features (:class:`CompiledFeature`): Metzler & Croft's SDM
into the single terms (T), the ordered pairs (O) and the unordered pairs (U); a
bigram model into terms and ``#1`` pairs; and so on.

A query reaches a model as an :class:`AnalyzedQuery`: its terms in query order
(the index's analyzer applied, so stemming and stop words match the documents)
and, where the query set was parsed, its phrases, each already analyzed.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TERM = "term"
ORDERED = "od"
UNORDERED = "uw"


@dataclass(frozen=True, order=True)
class Feature:
    """A term (``op='term'``, one term) or a window (``od``/``uw``, two or more terms, ``width`` >= 1)."""

    op: str
    terms: tuple[str, ...]
    width: int = 0

    def __post_init__(self) -> None:
        if self.op == TERM:
            if len(self.terms) != 1:
                raise ValueError(f"a term feature has one term, got {self.terms!r}")
        elif self.op in (ORDERED, UNORDERED):
            if len(self.terms) < 2:
                raise ValueError(f"a #{self.op} window needs two or more terms, got {self.terms!r}")
            if self.width < 1:
                raise ValueError(f"a #{self.op} window needs a width >= 1, got {self.width}")
            if self.op == UNORDERED and self.width < len(self.terms):
                raise ValueError(f"#uw{self.width} cannot hold {len(self.terms)} terms: the width must be >= the terms")
        else:
            raise ValueError(f"unknown feature operator {self.op!r}; expected term, od or uw")

    @property
    def is_term(self) -> bool:
        return self.op == TERM

    def __str__(self) -> str:
        if self.op == TERM:
            return self.terms[0]
        name = "1" if self.op == ORDERED and self.width == 1 else f"{self.op}{self.width}"
        return f"#{name}({' '.join(self.terms)})"


@functools.lru_cache(maxsize=1 << 16)
def term(word: str) -> Feature:
    # one Feature a word (they are immutable): a query set compiles each query word several times
    # (a phrase model: its words, then a phrase's words again), and __post_init__ checks each new one
    return Feature(TERM, (word,))


def phrase(words: Sequence[str]) -> Feature:
    """``#1(w1 ... wk)``: the words at consecutive positions."""
    return Feature(ORDERED, tuple(words), 1)


def ordered(words: Sequence[str], width: int) -> Feature:
    return Feature(ORDERED, tuple(words), int(width))


def unordered(words: Sequence[str], width: int) -> Feature:
    return Feature(UNORDERED, tuple(words), int(width))


@dataclass(frozen=True)
class AnalyzedQuery:
    """A query as a model family sees it before compiling.

    ``terms``: the analyzed query terms in query order, repeats kept (terms absent
    from the collection included: :func:`present` drops them where a family
    wants).  ``phrases``: the parser's phrases of the query, each analyzed (None
    when the query set was not parsed).
    """

    qid: str
    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class CompiledFeature:
    """A feature of one query in a named group, with its count in the query (``qtf``)."""

    feature: Feature
    group: str
    qtf: int = 1


def counted(features: Iterable[tuple[Feature, str]]) -> list[CompiledFeature]:
    """``(feature, group)`` pairs merged: a repeat raises the qtf; order of first appearance kept."""
    counts: dict[tuple[Feature, str], int] = {}
    for key in features:
        counts[key] = counts.get(key, 0) + 1
    return [CompiledFeature(feature, group, qtf) for (feature, group), qtf in counts.items()]


def sequential_pairs(terms: Sequence[str]) -> list[tuple[str, str]]:
    """Adjacent query terms: (q1 q2), (q2 q3), ... (Metzler & Croft's sequential dependence)."""
    return list(zip(terms[:-1], terms[1:]))


def phrase_pairs(phrases: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """Each phrase of two or more terms decomposed into its adjacent pairs (the ADM paper's verbose queries)."""
    return [pair for words in phrases if len(words) >= 2 for pair in sequential_pairs(words)]


def term_pairs(query: AnalyzedQuery) -> list[tuple[str, str]]:
    """The query's term pairs L: from its parsed phrases where the query set was parsed, else adjacent words."""
    if query.phrases is not None:
        return phrase_pairs(query.phrases)
    return sequential_pairs(query.terms)


def ordered_subsets(terms: Sequence[str], min_size: int = 2, max_size: int | None = None) -> list[tuple[str, ...]]:
    """Every subset of the query's term positions of ``min_size`` to ``max_size`` terms, in query order."""
    n = len(terms)
    largest = n if max_size is None else min(n, max_size)
    return [tuple(terms[i] for i in chosen) for size in range(min_size, largest + 1)
            for chosen in itertools.combinations(range(n), size)]


def contiguous_runs(terms: Sequence[str], min_size: int = 2, max_size: int | None = None) -> list[tuple[str, ...]]:
    """Every run of ``min_size`` to ``max_size`` consecutive query terms."""
    n = len(terms)
    largest = n if max_size is None else min(n, max_size)
    return [tuple(terms[i:i + size]) for size in range(min_size, largest + 1) for i in range(n - size + 1)]
