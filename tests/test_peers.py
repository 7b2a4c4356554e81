"""irgrid against peers on whole public collections.

1. BM25 against bm25s (method="lucene") on Cranfield, both fed the SAME analysed tokens
   (the 'porter' analyzer of config/config.yaml): MAP and per-document scores.
2. BM25 and QL-Dirichlet on CACM against Anserini's published regression figures.
3. QL-Dirichlet on Cranfield against log P(q|d) counted by hand from the analysed tokens.
4. Anserini's CACM regression exactly: its documents, topics and judgements (cacm_anserini), the
   index statistics and the two Lucene families' MAP and P@30 against the published figures.

Every index is built once per module in a temporary directory through the package API
(collections -> shards -> build_index -> retrieve_grid -> evaluate_run). The tests need the
public collections mirror (../shared/collections or IRGRID_MIRROR) and are skipped without it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from common import REGISTRY, REPO

from irgrid.analysis import Analyzer
from irgrid.collections import (
    CollectionNotAvailable,
    load_registry,
    resolve_files,
    write_document_shards,
    write_qrels,
    write_topics,
)
from irgrid.evaluation.evaluator import evaluate_run, mean_values, read_qrels
from irgrid.index import IndexReader, build_index
from irgrid.index.forward import build_forward_index, forward_index_dir
from irgrid.retrieve import retrieve_grid
from irgrid.runs import read_topics

pytestmark = [pytest.mark.slow, pytest.mark.mirror, pytest.mark.peers]

CONFIG = REPO / "config" / "config.yaml"
DEPTH = 1000


def configured_analyzer(name: str) -> Analyzer:
    """An analyzer exactly as config/config.yaml defines it."""
    with open(CONFIG, encoding="utf-8") as handle:
        return Analyzer.from_dict(yaml.safe_load(handle)["analyzers"][name])


class Built:
    """A collection written and indexed in a temporary directory, plus what the tests compare."""

    def __init__(self, root: Path, collection_id: str, analyzer_name: str, queryset: str = "text"):
        spec = load_registry(REGISTRY)[collection_id]
        try:
            files = resolve_files(spec, download=False)
        except CollectionNotAvailable as error:
            pytest.skip(f"collections mirror not available: {error}")
        self.analyzer = configured_analyzer(analyzer_name)
        docs_dir = root / "docs"
        write_document_shards(spec, files, docs_dir, num_shards=2)
        write_topics(spec, files, queryset, root / "topics.parquet")
        write_qrels(spec, files, root / "qrels.parquet")
        build_index(docs_dir, root / "index", self.analyzer, num_buckets=4, scheduler="threads", progress=False)
        build_forward_index(root / "index", forward_index_dir(root / "index"))  # feedback reads documents' terms
        self.index = IndexReader(root / "index")
        assert self.index.analyzer == self.analyzer  # queries are analysed as the documents were
        self.topics = read_topics(root / "topics.parquet")
        self.qrels = read_qrels(root / "qrels.parquet")
        shards = pd.concat(
            [pq.read_table(path).to_pandas() for path in sorted(docs_dir.glob("part-*.parquet"))], ignore_index=True
        )
        self.docnos = [str(d) for d in shards["docno"]]
        self.texts = list(shards["text"])

    def run(self, family: str, point: dict) -> pd.DataFrame:
        return retrieve_grid(self.index, self.topics, family, [point], depth=DEPTH)[0]

    def means(self, run: pd.DataFrame, measures=("AP", "P@30")) -> dict[str, float]:
        return mean_values(evaluate_run(run, self.qrels, measures))


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    return Built(tmp_path_factory.mktemp("cranfield-porter"), "cranfield", "porter")


@pytest.fixture(scope="module")
def cranfield_tokens(cranfield):
    """The analysed token list of every Cranfield document, from the text, not from the index."""
    return [cranfield.analyzer(text or "") for text in cranfield.texts]


@pytest.fixture(scope="module")
def cacm_anserini(tmp_path_factory):
    # Anserini's HTML rendering of CACM, its topics, CACM's judgements under Anserini's docnos
    return Built(tmp_path_factory.mktemp("cacm-anserini-lucene"), "cacm_anserini", "lucene", "anserini")


@pytest.fixture(scope="module")
def cacm(tmp_path_factory):
    # the queries with the authors they name, as Anserini's CACM topics hold them
    return Built(tmp_path_factory.mktemp("cacm-lucene"), "cacm", "lucene", "text_authors")


# --- 1. BM25 against bm25s on Cranfield ---------------------------------------------------------

BM25_POINTS = [{"k1": 1.2, "b": 0.75}, {"k1": 0.9, "b": 0.4}]


def bm25s_run(retriever, docnos: list[str], topics: pd.DataFrame, analyzer: Analyzer) -> pd.DataFrame:
    """A run from bm25s under the irgrid contract: matching documents only (score > 0), by score
    descending then docno ascending, top DEPTH. bm25s is asked for every document (k = N) so that
    neither its arbitrary tie order nor its zero-score filler decide what is kept."""
    vocabulary = retriever.vocab_dict
    num_docs = len(docnos)
    docno_array = np.asarray(docnos, dtype=object)
    rows = []
    for qid, text in zip(topics["qid"], topics["text"]):
        # bm25s drops unknown tokens itself in get_tokens_ids, but an all-unknown query would be
        # "empty"; the literal "" token is in its vocabulary without a matrix column.
        tokens = [t for t in analyzer(text) if t and t in vocabulary]
        if not tokens:
            continue
        ids, scores = retriever.retrieve([tokens], k=num_docs, show_progress=False, n_threads=1)
        ids, scores = ids[0], scores[0].astype(np.float64)
        keep = scores > 0
        ids, scores = ids[keep], scores[keep]
        hits = sorted(zip(docno_array[ids], scores), key=lambda hit: (-hit[1], hit[0]))[:DEPTH]
        rows.extend((str(qid), docno, rank, score) for rank, (docno, score) in enumerate(hits, start=1))
    return pd.DataFrame(rows, columns=["qid", "docno", "rank", "score"])


@pytest.mark.parametrize("point", BM25_POINTS, ids=lambda p: f"k1={p['k1']},b={p['b']}")
def test_bm25_matches_bm25s_on_cranfield(cranfield, cranfield_tokens, point):
    bm25s = pytest.importorskip("bm25s")
    k1, b = point["k1"], point["b"]
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    retriever.index(cranfield_tokens, show_progress=False)

    ours = cranfield.run("bm25", point)
    theirs = bm25s_run(retriever, cranfield.docnos, cranfield.topics, cranfield.analyzer)
    map_ours = cranfield.means(ours, ["AP"])["AP"]
    map_theirs = cranfield.means(theirs, ["AP"])["AP"]
    print(f"\nCranfield BM25 k1={k1} b={b}: MAP irgrid {map_ours:.6f}  bm25s {map_theirs:.6f}  "
          f"diff {map_ours - map_theirs:+.2e}")
    assert abs(map_ours - map_theirs) < 0.005
    # Same candidates: every query retrieves the same number of documents.
    assert ours.groupby("qid").size().to_dict() == theirs.groupby("qid").size().to_dict()

    # Per-document scores of the top 10 of a few queries. bm25s's "lucene" variant scores
    # idf * tf / (tf + k1 (1 - b + b |D|/avgdl)) (bm25s/scoring.py, _score_tfc_lucene ->
    # _score_tfc_robertson): without the (k1 + 1) factor, as Lucene 8+ and irgrid (docs/models.md).
    # So the scores must be equal, up to bm25s's float32 arithmetic.
    position = {docno: i for i, docno in enumerate(cranfield.docnos)}
    topics = cranfield.topics.set_index("qid")["text"]
    for qid in ["1", "2", "50", "100", "225"]:
        top = ours[ours["qid"] == qid].head(10)
        assert len(top) == 10
        tokens = [t for t in cranfield.analyzer(topics[qid]) if t and t in retriever.vocab_dict]
        all_scores = retriever.get_scores(tokens).astype(np.float64)
        theirs_top = all_scores[[position[d] for d in top["docno"]]]
        np.testing.assert_allclose(top["score"].to_numpy(), theirs_top, rtol=1e-5)


# --- 2. CACM against Anserini's published regression figures ------------------------------------

# castorini/anserini, src/main/resources/regression/cacm.yaml ("CACM All", trec_eval -m map /
# -m P.30): bm25 (-bm25: k1=0.9, b=0.4) MAP 0.3123, P@30 0.1942; ql (-qld: mu=1000) MAP 0.3265,
# P@30 0.1942. Those numbers are Anserini's (Lucene, DefaultEnglishAnalyzer: Porter + Lucene's 33
# English stop words), independent of this package's code.
ANSERINI_CACM = {
    ("bm25", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3123, "P@30": 0.1942},
    ("ql_dirichlet", (("mu", 1000.0),)): {"AP": 0.3265, "P@30": 0.1942},
    ("bm25_lucene", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3123, "P@30": 0.1942},
    ("ql_lucene", (("mu", 1000.0),)): {"AP": 0.3265, "P@30": 0.1942},
    ("bm25_lucene+rm3_anserini", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3648, "P@30": 0.2224},
    ("ql_lucene+rm3_anserini", (("mu", 1000.0),)): {"AP": 0.3629, "P@30": 0.2250},
    ("bm25_lucene+ax_anserini", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3077, "P@30": 0.1955},
    ("ql_lucene+ax_anserini", (("mu", 1000.0),)): {"AP": 0.2907, "P@30": 0.1840},
}
# Anserini 0.21.0's feedback query of every topic (-rm3.outputQuery), from its own index of the same
# documents (tests/peers/anserini-0.21-cacm-rm3.json says how)
ANSERINI_EXPANDED_QUERIES = {
    **json.loads((Path(__file__).parent / "peers" / "anserini-0.21-cacm-rm3.json").read_text(encoding="utf-8")),
    **json.loads((Path(__file__).parent / "peers" / "anserini-0.21-cacm-ax.json").read_text(encoding="utf-8")),
}


# Ax draws its pool of documents at random by document id (seeded): on another rendering of CACM, with
# other ids, it draws another pool, so its published figure is checked on Anserini's own files only.
PUBLIC_CACM_ROWS = [(family, point) for family, point in ANSERINI_CACM if not family.endswith("+ax_anserini")]


@pytest.mark.parametrize("family,point", PUBLIC_CACM_ROWS, ids=[family for family, _ in PUBLIC_CACM_ROWS])
def test_cacm_matches_anserini_regression(cacm, family, point):
    """Within 0.01 of the published figures: Anserini's own documents, topics and judgements differ from
    the public CACM files (docs/anserini.md); on the same files the Lucene families match Anserini exactly
    (test_lucene_families_match_anserini_run_on_the_same_files), and on Anserini's own files they give the
    published figures (test_cacm_anserini_reproduces_the_published_regression)."""
    expected = ANSERINI_CACM[(family, point)]
    run = cacm.run(family, dict(point))
    assert run["qid"].nunique() == cacm.topics["qid"].nunique()
    measured = cacm.means(run, ["AP", "P@30"])
    print(f"\nCACM {family} {dict(point)}: MAP {measured['AP']:.4f} (Anserini {expected['AP']:.4f})  "
          f"P@30 {measured['P@30']:.4f} (Anserini {expected['P@30']:.4f})")
    # trec_eval averages over the 52 judged queries; so does evaluate_run.
    assert cacm.qrels["qid"].nunique() == 52
    assert abs(measured["AP"] - expected["AP"]) < 0.01
    assert abs(measured["P@30"] - expected["P@30"]) < 0.01


# Anserini 0.21.0 (Lucene 9.5) itself, run on irgrid's CACM documents and query set text_authors
# (tests/peers/anserini-0.21-cacm.json says how): per-query AP and P@30 of -bm25 and -qld, and the
# index's term statistics. Numbers computed by Lucene, not by this package.
ANSERINI_RUN = json.loads((Path(__file__).parent / "peers" / "anserini-0.21-cacm.json").read_text(encoding="utf-8"))


def test_lucene_analysis_gives_lucenes_index_of_cacm(cacm):
    assert cacm.index.stats["num_terms"] == ANSERINI_RUN["index"]["unique_terms"]
    assert cacm.index.stats["total_length"] == ANSERINI_RUN["index"]["total_terms"]


@pytest.mark.parametrize("family,point,peer", [("bm25_lucene", {"k1": 0.9, "b": 0.4}, "bm25"),
                                               ("ql_lucene", {"mu": 1000.0}, "qld")])
def test_lucene_families_match_anserini_run_on_the_same_files(cacm, family, point, peer):
    per_query = evaluate_run(cacm.run(family, point), cacm.qrels, ["AP", "P@30"])
    values = per_query.pivot(index="qid", columns="measure", values="value")
    expected = ANSERINI_RUN[peer]
    assert set(values.index) == set(expected)
    for qid, measured in values.iterrows():
        assert measured["AP"] == pytest.approx(expected[qid]["AP"], abs=1e-6), qid
        assert measured["P@30"] == pytest.approx(expected[qid]["P@30"], abs=1e-6), qid


# --- 3. QL-Dirichlet against a direct computation on Cranfield ----------------------------------

def test_ql_dirichlet_equals_direct_log_likelihood(cranfield, cranfield_tokens):
    mu = 1000.0
    run = cranfield.run("ql_dirichlet", {"mu": mu})
    doc_counts = {docno: Counter(tokens) for docno, tokens in zip(cranfield.docnos, cranfield_tokens)}
    doc_lengths = {docno: len(tokens) for docno, tokens in zip(cranfield.docnos, cranfield_tokens)}
    collection = Counter()
    for tokens in cranfield_tokens:
        collection.update(tokens)
    total = sum(collection.values())
    topics = cranfield.topics.set_index("qid")["text"]

    checked = 0
    for qid in ["1", "8", "157"]:
        query = [t for t in cranfield.analyzer(topics[qid]) if collection[t] > 0]  # cf = 0: dropped
        assert query
        top = run[run["qid"] == qid].head(5)
        assert len(top) == 5
        for docno, score in zip(top["docno"], top["score"]):
            counts, length = doc_counts[docno], doc_lengths[docno]
            expected = 0.0
            for term in query:  # one addend per query-term occurrence: qtf weighting
                p_collection = collection[term] / total
                expected += math.log((counts[term] + mu * p_collection) / (length + mu))
            assert score == pytest.approx(expected, rel=1e-9), (qid, docno)
            checked += 1
    assert checked == 15


# --- 4. Anserini's CACM regression, exactly -----------------------------------------------------

# castorini/anserini, src/main/resources/reproduce/from-document-collection/configs/cacm.yaml
# (HtmlCollection over src/main/resources/cacm/cacm.tar.gz, DefaultEnglishAnalyzer, topics.cacm.txt,
# qrels.cacm.txt; trec_eval -m map / -m P.30): index_stats 3204 documents, 14363 unique terms,
# 320968 total terms; bm25 (-bm25: k1=0.9, b=0.4) MAP 0.3123, P30 0.1942; ql (-qld: mu=1000)
# MAP 0.3265, P30 0.1942; bm25+rm3 (-bm25 -rm3: fbDocs 10, fbTerms 10, originalQueryWeight 0.5)
# MAP 0.3648, P30 0.2224; ql+rm3 (-qld -rm3) MAP 0.3629, P30 0.2250; bm25+ax (-bm25 -axiom -rerankCutoff 20:
# R 20, N 30, beta 0.4, top 20, the pool drawn with seed 42) MAP 0.3077, P30 0.1955; ql+ax MAP 0.2907,
# P30 0.1840. Figures printed to four digits: equal within half a unit of the last.
ANSERINI_REGRESSION_INDEX = {"num_docs": 3204, "num_terms": 14363, "total_length": 320968}
ANSERINI_REGRESSION = {
    ("bm25_lucene", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3123, "P@30": 0.1942},
    ("ql_lucene", (("mu", 1000.0),)): {"AP": 0.3265, "P@30": 0.1942},
    ("bm25_lucene+rm3_anserini", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3648, "P@30": 0.2224},
    ("ql_lucene+rm3_anserini", (("mu", 1000.0),)): {"AP": 0.3629, "P@30": 0.2250},
    ("bm25_lucene+ax_anserini", (("k1", 0.9), ("b", 0.4))): {"AP": 0.3077, "P@30": 0.1955},
    ("ql_lucene+ax_anserini", (("mu", 1000.0),)): {"AP": 0.2907, "P@30": 0.1840},
}
# Anserini 0.21.0's feedback query of every topic (-rm3.outputQuery), from its own index of the same
# documents (tests/peers/anserini-0.21-cacm-rm3.json says how)
ANSERINI_EXPANDED_QUERIES = {
    **json.loads((Path(__file__).parent / "peers" / "anserini-0.21-cacm-rm3.json").read_text(encoding="utf-8")),
    **json.loads((Path(__file__).parent / "peers" / "anserini-0.21-cacm-ax.json").read_text(encoding="utf-8")),
}


def test_cacm_anserini_index_has_the_regressions_statistics(cacm_anserini):
    stats = cacm_anserini.index.stats
    assert {name: stats[name] for name in ANSERINI_REGRESSION_INDEX} == ANSERINI_REGRESSION_INDEX
    # terms.parquet holds one row per unique term, whose cf add up to the total terms
    terms = pq.read_table(cacm_anserini.index.path / "terms.parquet", columns=["cf"]).column("cf").to_numpy()
    assert len(terms) == 14363 and int(terms.sum()) == 320968


@pytest.mark.parametrize("family,point", list(ANSERINI_REGRESSION), ids=[family for family, _ in ANSERINI_REGRESSION])
def test_cacm_anserini_reproduces_the_published_regression(cacm_anserini, family, point):
    expected = ANSERINI_REGRESSION[(family, point)]
    run = cacm_anserini.run(family, dict(point))
    measured = cacm_anserini.means(run, ["AP", "P@30"])
    print(f"\ncacm_anserini {family} {dict(point)}: MAP {measured['AP']:.4f} (Anserini {expected['AP']:.4f})  "
          f"P@30 {measured['P@30']:.4f} (Anserini {expected['P@30']:.4f})")
    # trec_eval averages over the queries with judgements: 52 of the 64 topics
    assert cacm_anserini.qrels["qid"].nunique() == 52 and cacm_anserini.topics["qid"].nunique() == 64
    assert measured["AP"] == pytest.approx(expected["AP"], abs=0.0005)
    assert measured["P@30"] == pytest.approx(expected["P@30"], abs=0.0005)


RM3_POINT = {"fb_docs": 10, "fb_terms": 10, "original_query_weight": 0.5}
AX_POINT = {"fb_docs": 20, "fb_terms": 20, "ax_n": 30, "ax_beta": 0.4, "ax_seed": 42}


@pytest.mark.parametrize("family,point,method,feedback,row", [
    ("bm25_lucene", {"k1": 0.9, "b": 0.4}, "rm3_anserini", RM3_POINT, "bm25+rm3"),
    ("ql_lucene", {"mu": 1000.0}, "rm3_anserini", RM3_POINT, "ql+rm3"),
    ("bm25_lucene", {"k1": 0.9, "b": 0.4}, "ax_anserini", AX_POINT, "bm25+ax"),
    ("ql_lucene", {"mu": 1000.0}, "ax_anserini", AX_POINT, "ql+ax"),
], ids=["bm25+rm3", "ql+rm3", "bm25+ax", "ql+ax"])
def test_cacm_anserini_feedback_expands_every_query_as_anserini(cacm_anserini, family, point, method, feedback, row):
    """Each topic's expanded query (its words and their boosts, to float precision) is Anserini's."""
    from irgrid.feedback.stage import _pool_docids, document_terms, expanded_queries
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer

    index, model = cacm_anserini.index, get_model(family)
    scorer = Scorer(index)
    queries = scorer.prepare(cacm_anserini.topics, model, [point])
    docids, scores, offsets = scorer.top(model, queries, point, feedback["fb_docs"])
    rankings = {qid: (docids[offsets[q]:offsets[q + 1]], scores[offsets[q]:offsets[q + 1]])
                for q, qid in enumerate(queries.qids)}
    tokens = {str(qid): index.analyzer(text) for qid, text in zip(cacm_anserini.topics["qid"],
                                                                 cacm_anserini.topics["text"])}
    read = _pool_docids(index, rankings, [feedback]) if method == "ax_anserini" else docids
    expanded = expanded_queries(method, index, tokens, rankings, document_terms(index, read), feedback)
    peer = ANSERINI_EXPANDED_QUERIES[row]
    assert set(peer) == set(expanded) and len(peer) == 64
    for qid, boosts in peer.items():
        assert set(expanded[qid]) == set(boosts), qid
        for word, boost in boosts.items():
            assert expanded[qid][word] == pytest.approx(boost, rel=1e-6), (qid, word)
