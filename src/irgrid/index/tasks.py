"""The Dask tasks of an index build (:func:`irgrid.index.build.build_index` wires them):
analyse a shard, merge a postings bucket, the documents table and the terms table. Each reads
and writes files under the build's temporary directory and returns only small summaries.

A task may run twice: Dask runs a lost worker's tasks again elsewhere, while the lost worker,
closing gracefully (a job cancelled with ``scancel`` is sent SIGTERM), may still finish its own
run. So a shard's analysis writes its pieces under a name of its own run (``attempt``), and the
merges read only the runs named in the shard results Dask passed them; the merges write their
files whole (renamed into place) and leave their pieces until their last file is in place.
"""


import secrets
import shutil
import threading
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.analysis.stem import get_stemmer
from irgrid.errors import InputFormatError
from irgrid.index.format import (
    DOCS_DICTIONARY,
    DOCS_ENCODING,
    DOCS_ROW_GROUP,
    DOCS_SCHEMA,
    POSITIONS_ENCODING,
    POSITIONS_ROW_GROUP,
    POSITIONS_SCHEMA,
    POSTINGS_DICTIONARY,
    POSTINGS_ENCODING,
    POSTINGS_ROW_GROUP,
    POSTINGS_SCHEMA,
    SHARD_DOCS_SCHEMA,
    TERMS_ENCODING,
    TERMS_ROW_GROUP,
    TERMS_SCHEMA,
    docno_ranks,
    write_parquet,
)
from irgrid.io import atomic_path

# irgrid.index.kernels (numba) is imported inside the tasks only: the driver of a build, which
# imports this module for the tasks' names, then never loads numba (and its memory).

#: a shard task flushes its token buffers to disk after this many tokens (12 bytes each, held
#: about twice while split by bucket): with two tasks at a time, much of the analysis phase's
#: peak memory; smaller runs write more piece files (one per bucket a run) and cost CPU
RUN_TOKENS = 2_000_000
READ_BATCH_ROWS = 8192
BYTES_PER_WORD = 6
#: tokens a postings bucket is planned for (irgrid.index.build.automatic_num_buckets); a bucket
#: task sorts larger buckets in groups of consecutive terms of at most this many tokens
TOKENS_PER_BUCKET = 4_000_000


class ShardFormatError(InputFormatError):
    """An :class:`InputFormatError` raised inside a Dask task; picklable, so it reaches the driver intact."""

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.expected, self.found))




#: words whose analysis is vectorised: for both tokenizers an ASCII alphanumeric word
#: (at most the maximum token length) is exactly one token, itself.
SIMPLE_WORD = r"^[A-Za-z0-9]{1,255}$"


class _Vocabulary:
    """The words and terms one worker has seen, with ids that only grow.

    Whitespace is never part of a token, so a text's terms are the concatenation
    of its words' terms (positions offset by the tokens of the words before):
    each distinct word is analysed once per worker, whatever the number of
    shards it indexes.  Words are split and looked up in a numba hash table
    (:func:`irgrid.index.kernels.lookup_words`); the new ones are analysed
    vectorised when simple, through the Python analyzer otherwise.  Per word
    id: the number of tokens (stop words included: they take a position) and
    the kept terms with their offsets in the word.
    """

    MAX_WORDS = 8_000_000  # beyond this many words the next shard starts afresh: bounded memory
    INITIAL_SLOTS = 1 << 20
    INITIAL_TERM_SLOTS = 1 << 16
    MAX_LOAD = 0.5

    def __init__(self, analyzer: Analyzer, num_buckets: int):
        self.analyzer = analyzer
        self.num_buckets = num_buckets
        self.stop_words = pa.array(sorted(analyzer.stopword_set), pa.string())
        #: names this vocabulary's id space: the bucket tasks share a lookup table between its shards
        self.key = secrets.token_hex(8)
        self.num_words = 0
        self.table = np.zeros((self.INITIAL_SLOTS, 3), np.uint64)
        # the terms' own table (a term has no whitespace: a one-word text), ids = rows of self.terms
        self.term_table = np.zeros((self.INITIAL_TERM_SLOTS, 3), np.uint64)
        self.word_info = np.zeros((0, 5), np.int32)  # rows: see irgrid.index.kernels.FIRST_TERM...
        self.kept_terms = np.zeros(0, np.int32)     # all kept terms of the words, word after word
        self.kept_rel = np.zeros(0, np.int32)
        self.terms = pa.array([], pa.string())
        self.term_buckets = np.zeros(0, np.int32)

    def term_ids(self, terms: pa.Array) -> np.ndarray:
        """The id of each of ``terms`` (a row of ``self.terms``), appending the new ones in order.

        Looked up in a hash table of the worker's terms, as words are: ``pc.index_in`` against
        ``self.terms`` hashed the whole vocabulary at every call, a fifth of a shard's analysis.
        """
        if not len(terms):
            return np.zeros(0, np.int32)
        self.term_table, count, offsets, ids, new = _lookup(self.term_table, len(self.terms), terms)
        bad = np.flatnonzero(np.diff(offsets) != 1)
        if len(bad):  # tokens are pieces of whitespace-separated words: one non-empty word each
            raise RuntimeError(f"internal error: the analyzer {self.analyzer.to_dict()} made the term "
                               f"{terms[int(bad[0])].as_py()!r}, empty or holding whitespace")
        if len(new):
            nb = self.num_buckets
            crc32 = zlib.crc32
            buckets = [crc32(t.encode("utf-8")) % nb for t in new.to_pylist()]
            self.term_buckets = np.concatenate([self.term_buckets, np.asarray(buckets, dtype=np.int32)])
            self.terms = pa.concat_arrays([self.terms, new.cast(pa.string())])
        return ids

    def _analyse(self, new_words: pa.Array) -> None:
        """Append the analysis of ``new_words`` (the next word ids, in order)."""
        # deferred: numba loads only in the Dask tasks that run the kernels
        from .kernels import FIRST_REL, FIRST_TERM, MORE_COUNT, MORE_START, NUM_TOKENS

        analyzer = self.analyzer
        n = len(new_words)
        simple_mask = pc.match_substring_regex(new_words, SIMPLE_WORD).to_numpy(zero_copy_only=False)
        simple_rows = np.flatnonzero(simple_mask)
        other_rows = np.flatnonzero(~simple_mask)
        simple = new_words.take(pa.array(simple_rows))
        lowered = pc.utf8_lower(simple) if analyzer.lowercase else simple
        keep = ~pc.is_in(lowered, value_set=self.stop_words).to_numpy(zero_copy_only=False)
        kept = lowered.filter(pa.array(keep))
        if analyzer.stemmer != "none":
            stem = get_stemmer(analyzer.stemmer)
            kept = pa.array([stem(w) for w in kept.to_pylist()], pa.string())
        ntokens = np.ones(n, np.int32)
        nkept = np.zeros(n, np.int64)
        nkept[simple_rows] = keep
        other_terms: list[str] = []
        other_rel: list[int] = []
        for row, word in zip(other_rows.tolist(), new_words.take(pa.array(other_rows)).to_pylist()):
            terms, positions = analyzer.analyze_with_positions(word)
            ntokens[row] = len(analyzer.tokens(word))
            nkept[row] = len(terms)
            other_terms.extend(terms)
            other_rel.extend(positions)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(nkept, out=offsets[1:])
        kept_terms = np.empty(offsets[-1], np.int32)
        kept_rel = np.zeros(offsets[-1], np.int32)
        ids = self.term_ids(pa.concat_arrays([kept, pa.array(other_terms, pa.string())]))
        kept_terms[offsets[simple_rows[keep]]] = ids[: len(kept)]
        if len(other_rows):
            other_slots = np.repeat(offsets[other_rows], nkept[other_rows])
            other_slots += np.arange(len(other_slots)) - np.repeat(
                np.concatenate([[0], np.cumsum(nkept[other_rows])[:-1]]), nkept[other_rows])
            kept_terms[other_slots] = ids[len(kept):]
            kept_rel[other_slots] = other_rel
        info = np.zeros((n, 5), np.int32)
        has_terms = nkept > 0
        info[:, FIRST_TERM] = np.where(has_terms, kept_terms[np.minimum(offsets[:-1], max(len(kept_terms) - 1, 0))]
                                       if len(kept_terms) else -1, -1)
        info[:, FIRST_REL] = np.where(has_terms, kept_rel[np.minimum(offsets[:-1], max(len(kept_rel) - 1, 0))]
                                      if len(kept_rel) else 0, 0)
        info[:, NUM_TOKENS] = ntokens
        info[:, MORE_COUNT] = np.maximum(nkept - 1, 0)
        info[:, MORE_START] = len(self.kept_terms) + offsets[:-1] + 1
        self.word_info = np.concatenate([self.word_info, info])
        self.kept_terms = np.concatenate([self.kept_terms, kept_terms])
        self.kept_rel = np.concatenate([self.kept_rel, kept_rel])

    def word_ids(self, texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """``(word_doc_offsets, word_ids)`` of a run of texts, analysing the words new to the worker."""
        self.table, self.num_words, word_doc_offsets, word_ids, new = _lookup(self.table, self.num_words, texts,
                                                                              self._analyse)
        return word_doc_offsets, word_ids


def _lookup(table: np.ndarray, count: int, texts: pa.Array, on_new=None):
    """The whitespace-separated words of ``texts`` looked up in ``table`` (``count`` entries), new ones added.

    Returns ``(table, count, word_doc_offsets, word_ids, new)``: the table (grown when it had to), its
    new count, text ``d``'s words' ids at ``word_ids[word_doc_offsets[d]:word_doc_offsets[d+1]]``, and
    the new words (ids ``count`` on, in order) as a string array; ``on_new`` is called with each batch
    of new words as they are found (the table grows between batches).
    """
    # deferred: numba loads only in the Dask tasks that run the kernels
    from .kernels import count_words, gather_bytes, lookup_words, rehash

    # the offsets as int64, the text bytes where they are (no large_string copy of the text)
    buffers = texts.buffers()
    offset_type = np.int32 if pa.types.is_string(texts.type) else np.int64
    doc_offsets = np.frombuffer(buffers[1], offset_type)[texts.offset: texts.offset + len(texts) + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    max_doc_bytes = int(np.diff(doc_offsets).max()) if len(texts) else 0
    word_ids = np.empty(count_words(data, doc_offsets), np.int32)
    word_doc_offsets = np.zeros(len(texts) + 1, np.int64)
    new_words: list[pa.Array] = []
    first_doc = 0
    doc_words = max_doc_bytes // 2 + 1  # the most words one document can add
    while first_doc < len(texts):
        # The kernel checks the load between documents: the table must hold a whole
        # document's words beyond the load limit, or probing would find no free slot.
        while len(table) * _Vocabulary.MAX_LOAD < count + 2 * doc_words:
            table = rehash(table, 2 * len(table))
        max_load = int(len(table) * _Vocabulary.MAX_LOAD)
        room = max(max_load - count, 0) + doc_words
        new_starts = np.empty(room, np.int64)
        new_ends = np.empty(room, np.int64)
        first_doc, count, num_new = lookup_words(
            data, doc_offsets, first_doc, table, count, max_load,
            word_ids, word_doc_offsets, new_starts, new_ends,
        )
        if num_new:
            chars, char_offsets = gather_bytes(data, new_starts[:num_new], new_ends[:num_new])
            words = pa.StringArray.from_buffers(num_new, pa.py_buffer(char_offsets), pa.py_buffer(chars))
            new_words.append(words)
            if on_new is not None:
                on_new(words)
    new = pa.concat_arrays(new_words) if new_words else pa.array([], pa.string())
    return table, count, word_doc_offsets, word_ids[: word_doc_offsets[-1]], new


_VOCABULARIES = threading.local()  # one per worker thread: tasks of the threads scheduler run concurrently


def _worker_vocabulary(analyzer: Analyzer, num_buckets: int) -> _Vocabulary:
    vocabulary = getattr(_VOCABULARIES, "current", None)
    if (vocabulary is None or vocabulary.analyzer != analyzer or vocabulary.num_buckets != num_buckets
            or vocabulary.num_words > _Vocabulary.MAX_WORDS):
        vocabulary = _VOCABULARIES.current = _Vocabulary(analyzer, num_buckets)
    return vocabulary


def _drop_worker_vocabulary() -> None:
    """Free this worker thread's vocabulary: the merges start once every shard is analysed, and
    the two vocabularies of a threads build (its hash tables and word analyses) would otherwise
    stay through the merge phase and after the build, in the scheduler's pooled threads."""
    _VOCABULARIES.current = None


def iter_batches(path: str, batch_rows: int | None = None):
    """``(first_row, docno, text)`` record batches of a shard; a read failure becomes a :class:`ShardFormatError`."""
    row = 0
    try:
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=batch_rows or READ_BATCH_ROWS, columns=["docno", "text"]):
            yield row, batch.column(0), batch.column(1)
            row += batch.num_rows
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, InputFormatError):
            raise
        raise ShardFormatError(path, row + 1, "a readable Parquet document shard",
                               f"{type(exc).__name__}: {exc}") from exc


def _check_docnos(path: str, first_row: int, docnos: pa.Array) -> None:
    bad = pc.or_kleene(pc.is_null(docnos), pc.equal(pc.binary_length(docnos), 0))
    if pc.any(bad).as_py():
        i = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
        raise ShardFormatError(path, first_row + i + 1, "a non-empty docno (rows counted from 1)",
                               repr(docnos[i].as_py()))


def _save_arrays(path: Path, **arrays: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _load_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def analyze_shard(
    shard: int,
    path: str,
    offset: int,
    tmp: str,
    analyzer: Analyzer,
    num_buckets: int,
    run_tokens: int | None = None,
) -> dict[str, int]:
    """Analyse one document shard and write its token / vocabulary / docs pieces.

    Documents are taken in runs of about ``run_tokens`` words; each run's tokens
    are written per postings bucket as ``(term, docid, position)`` arrays in
    document order, with the worker's term ids, which the shard's vocabulary
    pieces map to strings.
    """
    # deferred: numba loads only in the Dask tasks that run the kernels
    from .kernels import counting_sort, expand_tokens, tokens_by_key

    run_tokens = RUN_TOKENS if run_tokens is None else run_tokens
    pieces = Path(tmp) / "pieces"
    attempt = secrets.token_hex(4)
    vocabulary = _worker_vocabulary(analyzer, num_buckets)
    seen = {"last_doc": np.full(max(len(vocabulary.terms), 1024), -1, dtype=np.int32)}
    doc_tables: list[pa.Table] = []
    totals = {"docs": 0, "tokens": 0, "postings": 0, "runs": 0}

    def index_run(docnos: list[pa.Array], texts: list[pa.Array]) -> None:
        docid = offset + totals["docs"]
        # Each buffer of the run goes as soon as the next step has what it needs: with two analysing
        # threads, what one holds through its run's bucket split and piece writes is what the
        # build's peak memory is made of (the batches' text, the word ids, the unsplit tokens).
        run_texts = pa.concat_arrays(texts)
        texts.clear()
        word_doc_offsets, word_ids = vocabulary.word_ids(run_texts)
        del run_texts
        if len(vocabulary.terms) > len(seen["last_doc"]):
            grown = np.full(2 * len(vocabulary.terms), -1, dtype=np.int32)
            grown[: len(seen["last_doc"])] = seen["last_doc"]
            seen["last_doc"] = grown
        terms, docids, positions, lengths, unique_terms = expand_tokens(
            word_doc_offsets, word_ids, vocabulary.word_info, vocabulary.kept_terms, vocabulary.kept_rel,
            docid, seen["last_doc"],
        )
        del word_doc_offsets, word_ids
        num_tokens = len(terms)
        by_bucket = tokens_by_key(terms, docids, positions, vocabulary.term_buckets, num_buckets)
        del terms, docids, positions
        bucket_terms, bucket_docids, bucket_positions, starts = by_bucket
        for b in range(num_buckets):
            lo, hi = starts[b], starts[b + 1]
            if lo < hi:
                _save_arrays(pieces / f"bucket-{b:04d}" / f"shard-{shard:06d}-{attempt}-run-{totals['runs']:04d}.npz",
                             terms=bucket_terms[lo:hi], docids=bucket_docids[lo:hi], positions=bucket_positions[lo:hi])
        del by_bucket, bucket_terms, bucket_docids, bucket_positions
        n = len(lengths)
        run_docids = np.arange(docid, docid + n, dtype=np.int32)
        doc_tables.append(pa.Table.from_arrays(
            [pa.array(run_docids), pa.concat_arrays(docnos).cast(pa.string()), pa.array(lengths),
             pa.array(unique_terms)],
            schema=SHARD_DOCS_SCHEMA,
        ))
        totals["docs"] += n
        totals["tokens"] += num_tokens
        totals["postings"] += int(unique_terms.sum())
        totals["runs"] += 1

    # runs of about run_tokens words, estimated at one per BYTES_PER_WORD bytes of text
    pending_docnos: list[pa.Array] = []
    pending_texts: list[pa.Array] = []
    pending = 0
    for first_row, docnos, texts in iter_batches(path):
        _check_docnos(path, first_row, docnos)
        texts = pc.fill_null(texts, "")
        pending_docnos.append(docnos)
        pending_texts.append(texts)
        pending += pc.sum(pc.binary_length(texts)).as_py() or 0
        if pending >= run_tokens * BYTES_PER_WORD:
            index_run(pending_docnos, pending_texts)
            pending_docnos, pending_texts, pending = [], [], 0
    if pending_docnos:
        index_run(pending_docnos, pending_texts)

    # The shard's vocabulary (the terms it uses, with this worker's ids), per bucket.
    used = np.flatnonzero(seen["last_doc"][: len(vocabulary.terms)] >= 0).astype(np.int32)
    used_terms = vocabulary.terms.take(pa.array(used))
    order, starts = counting_sort(vocabulary.term_buckets[used], num_buckets)
    for b in range(num_buckets):
        rows = order[starts[b]:starts[b + 1]]
        if len(rows):
            pq.write_table(
                pa.table({"local_id": pa.array(used[rows]), "term": used_terms.take(pa.array(rows))}),
                pieces / f"bucket-{b:04d}" / f"vocabulary-{shard:06d}-{attempt}.parquet", compression="none",
            )
    docs = pa.concat_tables(doc_tables) if doc_tables else SHARD_DOCS_SCHEMA.empty_table()
    pq.write_table(docs, pieces / "docs" / f"shard-{shard:06d}-{attempt}.parquet", compression="none")
    return {"shard": shard, "attempt": attempt, "docs": totals["docs"], "tokens": totals["tokens"],
            "postings": totals["postings"], "vocabulary": vocabulary.key}


def _counted_attempts(shard_results: list) -> list[tuple[int, str]]:
    """``(shard, attempt)`` of the analyses whose results Dask kept, in shard (= docid) order."""
    return sorted((r["shard"], r["attempt"]) for r in shard_results)


def _read_pieces(directory: Path, schema: pa.Schema) -> pa.Table:
    files = sorted(directory.glob("*.parquet"))
    if not files:
        return schema.empty_table()
    return pa.concat_tables([pq.read_table(f, schema=schema) for f in files])


def merge_bucket(bucket: int, tmp: str, shard_results: list) -> dict[str, int]:
    """Sort the token pieces of one bucket into ``postings/`` and ``positions/bucket-XXXX.parquet`` and its
    term statistics.

    The statistics (``pieces/terms/bucket-XXXX.parquet``) are written last: once there, the bucket
    is done, and a second run of this task (its first worker lost after finishing) returns its summary.
    """
    done = Path(tmp) / "pieces" / "terms" / f"bucket-{bucket:04d}.parquet"
    if done.exists():
        return _bucket_summary(bucket, done)
    try:
        return _merge_bucket(bucket, Path(tmp), shard_results, done)
    except FileNotFoundError:
        if done.exists():  # a run of this task on a lost worker finished meanwhile and removed the pieces
            return _bucket_summary(bucket, done)
        raise


def _bucket_summary(bucket: int, terms_piece: Path) -> dict[str, int]:
    df = pq.read_table(terms_piece, columns=["df"]).column("df").to_numpy()
    return {"bucket": bucket, "postings": int(df.sum()), "terms": len(df)}


def _merge_bucket(bucket: int, tmp_path: Path, shard_results: list, done: Path) -> dict[str, int]:
    # deferred: numba loads only in the Dask tasks that run the kernels
    from .kernels import tokens_by_key

    _drop_worker_vocabulary()
    piece_dir = tmp_path / "pieces" / f"bucket-{bucket:04d}"
    attempts = _counted_attempts(shard_results)
    # the bucket's terms, sorted, and each shard's local id -> bucket term index
    vocab_files = {shard: piece_dir / f"vocabulary-{shard:06d}-{attempt}.parquet" for shard, attempt in attempts}
    shard_vocabularies = {shard: pq.read_table(f) for shard, f in vocab_files.items() if f.exists()}
    if shard_vocabularies:
        all_terms = pa.concat_arrays([t.column("term").combine_chunks() for t in shard_vocabularies.values()])
        distinct = pc.unique(all_terms)
        bucket_terms = distinct.take(pc.sort_indices(distinct))
    else:
        bucket_terms = pa.array([], pa.string())
    # Each shard's local term ids -> the bucket's term index. The shards analysed by one worker
    # vocabulary share its ids (a local id is the same term in all of them), so they share one
    # table: a table a shard held 4 bytes a vocabulary term for each of the collection's shards,
    # which grows with shards x vocabulary at 10M documents.
    vocabulary_of = {r["shard"]: r["vocabulary"] for r in shard_results if "vocabulary" in r}
    tables: dict[str, np.ndarray] = {}
    lookup = {}
    for shard, table in shard_vocabularies.items():
        local = table.column("local_id").to_numpy()
        key = vocabulary_of.get(shard, f"shard-{shard}")
        lut = tables.get(key, np.zeros(0, np.int32))
        size = int(local.max()) + 1 if len(local) else 0
        if len(lut) < size:  # the shards analysed before keep the smaller table, which holds their ids
            grown = np.full(max(size, 2 * len(lut)), -1, dtype=np.int32)
            grown[: len(lut)] = lut
            lut = tables[key] = grown
        lut[local] = pc.index_in(table.column("term"), value_set=bucket_terms).to_numpy().astype(np.int32)
        lookup[shard] = lut
    num_terms = len(bucket_terms)
    # (shard, run) order = docid order
    piece_files = [f for shard, attempt in attempts for f in sorted(piece_dir.glob(f"shard-{shard:06d}-{attempt}-run-*.npz"))]

    def load(f: Path):
        arrays = _load_arrays(f)
        return lookup[int(f.name.split("-")[1])][arrays["terms"]], arrays["docids"], arrays["positions"]

    # Tokens per term first, then groups of consecutive terms of at most TOKENS_PER_BUCKET
    # tokens, each sorted and written in turn: a bucket's memory is bounded even when one
    # term (the most frequent of a Zipfian vocabulary: several % of all tokens) dwarfs it.
    # The pieces read for the counts are kept while they stay within one group's tokens (a
    # bucket of one group, the usual case, is then read once).
    cf = np.zeros(num_terms, dtype=np.int64)
    kept: list | None = []
    kept_tokens = 0
    for f in piece_files:
        piece = load(f)
        cf += np.bincount(piece[0], minlength=num_terms)
        kept_tokens += len(piece[0])
        if kept is not None and kept_tokens <= TOKENS_PER_BUCKET:
            kept.append(piece)
        else:
            kept = None
    piece = None  # the last piece read is kept's, or to be freed

    def pieces():
        return iter(kept) if kept is not None else (load(f) for f in piece_files)

    df = np.zeros(num_terms, dtype=np.int32)
    with (atomic_path(tmp_path / "postings" / f"bucket-{bucket:04d}.parquet") as postings_path,
          atomic_path(tmp_path / "positions" / f"bucket-{bucket:04d}.parquet") as positions_path,
          _PostingsWriter(postings_path, positions_path) as writer):
        for lo, hi in _term_groups(cf, TOKENS_PER_BUCKET):
            if hi - lo == 1:
                # one term: its tokens already come in (docid, position) order, piece by piece
                for terms, docids, positions in pieces():
                    rows = np.flatnonzero(terms == lo)
                    if len(rows):
                        df[lo] += writer.add_postings(terms[rows], docids[rows], positions[rows])
                continue
            if lo == 0 and hi == num_terms:  # every term of the bucket: no selection
                group = list(pieces())
                kept = None  # the only group: the pieces go as soon as they are concatenated
            else:
                group = [(t[m], d[m], p[m]) for t, d, p in pieces() for m in [(t >= lo) & (t < hi)]]
            # column after column, each column's pieces freed once concatenated: the bucket's
            # tokens are held about once while concatenating, not twice
            columns = [list(column) for column in zip(*group)] or [[], [], []]
            del group
            terms, docids, positions = (_concatenate_freeing(columns[i]) for i in range(3))
            del columns
            # stable: (term, docid, position) order
            key_of_term = np.arange(-lo, num_terms - lo, dtype=np.int32)
            terms, docids, positions, _ = tokens_by_key(terms, docids, positions, key_of_term, hi - lo)
            writer.add_postings(terms, docids, positions, df)
    kept = None
    start = np.zeros(num_terms, dtype=np.int64)
    np.cumsum(df[:-1], out=start[1:])
    stats = pa.Table.from_arrays(
        [bucket_terms, pa.array(df), pa.array(cf), pa.array(np.full(num_terms, bucket, np.int32)), pa.array(start)],
        schema=TERMS_SCHEMA,
    )
    with atomic_path(done) as done_path:
        pq.write_table(stats, done_path, compression="none")
    shutil.rmtree(piece_dir, ignore_errors=True)
    return {"bucket": bucket, "postings": int(df.sum()), "terms": num_terms}


def _concatenate_freeing(parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)`` (int32 when empty), emptying ``parts``: the caller's references
    to the pieces are the list's, so each piece is freed here rather than when the caller lets go."""
    out = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    parts.clear()
    return out


def _term_groups(token_counts: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive term ranges ``[lo, hi)`` of at most ``limit`` tokens (a larger term alone)."""
    groups = []
    lo, total = 0, 0
    for t, count in enumerate(token_counts.tolist()):
        if t > lo and total + count > limit:
            groups.append((lo, t))
            lo, total = t, 0
        total += count
    if lo < len(token_counts):
        groups.append((lo, len(token_counts)))
    # a term over the limit gets a group of its own
    split = []
    for lo, hi in groups:
        if hi - lo > 1 and token_counts[lo:hi].max() > limit:
            split.extend((t, t + 1) for t in range(lo, hi))
        else:
            split.append((lo, hi))
    return split


class _RowGroupWriter:
    """Rows appended in order, written in row groups of exactly ``row_group`` rows.

    Row groups do not depend on how the rows arrived, so the file's bytes do not
    either; zstd-compressed as :func:`write_parquet` unless told otherwise.
    """

    def __init__(self, path: Path, schema: pa.Schema, row_group: int, use_dictionary: bool | list[str] = False,
                 column_encoding: dict[str, str] | None = None, compression: str = "zstd"):
        options = {"compression_level": 3} if compression == "zstd" else {}
        self.writer = pq.ParquetWriter(path, schema, compression=compression, use_dictionary=use_dictionary,
                                       column_encoding=column_encoding, write_statistics=True, store_schema=True,
                                       **options)
        self.row_group = row_group
        self.pending: list[pa.Table] = []
        self.pending_rows = 0

    def __enter__(self):
        return self

    def add(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_rows += table.num_rows
        if self.pending_rows >= max(self.row_group, 1 << 16):
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if not self.pending_rows:
            return
        table = pa.concat_tables(self.pending).combine_chunks()
        cut = self.pending_rows if final else (self.pending_rows // self.row_group) * self.row_group
        if cut:
            self.writer.write_table(table.slice(0, cut), row_group_size=self.row_group)
        rest = table.slice(cut)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._flush(final=True)
        self.writer.close()


class _PostingsWriter:
    """A bucket's ``postings/`` (docid, tf) and ``positions/`` (one row per token) files, written together."""

    def __init__(self, postings_path: Path, positions_path: Path):
        self.postings = _RowGroupWriter(postings_path, POSTINGS_SCHEMA, POSTINGS_ROW_GROUP,
                                        use_dictionary=POSTINGS_DICTIONARY, column_encoding=POSTINGS_ENCODING,
                                        compression="none")
        self.positions = _RowGroupWriter(positions_path, POSITIONS_SCHEMA, POSITIONS_ROW_GROUP,
                                         column_encoding=POSITIONS_ENCODING, compression="none")

    def __enter__(self):
        return self

    def add_postings(self, terms, docids, positions, df=None) -> int:
        """Append the postings of tokens sorted by (term, docid, position); count them into ``df``."""
        # deferred: numba loads only in the Dask tasks that run the kernels
        from .kernels import group_postings

        starts = group_postings(terms, docids)
        first = starts[:-1]
        if df is not None:
            df += np.bincount(terms[first], minlength=len(df)).astype(df.dtype)
        if not len(first):
            return 0
        # No term column: terms.parquet gives each term's (bucket, start, df) rows, and
        # writing a repeated string column costs more than the rest of the bucket together.
        self.postings.add(pa.Table.from_arrays(
            [pa.array(docids[first], pa.int32()), pa.array(np.diff(starts).astype(np.int32))],
            schema=POSTINGS_SCHEMA,
        ))
        # the tokens are in postings order already: their positions are the positions file's rows
        self.positions.add(pa.Table.from_arrays([pa.array(positions, pa.int32())], schema=POSITIONS_SCHEMA))
        return len(first)

    def __exit__(self, exc_type, exc, tb):
        try:
            self.postings.__exit__(exc_type, exc, tb)
        finally:
            self.positions.__exit__(exc_type, exc, tb)


def _string_hashes(strings: pa.Array) -> np.ndarray:
    # deferred: numba loads only in the Dask tasks that run the kernels
    from .kernels import hash_strings

    strings = strings.cast(pa.large_string())
    buffers = strings.buffers()
    offsets = np.frombuffer(buffers[1], np.int64)[strings.offset: strings.offset + len(strings) + 1]
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return hash_strings(data, offsets)


def merge_docs(tmp: str, docs_dir: str, shard_results: list) -> dict[str, int]:
    """Write ``docs.parquet`` shard after shard; returns the collection totals.

    Streams a shard's rows at a time, plus every docno (their sort gives each document's
    ``docno_rank``) and 8 bytes a document (a hash of its docno) to find duplicate docnos,
    which are then confirmed on the strings.
    """
    tmp_path = Path(tmp)
    files = [tmp_path / "pieces" / "docs" / f"shard-{shard:06d}-{attempt}.parquet"  # shard order = docid order
             for shard, attempt in _counted_attempts(shard_results)]
    docnos = pa.chunked_array([pq.read_table(f, columns=["docno"], schema=SHARD_DOCS_SCHEMA).column("docno")
                               .combine_chunks() for f in files], pa.string())
    docno_rank = docno_ranks(docnos)
    del docnos
    n = 0
    total = 0
    hashes = []
    with (atomic_path(tmp_path / "docs.parquet") as docs_path,
          _RowGroupWriter(docs_path, DOCS_SCHEMA, DOCS_ROW_GROUP, use_dictionary=DOCS_DICTIONARY,
                          column_encoding=DOCS_ENCODING) as writer):
        for f in files:
            table = pq.read_table(f, schema=SHARD_DOCS_SCHEMA)
            docids = table.column("docid").to_numpy()
            if len(docids) and (docids[0] != n or docids[-1] != n + len(docids) - 1):  # pragma: no cover
                raise RuntimeError("internal error: docids are not 0..N-1")
            total += pc.sum(table.column("length")).as_py() or 0
            hashes.append(_string_hashes(table.column("docno").combine_chunks()))
            writer.add(table.append_column(DOCS_SCHEMA.field("docno_rank"), pa.array(docno_rank[n:n + len(docids)])))
            n += len(docids)
    hashes = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, np.uint64)
    suspects = np.unique(hashes[1:][hashes[1:] == hashes[:-1]])
    if len(suspects):
        seen: dict[str, int] = {}
        for f in files:
            docnos = pq.read_table(f, columns=["docno"]).column("docno").combine_chunks()
            for docno in docnos.filter(pa.array(np.isin(_string_hashes(docnos), suspects))).to_pylist():
                seen[docno] = seen.get(docno, 0) + 1
        dups = [docno for docno, count in seen.items() if count > 1][:5]
        if dups:
            raise ShardFormatError(docs_dir, None, "unique docnos", "duplicates " + ", ".join(map(repr, dups)))
    return {"num_docs": n, "total_length": int(total)}


def merge_terms(tmp: str, bucket_results: list) -> int:
    """Write ``terms.parquet`` from the buckets' term statistics: bucket after bucket, each sorted.

    A term's row is its id: a bucket's terms follow those of the buckets before it.
    """
    tmp_path = Path(tmp)
    table = _read_pieces(tmp_path / "pieces" / "terms", TERMS_SCHEMA)  # files in bucket order
    # not sorted by term as a whole (bucket after bucket): no sorting_columns claim
    with atomic_path(tmp_path / "terms.parquet") as terms_path:
        write_parquet(table, terms_path, TERMS_ROW_GROUP, dictionary_columns=False, column_encoding=TERMS_ENCODING)
    return table.num_rows
