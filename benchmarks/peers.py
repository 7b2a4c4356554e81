"""Peer systems for benchmarks/scale.py: bm25s, tantivy and PISA behind one small interface.

Each peer is a class with

    build(docs_dir, out_dir) -> dict          index the (docno, text) Parquet shards of docs_dir
    open(index_dir, topics, k1, b, depth)     load the index and analyse the whole query set
                                              (the one-off cost, timed as "open/prepare")
    query(i) -> (docids, scores)              top-``depth`` of query i (the per-query cost)
    batch() -> None                           the whole query set through the peer's batch API,
                                              if it has one (else the attribute is None)
    top(result, n) -> (docnos, scores)        the first n hits of a query() result with a positive
                                              score, as external ids (untimed; for the overlap check)
    settings: str                             what was run, for the printed report

Every peer sees the raw text of the synthetic collection: lower-case ASCII pseudo-words of
two or more letters separated by single spaces, which bm25s's regex tokenizer (no stop
words, no stemmer), tantivy's "default" tokenizer, PISA's plain-text parser (stemmer "none",
stop words "none") and irgrid's lucene tokenizer all split into the same tokens.

A peer may also have ``grid(index_dir, topics, points, depth) -> dict``: retrieval of the whole
query set for each (k1, b) point from the built index, with what each point costs it
(scale.py's grid section times it beside irgrid's ``retrieve_grid``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq


def iter_shards(docs_dir: str | os.PathLike) -> Iterator[tuple[list[str], list[str]]]:
    """(docnos, texts) of each part-XXXX.parquet shard, in collection order."""
    for path in sorted(Path(docs_dir).glob("part-*.parquet")):
        table = pq.read_table(path, columns=["docno", "text"])
        yield table.column("docno").to_pylist(), table.column("text").to_pylist()


# ------------------------------------------------------------------------------------ bm25s


class BM25S:
    """bm25s: scores precomputed at index time into a sparse matrix; numba retrieval, 1 thread.

    method="lucene" (idf log(1 + (N - df + 0.5) / (df + 0.5)), tf / (tf + k1 (1 - b + b |d|/avgdl)),
    the same formula as irgrid's ``bm25``), float32 scores. bm25s keeps no positions and no
    external ids: the docnos are written beside its index (docnos.txt) so that it has what the
    other systems store. Its index build needs the whole corpus in memory (a list of texts,
    then token-id lists), as bm25s requires.
    """

    name = "bm25s"

    def __init__(self, k1: float = 1.2, b: float = 0.75, method: str = "lucene", backend: str = "numba"):
        import bm25s

        self.bm25s = bm25s
        self.k1, self.b, self.method = k1, b, method
        self.backend = backend if backend != "numba" or _numba_available() else "numpy"
        self.settings = (f"bm25s {bm25s.__version__}: method={method!r}, k1={k1}, b={b}, backend={self.backend!r}, "
                         f"tokenize(stopwords=None, stemmer=None), retrieve(k, n_threads=1), float32 scores, no positions")

    def build(self, docs_dir, out_dir) -> dict:
        bm25s = self.bm25s
        docnos, texts = [], []
        for shard_docnos, shard_texts in iter_shards(docs_dir):
            docnos.extend(shard_docnos)
            texts.extend(shard_texts)
        tokens = bm25s.tokenize(texts, stopwords=None, show_progress=False)
        del texts
        retriever = bm25s.BM25(k1=self.k1, b=self.b, method=self.method, backend=self.backend)
        retriever.index(tokens, show_progress=False)
        del tokens
        out_dir = Path(out_dir)
        retriever.save(out_dir, show_progress=False)
        (out_dir / "docnos.txt").write_text("\n".join(docnos) + "\n", encoding="utf-8")
        return {"num_docs": len(docnos), "num_terms": len(retriever.vocab_dict)}

    def open(self, index_dir, topics, k1: float, b: float, depth: int) -> None:
        if (k1, b) != (self.k1, self.b):
            raise ValueError("bm25s fixes k1, b at index time")
        bm25s = self.bm25s
        self.retriever = bm25s.BM25.load(index_dir, mmap=False, show_progress=False)
        self.docno_list = Path(index_dir, "docnos.txt").read_text(encoding="utf-8").split("\n")[:-1]
        tokens = bm25s.tokenize(list(topics["text"]), stopwords=None, return_ids=False, show_progress=False)
        empty = self.retriever.vocab_dict.get("")
        self.queries = []
        for terms in tokens:
            ids = self.retriever.get_tokens_ids(terms)
            self.queries.append(ids if ids else [empty])  # no known term: bm25s's empty token
        self.depth = depth

    def query(self, i: int):
        documents, scores = self.retriever.retrieve([self.queries[i]], k=self.depth, n_threads=1, show_progress=False)
        return documents[0], scores[0]

    def batch(self) -> None:
        self.retriever.retrieve(self.queries, k=self.depth, n_threads=1, show_progress=False)

    def top(self, result, n: int):
        documents, scores = result
        keep = [j for j in range(min(n, len(scores))) if scores[j] > 0]  # bm25s pads with zero scores
        return [self.docno_list[int(documents[j])] for j in keep], [float(scores[j]) for j in keep]


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------------- tantivy


class Tantivy:
    """tantivy-py: BM25 with k1=1.2, b=0.75 (fixed in tantivy), Lucene's idf, document lengths
    quantised to one byte (as Lucene's norms); positions indexed (index_option="position", as
    irgrid keeps positions); docno stored. A query is a boolean query of SHOULD term queries
    (disjunctive BM25, the sum of the matching terms' scores), one per distinct query term,
    reading frequencies only; searched with count=False so tantivy may use block-max WAND.
    """

    name = "tantivy"

    def __init__(self, heap_size: int = 512_000_000, num_threads: int = 2):
        import tantivy

        self.tantivy = tantivy
        self.heap_size, self.num_threads = heap_size, num_threads
        version = getattr(tantivy, "__version__", None)
        if version is None:
            from importlib.metadata import version as package_version

            version = package_version("tantivy")
        self.settings = (f"tantivy-py ({version}): text field tokenizer 'default' (split on non-alphanumerics, "
                         f"lower-case, no stop words, no stemmer), positions indexed, docno stored; "
                         f"writer(heap_size={heap_size:,}, num_threads={num_threads}), commit + wait_merging_threads; "
                         f"BM25 k1=1.2 b=0.75 (tantivy's fixed values), boolean SHOULD of term queries (freqs), "
                         f"search(query, k, count=False), 1 thread")

    def _schema(self):
        builder = self.tantivy.SchemaBuilder()
        builder.add_text_field("docno", stored=True, tokenizer_name="raw", index_option="basic")
        builder.add_text_field("text", stored=False, tokenizer_name="default", index_option="position")
        return builder.build()

    def build(self, docs_dir, out_dir) -> dict:
        tantivy = self.tantivy
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True)
        index = tantivy.Index(self._schema(), path=str(out_dir), reuse=False)
        writer = index.writer(heap_size=self.heap_size, num_threads=self.num_threads)
        n = 0
        Document = tantivy.Document
        for docnos, texts in iter_shards(docs_dir):
            for docno, text in zip(docnos, texts):
                writer.add_document(Document(docno=docno, text=text))
            n += len(docnos)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()
        return {"num_docs": searcher.num_docs, "num_segments": searcher.num_segments}

    def open(self, index_dir, topics, k1: float, b: float, depth: int) -> None:
        if (k1, b) != (1.2, 0.75):
            raise ValueError("tantivy's BM25 is k1=1.2, b=0.75")
        tantivy = self.tantivy
        self.index = tantivy.Index.open(str(index_dir))
        self.searcher = self.index.searcher()
        schema = self.index.schema
        Query, Occur = tantivy.Query, tantivy.Occur
        self.queries = []
        for text in topics["text"]:
            terms = sorted(set(text.lower().split()))  # == the default tokenizer on this text
            self.queries.append(Query.boolean_query(
                [(Occur.Should, Query.term_query(schema, "text", t, index_option="freq")) for t in terms]))
        self.depth = depth

    def query(self, i: int):
        return self.searcher.search(self.queries[i], self.depth, count=False).hits  # [(score, DocAddress)]

    batch = None

    def top(self, hits, n: int):
        hits = hits[:n]
        return [self.searcher.doc(address)["docno"][0] for _, address in hits], [float(s) for s, _ in hits]


# ------------------------------------------------------------------------------------- PISA


class PISA:
    """PISA through pyterrier-pisa (its compiled extension; PyTerrier's Java is never started):
    PisaIndex(stemmer="none", stops="none") indexes an iterator of {"docno", "text"} dicts into a
    forward index and a frequency inverted index (``fwd*``, ``inv.*``: no positions); the first
    BM25 retriever for a (k1, b) then writes that point's block-max data (``bm25.k1-K.b-B.q0.bmw.64``:
    each list's and each 64-posting block's maximum score) and a compressed copy of the inverted
    index (``....block_simdbp``), both named by (k1, b) and made again for any other point. Both
    are made inside ``build`` for k1=1.2, b=0.75, so that the timed open only maps them.

    BM25 is PISA's: idf log((N - df + 0.5) / (df + 0.5)) (floored at 1e-6) times (k1 + 1), tf
    / (tf + k1 (1 - b + b |d|/avgdl)) with exact document lengths, float32; the default query
    algorithm block_max_wand, top ``depth``. A query is one row through ``PisaRetrieve.transform``
    (the public per-query call, pandas in and out); ``batch`` is the whole query set in one
    ``transform``, 1 thread.
    """

    name = "pisa"

    def __init__(self, threads: int = 1, batch_size: int = 100_000):
        import pyterrier_pisa

        self.pisa = pyterrier_pisa
        self.threads, self.batch_size = threads, batch_size
        self.settings = (f"pyterrier-pisa {pyterrier_pisa.__version__}: PisaIndex(stemmer='none', stops='none', "
                         f"text_field='text', threads={threads}, batch_size={batch_size:,}) (PISA's tbb pool "
                         f"threads + 1), index(iterator of dicts), then the bm25(k1=1.2, b=0.75) block-max data "
                         f"+ compressed index (block_simdbp, 64-posting blocks) made in the build; query: "
                         f"bm25(k1, b, num_results=k, threads=1) block_max_wand, transform of a one-row "
                         f"DataFrame per query (batch: the whole set); no positions")

    def _index(self, index_dir, threads: int | None = None):
        return self.pisa.PisaIndex(str(index_dir), text_field="text", stemmer="none", stops="none",
                                   threads=threads or self.threads, batch_size=self.batch_size)

    def build(self, docs_dir, out_dir) -> dict:
        import time

        def documents():
            for docnos, texts in iter_shards(docs_dir):
                for docno, text in zip(docnos, texts):
                    yield {"docno": docno, "text": text}

        index = self._index(out_dir)
        start = time.perf_counter()
        index.index(documents())
        indexed = time.perf_counter() - start
        index.bm25(k1=1.2, b=0.75, num_results=10, threads=1)  # the block-max data + compressed index
        return {"num_docs": index.num_docs(), "num_terms": index.num_terms(), "index_s": round(indexed, 2),
                "bm25_point_s": round(time.perf_counter() - start - indexed, 2)}

    def open(self, index_dir, topics, k1: float, b: float, depth: int) -> None:
        import pandas as pd

        self.retriever = self._index(index_dir).bm25(k1=k1, b=b, num_results=depth, threads=1)
        self.topics = pd.DataFrame({"qid": [str(q) for q in topics["qid"]], "query": list(topics["text"])})
        self.frames = [self.topics.iloc[i:i + 1] for i in range(len(self.topics))]

    def query(self, i: int):
        return self.retriever.transform(self.frames[i])  # DataFrame: qid, query, docno, score, rank

    def batch(self) -> None:
        self.retriever.transform(self.topics)

    def top(self, result, n: int):
        result = result.sort_values("rank", kind="stable").head(n)
        result = result[result["score"] > 0]
        return [str(d) for d in result["docno"]], [float(s) for s in result["score"]]

    def grid(self, index_dir, topics, points: list[dict], depth: int) -> dict:
        """Each (k1, b) point as pyterrier-pisa runs it: ``bm25(k1, b)`` makes the point's block-max
        data and compressed index (none of them exist in a fresh copy of the built index: its
        ``fwd*``, ``inv.*`` and metadata linked into a scratch directory), then the whole query set
        in one ``transform``. Per point: seconds and CPU seconds of the two steps."""
        import shutil
        import tempfile
        import time

        import pandas as pd

        index_dir = Path(index_dir)
        frame = pd.DataFrame({"qid": [str(q) for q in topics["qid"]], "query": list(topics["text"])})
        per_point, rows = [], 0
        scratch = Path(tempfile.mkdtemp(prefix="pisa-grid-", dir=index_dir.parent))
        try:
            for entry in index_dir.iterdir():
                if entry.name.startswith(("fwd", "inv")) or entry.name.startswith("pt_"):
                    (scratch / entry.name).symlink_to(entry.resolve())
            index = self._index(scratch, threads=1)
            for point in points:
                t0, c0 = time.perf_counter(), time.process_time()
                retriever = index.bm25(k1=point["k1"], b=point["b"], num_results=depth, threads=1)
                t1, c1 = time.perf_counter(), time.process_time()
                rows += len(retriever.transform(frame))
                t2, c2 = time.perf_counter(), time.process_time()
                per_point.append({"point": point, "prepare_s": t1 - t0, "prepare_cpu_s": c1 - c0,
                                  "retrieve_s": t2 - t1, "retrieve_cpu_s": c2 - c1})
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return {"rows": rows, "per_point": per_point}


PEERS = {"bm25s": BM25S, "tantivy": Tantivy, "pisa": PISA}
