"""Query phrases found in the collection: adjacent query words that co-occur far more than by chance.

Without a phrase list, a query's phrases can be read off the collection itself: two
adjacent query words form a phrase when, in the documents, they stand next to each other
much more often than their frequencies predict, i.e. their pointwise mutual information
(PMI) is high.  Only the queries' own adjacent pairs are counted, in one pass over the
documents, so memory grows with the queries, not with the collection's vocabulary.

Words are word tokens (maximal runs of letters and digits, casefolded), in the queries and
in the documents alike; a pair is two consecutive tokens, whatever separates them
(``high-speed`` is the pair ``high speed``).  The phrase returned is the query's own text for
the pair (its surface span, inner whitespace made one space).  Longer phrases are not made
by merging pairs.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pyarrow.parquet as pq

from ..analysis.tokenize import WORD_RE, surface, word_spans
from ..errors import ConfigError, InputFormatError

#: rows read at a time from a document shard
BATCH_ROWS = 4096


def iter_document_texts(docs_dir: str | os.PathLike) -> Iterator[str]:
    """The ``text`` of every document of a directory of shards ``part-XXXX.parquet``, in shard order.

    The directory and shards are checked at once (an error names the directory or the
    shard); the texts are then read lazily, a batch of rows at a time.  A null text reads as "".
    """
    docs_dir = Path(docs_dir)
    shards = sorted(docs_dir.glob("part-*.parquet")) if docs_dir.is_dir() else []
    if not shards:
        raise InputFormatError(docs_dir, None, "a directory of document shards part-XXXX.parquet",
                               found="no shard" if docs_dir.is_dir() else "no such directory")
    for shard in shards:
        names = pq.read_schema(shard).names
        if "text" not in names:
            raise InputFormatError(shard, None, "a document shard with a column text", found=f"columns {names}")
    return _texts(shards)


def _texts(shards: list[Path]) -> Iterator[str]:
    for shard in shards:
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=["text"]):
            for text in batch.column(0).to_pylist():
                yield text or ""


def pair_counts(pairs: set[tuple[str, str]], documents: Iterable[str]) -> tuple[Counter, Counter, int, int]:
    """``(unigram counts, pair counts, N, M)`` of ``pairs`` and their words over ``documents`` (one pass).

    N is the number of word tokens of all documents, M the number of adjacent positions
    (sum over documents of max(n_d - 1, 0)); only the words of ``pairs`` and ``pairs`` themselves
    are counted.
    """
    words = {word for pair in pairs for word in pair}
    unigrams: Counter = Counter()
    bigrams: Counter = Counter()
    tokens_total = positions = 0
    for text in documents:
        tokens = [token.casefold() for token in WORD_RE.findall(text or "")]
        if not tokens:
            continue
        tokens_total += len(tokens)
        positions += len(tokens) - 1
        unigrams.update(token for token in tokens if token in words)
        bigrams.update(pair for pair in zip(tokens, tokens[1:]) if pair in pairs)
    return unigrams, bigrams, tokens_total, positions


def pmi(c_ab: int, c_a: int, c_b: int, tokens: int, positions: int) -> float:
    """PMI in bits: log2( (c_ab / M) / ((c_a / N) (c_b / N)) ) = log2( c_ab N^2 / (M c_a c_b) ).

    Computed as the log of one quotient of integers, so a ratio that is a power of two gives
    an exact PMI.  The pair must occur (c_ab >= 1, hence c_a, c_b, M >= 1).
    """
    return math.log2((c_ab * tokens * tokens) / (positions * c_a * c_b))


def pmi_phrases(topics_texts: Mapping[str, str], documents: Iterable[str], pmi_threshold: float = 3.0,
                min_count: int = 3) -> dict[str, list[str]]:
    """Each query's phrases: its adjacent word pairs with a high PMI in ``documents``.

    The estimator, over the documents (texts) and word tokens casefolded:

    * N = number of word tokens of all documents; c(a) = occurrences of word a;
      p(a) = c(a) / N;
    * M = number of adjacent positions = sum over documents of max(n_d - 1, 0), which is N
      minus the number of non-empty documents (a pair never spans two documents);
      c(ab) = occurrences of a immediately followed by b; p(ab) = c(ab) / M;
    * PMI(a, b) = log2( p(ab) / (p(a) p(b)) ) = log2( c(ab) N^2 / (M c(a) c(b)) ) bits.

    A pair is a phrase when c(ab) >= ``min_count`` and PMI(a, b) > ``pmi_threshold``.  Within a
    query, phrases are taken greedily by PMI descending (ties: the earlier pair first), skipping
    a pair sharing a word (token position) with one already taken, and returned in query order
    as the query's surface text.  ``min_count`` must be at least 1.
    """
    if isinstance(min_count, float) and min_count.is_integer():
        min_count = int(min_count)
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ConfigError(f"phrases: min_count must be an integer of at least 1, not {min_count!r}")
    try:
        threshold = float(pmi_threshold)
    except (TypeError, ValueError):
        raise ConfigError(f"phrases: pmi_threshold must be a number, not {pmi_threshold!r}") from None
    spans = {qid: word_spans(text or "") for qid, text in topics_texts.items()}
    pairs = {(a[0], b[0]) for tokens in spans.values() for a, b in zip(tokens, tokens[1:])}
    unigrams, bigrams, tokens_total, positions = pair_counts(pairs, documents)

    found: dict[str, list[str]] = {}
    for qid, tokens in spans.items():
        candidates = []
        for i, (a, b) in enumerate(zip(tokens, tokens[1:])):
            c_ab = bigrams[(a[0], b[0])]
            if c_ab < min_count:
                continue
            score = pmi(c_ab, unigrams[a[0]], unigrams[b[0]], tokens_total, positions)
            if score > threshold:
                candidates.append((-score, i))
        used: set[int] = set()
        taken = []
        for _, i in sorted(candidates):
            if i not in used and i + 1 not in used:
                used.update((i, i + 1))
                taken.append(i)
        text = topics_texts[qid] or ""
        found[qid] = [surface(text, tokens[i][1], tokens[i + 1][2]) for i in sorted(taken)]
    return found
