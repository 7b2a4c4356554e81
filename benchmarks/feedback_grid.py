"""An RM3 grid in irgrid (one job: the first stage once, feedback statistics shared) against Pyserini's
RM3 rerun per grid point, on the same documents and topics, in one run.

    python benchmarks/feedback_grid.py --collection cacm_anserini --queryset anserini \
        --pyserini-python /path/to/venv/bin/python [--out benchmarks/results/feedback-grid-cacm]
    python benchmarks/feedback_grid.py --synthetic-docs 200000 --pyserini-python ... [--out ...]

Pyserini (``pip install pyserini==0.21.0 faiss-cpu torch``, a JDK 11+) lives in a virtual
environment of its own, given by ``--pyserini-python``: it pins versions irgrid's own environment
need not share. The documents are irgrid's (a registry collection's shards from the mirror, or the
synthetic collection of ``benchmarks/scale.py``), given to Pyserini as a JsonCollection; each engine
analyses them its own way (irgrid: the config's ``lucene`` analyzer, Lucene's English analysis;
Pyserini: its DefaultEnglishAnalyzer), so the two runs are alike, not equal.

The grid: BM25 (k1 0.9, b 0.4, Anserini's CACM settings) with Anserini's RM3 at fb_docs {5, 10, 20}
x fb_terms {10, 20} x original_query_weight {0.3, 0.5, 0.7}: the baselines experiment's feedback
grid, 18 points. Timed as fresh processes, wall and CPU seconds (children's rusage), each the
median of ``--repeats``:

* irgrid, one point, and the grid in one ``irgrid retrieve`` job (``--family``: by default
  ``bm25_lucene+rm3_anserini``, Lucene's BM25 to its float arithmetic; ``bm25+rm3_anserini``, the
  textbook BM25), as a workflow chunk runs it;
* Pyserini, one point (``LuceneSearcher`` + ``set_bm25`` + ``set_rm3`` + ``batch_search``, a JVM
  each); the grid as a researcher reruns it, a process per point; and the grid in one process
  (one JVM and searcher, ``set_rm3`` before each point's ``batch_search``).

Printed: the seconds, grid / one point for each engine, Pyserini's grid over irgrid's, and MAP at
Anserini's default point (10 documents, 10 terms, 0.5) for both, through ir-measures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
POINTS = [{"fb_docs": d, "fb_terms": t, "original_query_weight": w}
          for d in (5, 10, 20) for t in (10, 20) for w in (0.3, 0.5, 0.7)]
BM25 = {"k1": 0.9, "b": 0.4}
DEFAULT_POINT = {"fb_docs": 10, "fb_terms": 10, "original_query_weight": 0.5}
DEPTH = 1000

# One Pyserini process: every point given on the command line, each run written as TREC.
PYSERINI_SCRIPT = """
import json, sys
from pyserini.search.lucene import LuceneSearcher
index, topics, bm25, depth = sys.argv[1], json.load(open(sys.argv[2])), json.loads(sys.argv[3]), int(sys.argv[4])
points, outs = json.loads(sys.argv[5]), sys.argv[6:]
searcher = LuceneSearcher(index)
searcher.set_bm25(bm25["k1"], bm25["b"])
for point, out in zip(points, outs):
    searcher.set_rm3(fb_terms=point["fb_terms"], fb_docs=point["fb_docs"],
                     original_query_weight=point["original_query_weight"])
    hits = searcher.batch_search(topics["text"], topics["qid"], k=depth, threads=1)
    with open(out, "w") as f:
        for qid in topics["qid"]:
            for rank, hit in enumerate(hits[qid], 1):
                f.write(f"{qid} Q0 {hit.docid} {rank} {hit.score:.6f} pyserini\\n")
"""


def timed(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its children included) of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def prepare_inputs(args, data: Path) -> tuple[Path, Path, Path, Path]:
    """The documents (irgrid shards), the irgrid index with its forward index, the topics and qrels."""
    sys.path.insert(0, str(REPO / "src"))
    from irgrid.analysis import Analyzer
    from irgrid.config import load_yaml
    from irgrid.index import build_index
    from irgrid.index.forward import build_forward_index, forward_index_dir

    docs, index = data / "docs", data / "index" / "lucene"
    topics, qrels = data / "topics.parquet", data / "qrels.parquet"
    if args.synthetic_docs:
        sys.path.insert(0, str(HERE))
        from harness import ensure_collection

        collection = ensure_collection(data / "synthetic", args.synthetic_docs)
        docs, topics, qrels = collection / "docs", collection / "topics.parquet", collection / "qrels.parquet"
    elif not docs.is_dir():
        from irgrid.collections import load_registry, resolve_files, write_document_shards, write_qrels, write_topics

        spec = load_registry(REPO / "config" / "collections.yaml")[args.collection]
        files = resolve_files(spec, download=False)
        write_document_shards(spec, files, docs, num_shards=2)
        write_topics(spec, files, args.queryset, topics)
        write_qrels(spec, files, qrels)
    if not (index / "stats.json").is_file():
        analyzer = Analyzer.from_dict(load_yaml(REPO / "config" / "config.yaml")["analyzers"]["lucene"]).to_dict()
        build_index(docs, index, analyzer, num_buckets=None, scheduler=None, progress=False, num_workers=2)
    if not forward_index_dir(index).is_dir():
        build_forward_index(index, forward_index_dir(index), workers=2)
    return docs, index, topics, qrels


def pyserini_index(python: str, docs: Path, data: Path) -> Path:
    """A Lucene index of the shards' documents with document vectors (RM3 reads them), built once."""
    import pyarrow.parquet as pq

    out = data / "lucene"
    if (out / "segments_1").exists() or any(out.glob("segments_*")):
        return out
    jsonl = data / "jsonl"
    jsonl.mkdir(parents=True, exist_ok=True)
    with open(jsonl / "docs.jsonl", "w", encoding="utf-8") as f:
        for shard in sorted(docs.glob("*.parquet")):
            table = pq.read_table(shard, columns=["docno", "text"])
            for docno, text in zip(table.column("docno").to_pylist(), table.column("text").to_pylist()):
                f.write(json.dumps({"id": docno, "contents": text}) + "\n")
    subprocess.run([python, "-m", "pyserini.index.lucene", "--collection", "JsonCollection", "--input", str(jsonl),
                    "--index", str(out), "--generator", "DefaultLuceneDocumentGenerator", "--threads", "2",
                    "--storePositions", "--storeDocvectors", "--storeRaw"], check=True, stdout=subprocess.DEVNULL)
    return out


def mean_ap(run_files: list[Path], qrels: Path) -> float:
    import ir_measures
    import pyarrow.parquet as pq

    judged = pq.read_table(qrels).to_pandas()
    qrels_list = [ir_measures.Qrel(str(q), str(d), int(r)) for q, d, r in
                  zip(judged["qid"], judged["docno"], judged["relevance"])]
    run = []
    for path in run_files:
        if path.suffix == ".parquet":
            table = pq.read_table(path).to_pandas()
            run += [ir_measures.ScoredDoc(str(q), str(d), float(s)) for q, d, s in
                    zip(table["qid"], table["docno"], table["score"])]
        else:
            for line in path.read_text().splitlines():
                q, _, d, _, s, _ = line.split()
                run.append(ir_measures.ScoredDoc(q, d, float(s)))
    return ir_measures.calc_aggregate([ir_measures.AP], qrels_list, run)[ir_measures.AP]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", default="cacm_anserini")
    parser.add_argument("--queryset", default="anserini")
    parser.add_argument("--synthetic-docs", type=int, default=None)
    parser.add_argument("--pyserini-python", required=True)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--family", default="bm25_lucene+rm3_anserini", help="irgrid's family (BM25 with RM3)")
    parser.add_argument("--queries", type=int, default=None, help="the first N topics only (Pyserini's RM3 costs "
                        "minutes a point for the synthetic collection's 1,000 queries at 200,000 documents)")
    parser.add_argument("--data", type=Path, default=HERE / ".data")
    parser.add_argument("--out", default=None, help="write OUT.txt and OUT.json")
    args = parser.parse_args()
    name = f"synthetic-{args.synthetic_docs}" if args.synthetic_docs else args.collection
    data = args.data / f"feedback-{name}"
    data.mkdir(parents=True, exist_ok=True)
    print(f"  [{time.strftime('%H:%M:%S')}] preparing the documents and irgrid's index", file=sys.stderr, flush=True)
    docs, index, topics, qrels = prepare_inputs(args, data)
    print(f"  [{time.strftime('%H:%M:%S')}] Pyserini's index", file=sys.stderr, flush=True)
    lucene = pyserini_index(args.pyserini_python, docs, data)

    import pyarrow.parquet as pq

    from irgrid.grid import encode_point

    table = pq.read_table(topics).to_pandas()
    if args.queries:
        table = table.head(args.queries)
        first = data / f"topics-first-{args.queries}.parquet"
        pq.write_table(pq.read_table(topics).slice(0, args.queries), first)
        topics = first
    topics_json = data / "topics.json"
    topics_json.write_text(json.dumps({"qid": [str(q) for q in table["qid"]], "text": list(table["text"])}))
    order = ["k1", "b", "fb_docs", "fb_terms", "original_query_weight"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    runs = data / "runs"
    runs.mkdir(exist_ok=True)

    def irgrid_job(points: list[dict], tag: str) -> tuple[float, float, list[Path]]:
        outs = [runs / f"irgrid-{tag}-{i}.parquet" for i in range(len(points))]
        encoded = [encode_point({**BM25, **p}, order) for p in points]
        command = [sys.executable, "-m", "irgrid", "retrieve", "--index", str(index), "--topics", str(topics),
                   "--family", args.family, "--params", *encoded, "--out", *map(str, outs)]
        wall, cpu = timed(command, env)
        return wall, cpu, outs

    def pyserini_job(points: list[dict], tag: str) -> tuple[float, float, list[Path]]:
        outs = [runs / f"pyserini-{tag}-{i}.txt" for i in range(len(points))]
        command = [args.pyserini_python, "-c", PYSERINI_SCRIPT, str(lucene), str(topics_json), json.dumps(BM25),
                   str(DEPTH), json.dumps(points), *map(str, outs)]
        wall, cpu = timed(command)
        return wall, cpu, outs

    record: dict = {"collection": name, "documents": json.loads((index / "stats.json").read_text())["num_docs"],
                    "queries": len(table), "points": len(POINTS), "bm25": BM25, "irgrid_family": args.family,
                    "loadavg_1min_start": os.getloadavg()[0]}
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in ("irgrid_one", "irgrid_grid", "pyserini_one",
                                                                     "pyserini_grid", "pyserini_grid_one_process")}
    irgrid_default = pyserini_default = None
    def progress(label: str, wall: float, cpu: float) -> None:
        # as each timing lands (stderr), so that a run stopped part way still shows what it measured
        print(f"  [{time.strftime('%H:%M:%S')}] {label}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
              f"load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)

    for _ in range(args.repeats):
        wall, cpu, outs = irgrid_job([DEFAULT_POINT], "one")
        progress("irgrid, one point", wall, cpu)
        samples["irgrid_one"].append((wall, cpu))
        irgrid_default = outs[0]
        samples["irgrid_grid"].append(irgrid_job(POINTS, "grid")[:2])
        progress("irgrid, the grid", *samples["irgrid_grid"][-1])
        wall, cpu, outs = pyserini_job([DEFAULT_POINT], "one")
        progress("Pyserini, one point", wall, cpu)
        samples["pyserini_one"].append((wall, cpu))
        pyserini_default = outs[0]
        # the one-process grid before the per-point one, the longest, so a run stopped part way has it
        samples["pyserini_grid_one_process"].append(pyserini_job(POINTS, "grid-one-process")[:2])
        progress("Pyserini, the grid in one process", *samples["pyserini_grid_one_process"][-1])
        per_point = []
        for i, point in enumerate(POINTS):
            per_point.append(pyserini_job([point], f"grid-{i}")[:2])
            progress(f"Pyserini, grid point {i + 1}/{len(POINTS)} (a process)", *per_point[-1])
        samples["pyserini_grid"].append((sum(w for w, _ in per_point), sum(c for _, c in per_point)))
    for key, values in samples.items():
        record[f"{key}_wall_s"] = statistics.median(w for w, _ in values)
        record[f"{key}_cpu_s"] = statistics.median(c for _, c in values)
    record["irgrid_map_default"] = mean_ap([irgrid_default], qrels)
    record["pyserini_map_default"] = mean_ap([pyserini_default], qrels)
    record["loadavg_1min_end"] = os.getloadavg()[0]
    record["repeats"] = args.repeats

    def line(label: str, key: str) -> str:
        return f"  {label:<40} {record[key + '_wall_s']:8.2f} s wall {record[key + '_cpu_s']:8.2f} s CPU"

    lines = [f"RM3 grid, {name}, {len(table)} queries (irgrid family {args.family}): BM25 k1 {BM25['k1']} "
             f"b {BM25['b']} with Anserini's RM3 at "
             f"fb_docs {{5, 10, 20}} x fb_terms {{10, 20}} x original_query_weight {{0.3, 0.5, 0.7}} "
             f"({len(POINTS)} points), median of {args.repeats}",
             line("irgrid, one point (a job)", "irgrid_one"),
             line("irgrid, the grid (one job)", "irgrid_grid"),
             line("Pyserini, one point (a process)", "pyserini_one"),
             line("Pyserini, the grid (a process a point)", "pyserini_grid"),
             line("Pyserini, the grid (one process)", "pyserini_grid_one_process")]
    for unit in ("wall", "cpu"):
        irgrid_ratio = record[f"irgrid_grid_{unit}_s"] / record[f"irgrid_one_{unit}_s"]
        pyserini_ratio = record[f"pyserini_grid_{unit}_s"] / record[f"pyserini_one_{unit}_s"]
        versus = record[f"pyserini_grid_{unit}_s"] / record[f"irgrid_grid_{unit}_s"]
        one_process = record[f"pyserini_grid_one_process_{unit}_s"] / record[f"irgrid_grid_{unit}_s"]
        record[f"ratio_{unit}"] = {"irgrid_grid_over_one": irgrid_ratio, "pyserini_grid_over_one": pyserini_ratio,
                                   "pyserini_grid_over_irgrid_grid": versus,
                                   "pyserini_one_process_grid_over_irgrid_grid": one_process}
        lines.append(f"  {unit}: grid / one point: irgrid {irgrid_ratio:.2f}, Pyserini {pyserini_ratio:.2f}; "
                     f"Pyserini's grid / irgrid's: {versus:.2f} (a process a point), {one_process:.2f} (one process)")
    lines.append(f"  MAP at fb_docs 10, fb_terms 10, weight 0.5: irgrid {record['irgrid_map_default']:.4f}, "
                 f"Pyserini {record['pyserini_map_default']:.4f}")
    lines.append(f"  load average (1 min) at start {record['loadavg_1min_start']:.2f}, "
                 f"at end {record['loadavg_1min_end']:.2f}")
    print("\n".join(lines))
    if args.out:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        record.update(commit=commit, date=time.strftime("%Y-%m-%d"))
        Path(f"{args.out}.txt").write_text("\n".join(lines) + f"\n(commit {commit})\n", encoding="utf-8")
        Path(f"{args.out}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
