"""A hand-made index with the IndexReader interface the scorer needs, for model tests.

Counts come from plain Python over the token lists, independently of irgrid.index.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


class TinyIndex:
    def __init__(self, docs: dict[str, list[str]]):
        self.docs = docs
        self.docnos = list(docs)
        self.doc_lengths = np.array([len(terms) for terms in docs.values()], dtype=np.int32)
        self.doc_unique_terms = np.array([len(set(terms)) for terms in docs.values()], dtype=np.int32)
        total = int(self.doc_lengths.sum())
        self.stats = {"num_docs": len(docs), "total_length": total, "avg_doc_length": total / len(docs)}
        self.analyzer = str.split

    def term_stats(self, terms):
        out = {}
        for term in terms:
            df = sum(term in doc for doc in self.docs.values())
            cf = sum(doc.count(term) for doc in self.docs.values())
            if df:
                out[term] = (df, cf)
        return out

    def postings(self, terms, positions=False):
        out = {}
        docs = list(self.docs.values())
        for term in terms:
            docids = [i for i, doc in enumerate(docs) if term in doc]
            tfs = [docs[i].count(term) for i in docids]
            out[term] = SimpleNamespace(docids=np.array(docids, dtype=np.int32), tfs=np.array(tfs, dtype=np.int32))
        return out

    def positional_postings(self, terms):
        """Each term's postings with the positions counted here, by list index (no stop-word gaps)."""
        from irgrid.features import PositionalPostings

        docs = list(self.docs.values())
        lists = {}
        for term in dict.fromkeys(terms):
            docids = [i for i, doc in enumerate(docs) if term in doc]
            if docids:
                lists[term] = (docids, [[p for p, t in enumerate(docs[i]) if t == term] for i in docids])
        return PositionalPostings.from_lists(lists)


class TinyForwardIndex(TinyIndex):
    """A tiny index with what feedback reads besides postings: each document's terms (its forward index)."""

    def __init__(self, docs):
        super().__init__(docs)
        self.num_docs = len(docs)

    def forward(self, docids):
        texts = list(self.docs.values())
        return [list(texts[int(d)]) for d in docids]
