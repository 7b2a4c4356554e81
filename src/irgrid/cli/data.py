"""Commands that make a collection's data: document shards, topics and query sets, qrels, parses, phrase
weights, the synthetic collection."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..grid import decode_point
from .common import _collection, log


def cmd_shard(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections import write_document_shards

    spec, files = _collection(args)
    write_document_shards(spec, files, args.out, args.num_shards)


def cmd_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections import write_topics

    spec, files = _collection(args)
    write_topics(spec, files, args.queryset, args.out)


def cmd_parse_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..parsing import write_parsed_topics

    parsed = write_parsed_topics(args.topics, args.out, args.pipeline)
    log.info("parsed %d queries with %s: %d phrases", len(parsed), args.pipeline,
             sum(len(phrases) for phrases in parsed["phrases"]))


def cmd_phrase_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..phrases import iter_document_texts, write_phrase_topics

    options = json.loads(args.options)
    documents = iter_document_texts(args.docs) if args.docs else None
    table = write_phrase_topics(args.topics, args.out, args.method, phrase_list=args.phrase_list, documents=documents,
                                pmi_threshold=options.get("pmi_threshold", 3.0), min_count=options.get("min_count", 3),
                                convert=options.get("convert", "t2s"))
    log.info("%s: %d queries, %d phrases", args.method, len(table), sum(len(p) for p in table["phrases"]))


def cmd_qrels(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections import write_qrels
    from ..collections.writers import read_docnos

    spec, files = _collection(args)
    write_qrels(spec, files, args.out, known_docnos=read_docnos(args.docs) if args.docs else None)


def cmd_min_words_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..querysets import write_min_words_topics

    write_min_words_topics(args.topics, args.out, args.min_words, args.queryset)


def cmd_judged_topics(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pyarrow as pa

    # deferred: this command's own dependencies (see the module's docstring)
    from ..evaluation.evaluator import read_qrels
    from ..io import write_parquet
    from ..runs import read_topics
    from ..sentences.protocol import judged_topics, mixed_qids

    every = read_topics(args.topics)
    topics = judged_topics(every, read_qrels(args.qrels), args.questions)
    write_parquet(pa.Table.from_pandas(topics, preserve_index=False), args.out)
    log.info("%d of %d queries kept (%s), %d with judgements, %d with a relevant candidate, %d with a relevant "
             "and a non-relevant candidate, %d candidates", len(topics), len(every), args.questions,
             int((topics["candidates"].map(len) > 0).sum()), int((topics["relevant"] > 0).sum()),
             len(mixed_qids(topics)), int(topics["candidates"].map(len).sum()))


#: the queries' parses, beside the documents' part-*.parquet in a collection's parses directory
QUERY_PARSES = "queries.parquet"


def cmd_parse_sentences(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    import pandas as pd

    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections.formats import FORMATS
    from ..collections.readers import iter_queries
    from ..sentences.parsing import parse_document_shards, parse_topic_sentences, write_parses

    spec, files = _collection(args)
    carried = {"document": {}, "query": {}}
    read_parses = FORMATS[spec.format].parses  # a format may carry a parse of every sentence and question
    if read_parses:
        for kind, key, parse in read_parses(spec, files):
            carried[kind][key] = parse
    kwargs = {"pipeline": args.pipeline} if args.pipeline else {}
    parse_document_shards(args.docs, args.out, carried=carried["document"], workers=args.workers, **kwargs)
    # every query of the collection (all its query sets), beside the documents' shards
    queries = [(query.qid, " ".join(text for text in query.fields.values() if text))
               for query in iter_queries(spec, files)]
    topics = pd.DataFrame(queries, columns=["qid", "text"]).drop_duplicates("qid")
    write_parses(parse_topic_sentences(topics, carried=carried["query"], **kwargs), Path(args.out) / QUERY_PARSES)


def cmd_sentence_cliques(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..evaluation.evaluator import read_qrels
    from ..features.sentence_parses import SentenceParses
    from ..index import IndexReader
    from ..runs import read_topics
    from ..sentences.diagnostics import clique_statistics

    index = IndexReader(args.index)
    table = clique_statistics(index, read_topics(args.topics), read_qrels(args.qrels),
                              SentenceParses.load(args.parses, index))
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def cmd_phrase_weights(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..phrases.weights import write_phrase_weights

    table = write_phrase_weights(args.index, args.topics, args.family, [decode_point(p) for p in args.params], args.out)
    log.info("%d phrases of %d queries", int((table["phrase"] != "").sum()), table["qid"].nunique())


def cmd_synthesize(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections.synthetic import SyntheticSpec, write_synthetic_collection

    spec = SyntheticSpec(num_docs=args.docs, vocabulary_size=args.vocabulary, mean_length=args.mean_length,
                         length_sigma=args.length_sigma, zipf_exponent=args.zipf, num_queries=args.queries,
                         docs_per_shard=args.docs_per_shard,
                         **({} if args.seed is None else {"seed": args.seed}))
    started = time.perf_counter()
    write_synthetic_collection(spec, args.out)
    log.info("wrote %d documents in %d shards and %d queries to %s in %.1fs", spec.num_docs, spec.num_shards,
             spec.num_queries, args.out, time.perf_counter() - started)
