"""A deterministic synthetic collection for the scale benchmarks.

Documents are bags of pseudo-words drawn from a Zipfian distribution over a
finite vocabulary; lengths are log-normal.  Everything follows from the
:class:`SyntheticSpec` (its ``seed`` included): the same spec gives the same
bytes on any machine, so anyone can rerun a benchmark on the same data.

* Word of frequency rank ``r`` (0-based): the base-``len(SYLLABLES)`` digits of
  ``r + offset`` spelled as consonant-vowel syllables, with fewer syllables for
  frequent words (as in natural language, frequent words are short).  Words are
  distinct and purely alphabetic, so every analyzer keeps them one token.
* Token ranks: inverse-CDF sampling of p(r) ∝ 1 / (r + 1)^s, r < vocabulary_size.
* Document lengths: log-normal with the given mean and log-space sigma, at least 1.
* Shard ``i`` is generated from its own random stream (seed, i), so shards can be
  produced in any order or in parallel with the same result.
* Judgements (``qrels.parquet``): per query, ``JUDGED_PER_QUERY`` documents
  (uniform) drawn uniformly from the collection, graded 0-2 uniformly.  They
  are for timing an evaluation at scale (a run of 1,000 documents against a
  few dozen judgements per query), not for effectiveness: they ignore the
  documents' words.
* Queries: ``min..max`` distinct terms (uniform), ranks log-uniform in
  ``query_rank_band`` -- mid-frequency terms, as real queries have after
  stopping: the rank-1 word of a Zipfian vocabulary occurs in nearly every
  document and is no query term.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import ConfigError
from ..io import atomic_path, write_json
from .writers import DOCS_SCHEMA, QRELS_SCHEMA, TOPICS_SCHEMA, shard_name

CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]  # 70 syllables
#: how many documents a query's judgements hold, min and max (not part of the spec: a collection
#: written before it had qrels keeps its spec.json, and gets them from write_synthetic_qrels)
JUDGED_PER_QUERY = (5, 60)


@dataclass(frozen=True)
class SyntheticSpec:
    """What a synthetic collection looks like; defaults are the issue's 1M-document benchmark."""

    num_docs: int = 1_000_000
    vocabulary_size: int = 500_000
    mean_length: float = 120.0
    length_sigma: float = 0.6
    zipf_exponent: float = 1.0
    num_queries: int = 1000
    query_terms: tuple[int, int] = (2, 6)
    query_rank_band: tuple[int, int] = (300, 300_000)
    docs_per_shard: int = 50_000
    seed: int = 20261122
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in ("num_docs", "vocabulary_size", "num_queries", "docs_per_shard"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"synthetic collection: {name} must be a positive integer, got {value!r}")
        if not self.mean_length >= 1:
            raise ConfigError(f"synthetic collection: mean_length must be >= 1, got {self.mean_length!r}")
        if not self.length_sigma >= 0:
            raise ConfigError(f"synthetic collection: length_sigma must be >= 0, got {self.length_sigma!r}")
        if not self.zipf_exponent > 0:
            raise ConfigError(f"synthetic collection: zipf_exponent must be > 0, got {self.zipf_exponent!r}")
        low, high = self.query_terms
        if not 1 <= low <= high:
            raise ConfigError(f"synthetic collection: query_terms must be 1 <= min <= max, got {self.query_terms!r}")
        band_low, band_high = self.query_rank_band
        if not 1 <= band_low < band_high:
            raise ConfigError(
                f"synthetic collection: query_rank_band must be 1 <= low < high, got {self.query_rank_band!r}"
            )
        if high > min(band_high, self.vocabulary_size) - band_low:
            raise ConfigError("synthetic collection: query_rank_band holds fewer words than a query needs")

    @property
    def num_shards(self) -> int:
        return -(-self.num_docs // self.docs_per_shard)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        d["query_terms"] = list(self.query_terms)
        d["query_rank_band"] = list(self.query_rank_band)
        return d


def word_strings(ranks: np.ndarray) -> list[str]:
    """The pseudo-word of each frequency rank (0-based)."""
    base = len(SYLLABLES)
    words = []
    for rank in np.asarray(ranks, dtype=np.int64).tolist():
        # 1 syllable for the first `base` ranks, 2 for the next base**2, ...: a bijection
        # between ranks and non-empty syllable strings, frequent words shortest.
        n, width = rank, 1
        while n >= base**width:
            n -= base**width
            width += 1
        syllables = []
        for _ in range(width):
            n, digit = divmod(n, base)
            syllables.append(SYLLABLES[digit])
        words.append("".join(reversed(syllables)))
    return words


def vocabulary(spec: SyntheticSpec) -> pa.StringArray:
    return pa.array(word_strings(np.arange(spec.vocabulary_size)), type=pa.string())


def _rank_cdf(spec: SyntheticSpec) -> np.ndarray:
    weights = 1.0 / np.power(np.arange(1, spec.vocabulary_size + 1, dtype=np.float64), spec.zipf_exponent)
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _document_lengths(rng: np.random.Generator, spec: SyntheticSpec, n: int) -> np.ndarray:
    sigma = spec.length_sigma
    mu = np.log(spec.mean_length) - sigma * sigma / 2  # so that E[length] = mean_length
    lengths = np.rint(rng.lognormal(mu, sigma, size=n)).astype(np.int64)
    return np.maximum(lengths, 1)


def shard_table(spec: SyntheticSpec, shard: int, words: pa.StringArray | None = None,
                cdf: np.ndarray | None = None) -> pa.Table:
    """Documents of shard ``shard`` as a (docno, text) table."""
    if not 0 <= shard < spec.num_shards:
        raise ConfigError(f"synthetic collection: shard {shard} out of range 0..{spec.num_shards - 1}")
    words = vocabulary(spec) if words is None else words
    cdf = _rank_cdf(spec) if cdf is None else cdf
    rng = np.random.default_rng([spec.seed, shard])
    start = shard * spec.docs_per_shard
    stop = min(spec.num_docs, start + spec.docs_per_shard)
    lengths = _document_lengths(rng, spec, stop - start)
    ranks = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
    ranks = np.minimum(ranks, spec.vocabulary_size - 1)  # u == 1.0 after rounding
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = pa.LargeListArray.from_arrays(pa.array(offsets), words.take(pa.array(ranks)))
    text = pc.cast(pc.binary_join(tokens, " "), pa.string())
    docnos = pa.array(docno_strings(spec, np.arange(start, stop)), type=pa.string())
    return pa.Table.from_arrays([docnos, text], schema=DOCS_SCHEMA)


def docno_strings(spec: SyntheticSpec, docids: np.ndarray) -> list[str]:
    """The docnos of ``docids``: ``SYN`` and the docid, zero-padded to the width of the largest."""
    width = len(str(max(spec.num_docs - 1, 0)))
    return [f"SYN{d:0{width}d}" for d in docids.tolist()]


def qrels_table(spec: SyntheticSpec) -> pa.Table:
    """Judgements (qid, docno, relevance) for timing evaluation: random documents, random grades 0-2.

    Query ``q``'s documents are distinct and in docid order; its own random stream is
    (seed, -2, q), so the judgements of a query do not depend on the number of queries.
    """
    qids, docids, grades = [], [], []
    low, high = JUDGED_PER_QUERY
    for q in range(spec.num_queries):
        rng = np.random.default_rng([spec.seed, -2 % (2**32), q])
        k = min(int(rng.integers(low, high + 1)), spec.num_docs)
        chosen = np.sort(rng.choice(spec.num_docs, size=k, replace=False))
        qids.extend([str(q + 1)] * k)
        docids.append(chosen)
        grades.append(rng.integers(0, 3, size=k))
    docnos = docno_strings(spec, np.concatenate(docids)) if docids else []
    relevance = np.concatenate(grades).astype(np.int32) if grades else np.zeros(0, np.int32)
    return pa.Table.from_arrays([pa.array(qids, pa.string()), pa.array(docnos, pa.string()), pa.array(relevance)],
                                schema=QRELS_SCHEMA)


def queries_table(spec: SyntheticSpec, words: pa.StringArray | None = None) -> pa.Table:
    """The query set as a (qid, text) table."""
    words = vocabulary(spec) if words is None else words
    rng = np.random.default_rng([spec.seed, -1 % (2**32)])
    low, high = spec.query_rank_band
    high = min(high, spec.vocabulary_size)
    qids, texts = [], []
    for q in range(spec.num_queries):
        k = int(rng.integers(spec.query_terms[0], spec.query_terms[1] + 1))
        chosen: list[int] = []
        while len(chosen) < k:
            rank = int(np.exp(rng.uniform(np.log(low), np.log(high))))
            if rank not in chosen and rank < high:
                chosen.append(rank)
        qids.append(str(q + 1))
        texts.append(" ".join(words.take(pa.array(chosen)).to_pylist()))
    return pa.Table.from_arrays([pa.array(qids, type=pa.string()), pa.array(texts, type=pa.string())],
                                schema=TOPICS_SCHEMA)


def write_synthetic_collection(spec: SyntheticSpec, out_dir: str | os.PathLike, workers: int = 1) -> Path:
    """Write ``out_dir/docs/part-XXXX.parquet``, ``out_dir/topics.parquet``, ``out_dir/qrels.parquet``, ``out_dir/spec.json``.

    Shards are generated and written one at a time per process (memory is one shard a process,
    whatever ``num_docs``), each atomically, by ``workers`` processes (a shard's bytes depend only
    on the spec and its number, so any ``workers`` writes the same files); ``spec.json`` is written
    last, so its presence means complete.  A directory with the same complete spec is left as it is.
    """
    if not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"synthetic collection: workers must be a positive integer, got {workers!r}")
    out_dir = Path(out_dir)
    spec_path = out_dir / "spec.json"
    if spec_path.is_file() and json.loads(spec_path.read_text()) == spec.to_dict():
        return out_dir
    if spec_path.exists():
        spec_path.unlink()
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    for stale in docs_dir.glob("part-*.parquet"):
        stale.unlink()
    words = vocabulary(spec)
    if workers == 1:
        cdf = _rank_cdf(spec)
        for shard in range(spec.num_shards):
            _write_shard(spec, shard, docs_dir, words, cdf)
    else:
        with ProcessPoolExecutor(max_workers=min(workers, spec.num_shards)) as pool:
            # a worker returns nothing (it writes its shard): the pool holds no collection
            for _ in pool.map(_write_shard, [spec] * spec.num_shards, range(spec.num_shards),
                              [docs_dir] * spec.num_shards):
                pass
    with atomic_path(out_dir / "topics.parquet") as tmp:
        pq.write_table(queries_table(spec, words), tmp)
    write_synthetic_qrels(spec, out_dir / "qrels.parquet")
    write_json(spec.to_dict(), spec_path)
    return out_dir


#: a generating process's vocabulary and rank CDF, made once per spec (a pool worker writes many shards)
_PROCESS_TABLES: dict = {}


def _write_shard(spec: SyntheticSpec, shard: int, docs_dir: Path, words: pa.StringArray | None = None,
                 cdf: np.ndarray | None = None) -> None:
    if words is None or cdf is None:
        if _PROCESS_TABLES.get("spec") != spec:
            _PROCESS_TABLES.update(spec=spec, words=vocabulary(spec), cdf=_rank_cdf(spec))
        words, cdf = _PROCESS_TABLES["words"], _PROCESS_TABLES["cdf"]
    with atomic_path(docs_dir / shard_name(shard)) as tmp:
        pq.write_table(shard_table(spec, shard, words, cdf), tmp, compression="zstd", row_group_size=8192)


def write_synthetic_qrels(spec: SyntheticSpec, path: str | os.PathLike) -> Path:
    """Write :func:`qrels_table` to ``path`` atomically (also for a collection written before it had qrels)."""
    with atomic_path(path) as tmp:
        pq.write_table(qrels_table(spec), tmp)
    return Path(path)
