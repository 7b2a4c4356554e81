"""`irgrid ...`: every workflow step as a command, for Snakemake rules and for use without Snakemake.

Each subcommand calls one package function; structured parameters arrive as JSON
strings so a rule can pass its ``params:`` through unchanged.

The commands live in modules by what they work on (:mod:`.data`, :mod:`.index`, :mod:`.retrieval`,
:mod:`.results`, :mod:`.housekeeping`); this module builds the parser and runs a command. Each
command imports what it uses inside its own function: a job pays for its command's dependencies
only (a shard or topics job never loads numba, Dask, matplotlib or ir_measures).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import signal
import sys

from ..errors import ConfigError, InputFormatError
from .aot import cmd_aot_build
from .data import (
    cmd_judged_topics,
    cmd_min_words_topics,
    cmd_parse_sentences,
    cmd_parse_topics,
    cmd_phrase_topics,
    cmd_phrase_weights,
    cmd_qrels,
    cmd_sentence_cliques,
    cmd_shard,
    cmd_synthesize,
    cmd_topics,
)
from .housekeeping import cmd_check_lock, cmd_clean_leftovers
from .index import cmd_forward_index, cmd_index
from .results import cmd_figures, cmd_findings, cmd_parameter_figure, cmd_report, cmd_table, cmd_violation_table, cmd_violations
from .retrieval import cmd_chunk, cmd_evaluate, cmd_export_trec, cmd_retrieve, cmd_tie_aware


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="irgrid", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    def collection_args(p):
        p.add_argument("--registry", required=True, help="collection registry YAML")
        p.add_argument("--collection", required=True, help="collection id")
        p.add_argument("--mirror", default=None, help="directory of raw collection files")
        p.add_argument("--resources", default="resources", help="download directory")

    p = sub.add_parser("shard", help="write a collection's documents as Parquet shards")
    collection_args(p)
    p.add_argument("--num-shards", type=int, default=4)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_shard)

    p = sub.add_parser("topics", help="write one query set as Parquet (qid, text)")
    collection_args(p)
    p.add_argument("--queryset", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_topics)

    p = sub.add_parser("parse-topics", help="parse a query set with spaCy: phrases and dependency parse per query")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text)")
    p.add_argument("--pipeline", default="en_core_web_sm", help="installed spaCy pipeline package")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_parse_topics)

    p = sub.add_parser("phrase-topics", help="identify each query's phrases: a phrase list, PMI in the collection, "
                       "or a Chinese segmenter")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text)")
    p.add_argument("--method", required=True, choices=["list", "pmi", "segmenter"])
    p.add_argument("--phrase-list", default=None, help="phrase list file (method list)")
    p.add_argument("--docs", default=None, help="directory of document shards (method pmi)")
    p.add_argument("--options", default="{}", help="the config's phrases section as JSON")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_phrase_topics)

    p = sub.add_parser("qrels", help="write the judgements as Parquet (qid, docno, relevance)")
    collection_args(p)
    p.add_argument("--docs", default=None, help="the collection's document shards: judged documents not in them are "
                   "logged, more than half of them an error")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_qrels)

    p = sub.add_parser("index", help="build the partitioned Parquet inverted index with Dask")
    p.add_argument("--docs", required=True, help="directory of document shards")
    p.add_argument("--analyzer", required=True, help="analyzer as JSON")
    p.add_argument("--num-buckets", type=int, default=None,
                   help="postings buckets (default: one per 4M tokens, at least 16)")
    p.add_argument("--scheduler", default=None, help="dask.distributed scheduler address")
    p.add_argument("--dask-cluster", default=None,
                   help="a dask-jobqueue cluster to start for this build, as JSON (the config's dask.cluster)")
    p.add_argument("--workers", type=int, default=1, help="local Dask workers when no scheduler is given")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("forward-index", help="build an index's forward index (each document's terms in order)")
    p.add_argument("--index", required=True, help="the postings index (irgrid index)")
    p.add_argument("--workers", type=int, default=1, help="threads")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_forward_index)

    p = sub.add_parser("retrieve", help="score a query set at one or more parameter points")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--family", nargs="+", required=True,
                   help="model family, e.g. bm25: one for every point, or one per --params entry")
    p.add_argument("--params", nargs="+", required=True, help="encoded parameter points (k1~0.9_b~0.4)")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--trec", action="store_true", help="also write a TREC-format run next to each output")
    p.add_argument("--threads", type=int, default=1,
                   help="threads to score and rank on (models with a fused kernel: bm25, ql_dirichlet, kl_ml)")
    p.add_argument("--parses", default=None,
                   help="the collection's sentence parses (irgrid parse-sentences), for a model scoring parse-tree "
                        "features (mrf_sentence)")
    p.add_argument("--out", nargs="+", required=True)
    p.set_defaults(func=cmd_retrieve)

    p = sub.add_parser("sentence-cliques", help="the tree values of the query-term groups in relevant and other "
                                                "judged sentences (why mrf_sentence ranks as it does)")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--parses", required=True)
    p.set_defaults(func=cmd_sentence_cliques)

    p = sub.add_parser("min-words-topics", help="query set X+minNwords: the queries of X with N or more words")
    p.add_argument("--topics", required=True, help="topics Parquet (qid, text, any other columns)")
    p.add_argument("--min-words", type=int, required=True,
                   help="keep queries of this many words or more (lucene tokens, stop words kept)")
    p.add_argument("--queryset", required=True, help="the filtered query set's name, for messages")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_min_words_topics)

    p = sub.add_parser("judged-topics", help="query set X+judged: X with each query's judged documents to re-rank")
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--questions", choices=["positive", "all"], default="positive",
                   help="keep the queries with a relevant candidate (X+judged) or every one (X+alljudged)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_judged_topics)

    p = sub.add_parser("parse-sentences", help="a dependency parse of every document (carried or spaCy), by shard")
    collection_args(p)
    p.add_argument("--docs", required=True, help="directory of document shards")
    p.add_argument("--pipeline", default=None, help="spaCy pipeline package (default: the config's parser)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--out", required=True, help="directory of parse shards")
    p.set_defaults(func=cmd_parse_sentences)

    p = sub.add_parser("phrase-weights", help="each query's phrases, their statistics and weights under a phrase model")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True, help="topics Parquet with a phrases column (X+parser, X+pmi, ...)")
    p.add_argument("--family", required=True, help="phrase model family: p, pu or pm")
    p.add_argument("--params", nargs="+", required=True, help="encoded parameter points of the grid")
    p.add_argument("--out", required=True, help="TSV file")
    p.set_defaults(func=cmd_phrase_weights)

    p = sub.add_parser("export-trec", help="write a Parquet run in TREC format (qid Q0 docno rank score tag)")
    p.add_argument("--run", required=True)
    p.add_argument("--tag", default="irgrid")
    p.add_argument("--topics", default=None, help="the run's topics (default: those its provenance names), whose "
                                                  "source_qid column gives each qid as the queries file writes it")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_export_trec)

    p = sub.add_parser("evaluate", help="per-query evaluation of one or more runs with ir-measures")
    p.add_argument("--run", nargs="+", required=True, help="runs of one query set (Parquet)")
    p.add_argument("--qrels", required=True)
    p.add_argument("--topics", default=None, help="the query set that was run: only its judged queries are evaluated")
    p.add_argument("--measures", required=True, help="JSON list of ir-measures names")
    p.add_argument("--out", nargs="+", required=True, help="one per --run, in the same order")
    p.add_argument("--no-tie-scan", action="store_true",
                   help="leave out the rows on ties touching a relevant document (first_tied_relevant_rank, E[m])")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("chunk", help="retrieve and evaluate a chunk of cells; write their per-query evaluations "
                                     "(one file, no runs)")
    p.add_argument("--index", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--qrels", required=True)
    p.add_argument("--cells", required=True,
                   help="JSON list of [model, family, params], or - for standard input")
    p.add_argument("--measures", required=True, help="JSON list of measure names")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--parses", default=None, help="the collection's sentence parses (mrf_sentence)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("tie-aware", help="a run's measures over every ordering of its tied documents "
                       "(expected, best, worst) beside trec_eval's")
    p.add_argument("--run", required=True, help="an irgrid run (Parquet) or a TREC run file")
    p.add_argument("--qrels", required=True, help="irgrid qrels (Parquet) or a TREC qrels file")
    p.add_argument("--topics", default=None, help="the query set that was run: only its judged queries are evaluated")
    p.add_argument("--measures", default="AP,RR,Rprec,P@1,P@5,P@10,nDCG@10",
                   help="comma-separated or a JSON list: AP, RR, Rprec, P@k, R@k, nDCG@k")
    p.set_defaults(func=cmd_tie_aware)

    p = sub.add_parser("table", help="significance-marked table of an experiment")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--stem", default="table", help="file name without suffix (table, table_cv)")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("figures", help="an experiment's figures (by-method bars, sensitivity curves) as SVG and PNG")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=cmd_figures)

    p = sub.add_parser("parameter-figure", help="the selection measure against one parameter, per collection and model")
    p.add_argument("--spec", required=True, help="table spec JSON")
    p.add_argument("--cells", required=True, help="cells JSON, or - to read it from standard input")
    p.add_argument("--parameter", required=True)
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=cmd_parameter_figure)

    p = sub.add_parser("violations", help="count constraint violations in each model's best run on one collection")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of cells with path, run, index, topics, or - for standard input")
    p.add_argument("--families", required=True, help="JSON {model name: family}")
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--common-run", help="model whose best run's documents every model is also counted on")
    p.add_argument("--run-depth", type=int, default=None,
                   help="score each best run again at this retrieval depth (else read each cell's run file)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_violations)

    p = sub.add_parser("violation-table", help="violation table, Spearman correlations and figure of an experiment")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--cells", required=True, help="JSON list of {collection, queryset, model, params, path}; - reads stdin")
    p.add_argument("--violations", nargs="+", required=True, help="per-collection violation files")
    p.add_argument("--paper-models", help="JSON list of the paper's own models (default: all the models)")
    p.add_argument("--common-run", help="the model whose best run the common counts were made on (for the labels)")
    p.add_argument("--fewest-violations", help="the model the paper finds to have the fewest violations (a claim)")
    p.add_argument("--table-dir", required=True)
    p.add_argument("--figure-dir", required=True)
    p.set_defaults(func=cmd_violation_table)

    p = sub.add_parser("findings", help="an experiment's claims checked per collection, and its per-query evidence")
    p.add_argument("--spec", required=True, help="TableSpec as JSON")
    p.add_argument("--claims", required=True, help="JSON list of {better, than, measure, text, querysets, kind, "
                                                   "larger_on}")
    p.add_argument("--verdict-selection", default="cv", choices=["cv", "tuned", "best"],
                   help="the selection whose chosen points decide the verdicts (the best run is shown beside)")
    p.add_argument("--paper-test", default="null", help="JSON {test, alternative, alpha, correction} of the "
                                                        "paper's own test, or null")
    p.add_argument("--cells", required=True, help="JSON list of cells with path and topics; - reads stdin")
    p.add_argument("--table-dir", required=True)
    p.add_argument("--figure-dir", required=True)
    p.set_defaults(func=cmd_findings)

    p = sub.add_parser("report", help="HTML report of all experiments")
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument("--manifest", help="JSON of irgrid.report.manifest.report_manifest; - reads stdin")
    given.add_argument("--plan", help="JSON of irgrid.report.manifest.manifest_plan (the workflow's config, from "
                                      "which the manifest is made); - reads stdin")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("synthesize", help="write a deterministic synthetic collection (docs shards + topics)")
    p.add_argument("--out", required=True, help="directory: docs/part-XXXX.parquet, topics.parquet, spec.json")
    p.add_argument("--docs", type=int, default=1_000_000, help="number of documents")
    p.add_argument("--vocabulary", type=int, default=500_000, help="number of distinct words")
    p.add_argument("--mean-length", type=float, default=120.0, help="mean document length in words")
    p.add_argument("--length-sigma", type=float, default=0.6, help="log-normal sigma of the lengths")
    p.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the word distribution")
    p.add_argument("--queries", type=int, default=1000, help="number of queries (2-6 words each)")
    p.add_argument("--docs-per-shard", type=int, default=50_000)
    p.add_argument("--seed", type=int, default=None, help="random seed (default: irgrid.collections.synthetic's)")
    p.set_defaults(func=cmd_synthesize)

    p = sub.add_parser("clean-leftovers", help="remove the temporary files and directories that killed jobs left "
                                               "(those of processes no longer running on this host)")
    p.add_argument("roots", nargs="+", help="directories to search, e.g. results")
    p.add_argument("--unowned", action="store_true",
                   help="also remove temporaries named by older versions (no process recorded): only when no run "
                        "is active")
    p.add_argument("--dry-run", action="store_true", help="report, remove nothing")
    p.set_defaults(func=cmd_clean_leftovers)

    p = sub.add_parser("aot", help="the ahead-of-time compiled kernels of this environment (irgrid.aot)")
    aot = p.add_subparsers(dest="aot_command", required=True)
    p = aot.add_parser("build", help="compile the kernels a fresh retrieval process calls with numba.pycc, unless "
                       "a fresh module is there (a failure leaves the JIT kernels in use)")
    p.add_argument("--directory", default=None, help="where (default: $IRGRID_AOT_DIR, else <sys.prefix>/share/irgrid/aot)")
    p.add_argument("--force", action="store_true", help="build even when the module there is fresh")
    p.add_argument("--target-cpu", default="host", help="LLVM's CPU name ('host': this machine's; '': a generic one)")
    p.set_defaults(func=cmd_aot_build)

    p = sub.add_parser("check-lock", help="remove Snakemake's lock of a directory if no live Snakemake holds it; "
                                          "exit 2 naming the process if one does")
    p.add_argument("--directory", default=".", help="the workflow's working directory")
    p.set_defaults(func=cmd_check_lock)
    return parser


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C, whenever it comes (imports, the command, its clean-up): one line, no traceback.
    args = None
    try:
        args = build_parser().parse_args(argv)
        return _run(args)
    except KeyboardInterrupt:
        return _interrupted(args.command if args is not None else "")


def _run(args) -> int:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # Each warning also goes to a file beside the job's log, listed at the end of the run and in the
    # report (irgrid.jobs.job_warnings): in the log alone, nobody reads it.
    from ..jobs.job_warnings import install_warning_file

    install_warning_file(args.command, _outputs(args))
    try:
        code = args.func(args)
    except Exception as error:
        if isinstance(error, _user_errors()):
            # The message already names the file, the line and what was expected.
            print(f"irgrid {args.command}: error: {error}", file=sys.stderr)
            return 2
        if isinstance(error, OSError):
            # A full disk, an unwritable or missing directory: one line naming the path, not a traceback.
            print(f"irgrid {args.command}: error: {describe_os_error(error, _outputs(args))}", file=sys.stderr)
            return 1
        raise
    return code or 0


def _interrupted(command: str) -> int:
    """Ctrl-C: one line and the shell's code for SIGINT (128 + 2), no traceback. A second Ctrl-C
    while the clean-up (``finally`` blocks, exit handlers) runs ends the process at once, silently:
    its traceback would bury the line (45 lines of it)."""
    with contextlib.suppress(ValueError):  # main() called from another thread than the main one
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    print(f"irgrid {command}: interrupted" if command else "irgrid: interrupted", file=sys.stderr, flush=True)
    return 130


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors whose message says all (a bad input, config or collection file). The collection ones
    only where their module was loaded, as nothing else raises them: importing irgrid.collections in
    every command would cost each of the run's hundreds of jobs its import (commands import what they use)."""
    sources = sys.modules.get("irgrid.collections.sources")
    collection_errors = (sources.ChecksumError, sources.CollectionNotAvailable) if sources else ()
    return (InputFormatError, ConfigError, *collection_errors)


def _outputs(args) -> list[str]:
    """What the command writes (``--out``, ``--out-dir``...), to name when an error does not say which file."""
    paths = []
    for name in ("out", "out_dir", "table_dir", "figure_dir"):
        value = getattr(args, name, None)
        paths += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
    return paths


def describe_os_error(error: OSError, outputs: list[str] | None = None) -> str:
    """``path: reason`` for an operating-system error (``results/x: No space left on device``).

    Errors from inside pyarrow carry no file name, and an ``[errno 28]`` only in their text; a full
    disk or a refused write is then reported against the command's outputs (``outputs``).
    """
    text = " ".join(str(error).split())
    errno = error.errno
    if errno is None:
        found = re.search(r"\[errno (\d+)\]", text, re.IGNORECASE)
        errno = int(found.group(1)) if found else None
    hint = {28: " (free space on that file system, or write results elsewhere)",
            122: " (your disk quota is used up)",
            13: " (make the directory writable for you, or run where you may write)",
            27: " (a file size limit, ulimit -f, stopped the write)",
            30: " (the file system is read-only; run where you may write)"}.get(errno, "")
    if error.filename is not None:
        where = str(error.filename) + (f" -> {error.filename2}" if error.filename2 is not None else "")
        return f"{where}: {error.strerror or text}{hint}"
    if hint and outputs:
        shown = ", ".join(outputs[:3]) + (f" and {len(outputs) - 3} more" if len(outputs) > 3 else "")
        return f"writing {shown}: {text}{hint}"
    return f"{type(error).__name__}: {text}{hint}"


if __name__ == "__main__":
    sys.exit(main())
