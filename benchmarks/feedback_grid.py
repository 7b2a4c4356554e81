"""An RM3 grid in irgrid (one job: the first stage once, feedback statistics shared) against Anserini's RM3.

    python benchmarks/feedback_grid.py --index results/cacm_anserini/index/lucene \
        --topics results/cacm_anserini/topics/anserini.parquet \
        --anserini-jar anserini-0.21.0-fatjar.jar --anserini-index DIR --anserini-topics topics.cacm.txt \
        [--out benchmarks/results/feedback-grid-cacm]

The grid: BM25 (k1 0.9, b 0.4) with Anserini's RM3 at fb_docs {5, 10} x fb_terms {10, 20} x
original_query_weight {0.3, 0.7} (8 points). Timed, each as fresh processes, wall seconds and the
peak RSS of the largest process:

* irgrid: one ``irgrid retrieve`` job with the 8 points (``bm25_lucene+rm3_anserini``), as a
  workflow chunk runs them;
* Anserini per point: one ``SearchCollection -bm25 -rm3`` per point (what re-running Pyserini's or
  Anserini's RM3 per grid point costs: a JVM and a first stage each time);
* Anserini's own grid: one ``SearchCollection`` given every value (``-rm3.fbDocs 5 10 ...``), which
  runs the points one after the other in one JVM.

The Anserini jar is pyserini 0.21.0's (``pip download --no-deps pyserini==0.21.0``, then
``pyserini/resources/jars/anserini-0.21.0-fatjar.jar`` of the wheel); its index is
``IndexCollection -collection HtmlCollection -generator DefaultLuceneDocumentGenerator
-storePositions -storeDocvectors -storeRaw -optimize`` over Anserini's cacm.tar.gz.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FB_DOCS, FB_TERMS, WEIGHTS = (5, 10), (10, 20), (0.3, 0.7)
POINTS = [{"fb_docs": d, "fb_terms": t, "original_query_weight": w} for d in FB_DOCS for t in FB_TERMS for w in WEIGHTS]


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds of ``command`` and the peak RSS (MiB) of the largest child process waited for so far."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--anserini-jar", required=True)
    parser.add_argument("--anserini-index", required=True)
    parser.add_argument("--anserini-topics", required=True)
    parser.add_argument("--out", default=None, help="write OUT.txt and OUT.json")
    args = parser.parse_args()
    from irgrid.grid import encode_point

    lines, record = [], {"points": POINTS}
    with tempfile.TemporaryDirectory() as scratch:
        order = ["k1", "b", "fb_docs", "fb_terms", "original_query_weight"]
        encoded = [encode_point({"k1": 0.9, "b": 0.4, **p}, order) for p in POINTS]
        outs = [str(Path(scratch) / f"run-{i}.parquet") for i in range(len(POINTS))]
        irgrid = [sys.executable, "-m", "irgrid", "retrieve", "--index", args.index, "--topics", args.topics,
                  "--family", "bm25_lucene+rm3_anserini", "--params", *encoded, "--out", *outs]
        record["irgrid_s"], record["irgrid_peak_mib"] = timed(irgrid)

        java = ["java", "-cp", args.anserini_jar, "io.anserini.search.SearchCollection", "-index", args.anserini_index,
                "-topics", args.anserini_topics, "-topicreader", "Cacm", "-bm25", "-rm3"]
        per_point = 0.0
        for i, p in enumerate(POINTS):
            seconds, peak = timed([*java, "-output", str(Path(scratch) / f"anserini-{i}.txt"),
                                   "-rm3.fbDocs", str(p["fb_docs"]), "-rm3.fbTerms", str(p["fb_terms"]),
                                   "-rm3.originalQueryWeight", str(p["original_query_weight"])])
            per_point += seconds
        record["anserini_per_point_s"], record["anserini_peak_mib"] = per_point, peak
        seconds, _ = timed([*java, "-output", str(Path(scratch) / "anserini-grid.txt"),
                            "-rm3.fbDocs", *map(str, FB_DOCS), "-rm3.fbTerms", *map(str, FB_TERMS),
                            "-rm3.originalQueryWeight", *map(str, WEIGHTS)])
        record["anserini_one_jvm_s"] = seconds
    lines.append(f"RM3 grid of {len(POINTS)} points (BM25 k1 0.9 b 0.4; fb_docs {FB_DOCS} x fb_terms {FB_TERMS} x "
                 f"original_query_weight {WEIGHTS}), CACM (Anserini's), 64 topics, wall seconds:")
    lines.append(f"  irgrid, one job:              {record['irgrid_s']:7.2f} s")
    lines.append(f"  Anserini, a run per point:    {record['anserini_per_point_s']:7.2f} s  "
                 f"(x{record['anserini_per_point_s'] / record['irgrid_s']:.1f} irgrid's)")
    lines.append(f"  Anserini, one JVM, its grid:  {record['anserini_one_jvm_s']:7.2f} s  "
                 f"(x{record['anserini_one_jvm_s'] / record['irgrid_s']:.1f} irgrid's)")
    lines.append(f"  peak RSS of a process: irgrid job <= {record['irgrid_peak_mib']:.0f} MiB (measured first), "
                 f"largest of all runs {record['anserini_peak_mib']:.0f} MiB")
    print("\n".join(lines))
    if args.out:
        Path(f"{args.out}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        Path(f"{args.out}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
