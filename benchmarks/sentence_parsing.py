"""Sentence-parsing benchmark: parse_document_shards at 1 and 2 workers against spaCy's plain nlp.pipe.

    python benchmarks/sentence_parsing.py [--xml /work/shared/collections/trecqa/TEST.xml] [--shards 4]
        [--repeats 3] [--json benchmarks/results/sentence-parsing.json]

The sentences are the answer candidates of a TrecQA file: the first line of every <positive> and
<negative> element is the sentence's tab-separated tokens, joined here with spaces (the data set's
own parses are ignored: everything is parsed by spaCy, nothing carried). They are written once,
in order, as --shards document shards (docno, text) under benchmarks/.data/sentence-parsing/.

Every measurement runs in a fresh child process (harness.py's runner: one BLAS thread per process),
repeats interleaved, medians quoted with [min-max]. The machine may be shared (other jobs of the same
VM, other VMs): before each measurement the script waits (up to --quiet-timeout) until other work uses
at most --quiet-cores cores for 2 s, and each line shows the CPU seconds of the measurement's own
process tree, those of other work on the machine meanwhile (/proc/stat busy time minus its own) and
the time stolen by the hypervisor: a measurement with much other work was slowed by it.

Dask and irgrid are imported before the clock starts; importing spaCy and loading the pipeline are
timed, in every case, since each worker process of a parallel run pays for them (the driver of a
parallel run does not import spaCy):

  shards-w1   parse_document_shards(docs, out, workers=1): this process, Dask's synchronous scheduler
  shards-w2   the same with workers=2: two Dask worker processes (spawned, each loading the pipeline)
  nlp.pipe    the peer: load_pipeline (import spaCy, load the same pipeline, NER excluded) and
              list(nlp.pipe(texts, batch_size=256)) in one process, nothing written; its load and
              parse times are also shown apart ("pipe only")

Rates are sentences per second of wall time of the call. Peak memory is the child's
resource.getrusage maxrss of itself plus that of its (joined) children, i.e. the driver plus the
largest worker process; the sampled peak RSS of the whole process tree (psutil) is in the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (the child runner and the report helpers are harness.py's)

DEFAULT_XML = Path("/work/shared/collections/trecqa/TEST.xml")
SCRATCH = harness.DEFAULT_SCRATCH / "sentence-parsing"
CASES = (("shards-w1", 1), ("shards-w2", 2), ("nlp.pipe", None))


def trecqa_sentences(path: Path) -> list[str]:
    """The first line (tab-separated tokens, joined with spaces) of every <positive>/<negative> element."""
    sentences, take = [], False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            stripped = line.strip()
            if take:
                sentences.append(" ".join(token for token in line.rstrip("\n").split("\t") if token))
                take = False
            elif stripped in ("<positive>", "<negative>"):
                take = True
    return sentences


def write_docs(sentences: list[str], docs_dir: Path, num_shards: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irgrid.collections.writers import DOCS_SCHEMA, shard_bounds, shard_name

    docs_dir.mkdir(parents=True, exist_ok=True)
    for old in docs_dir.glob("part-*.parquet"):
        old.unlink()
    for index, (start, stop) in enumerate(shard_bounds(len(sentences), num_shards)):
        docnos = [f"s{i:06d}" for i in range(start, stop)]
        pq.write_table(pa.table([docnos, sentences[start:stop]], schema=DOCS_SCHEMA), docs_dir / shard_name(index))


def maxrss_bytes() -> dict:
    import resource

    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {"self_maxrss_bytes": self_rss, "children_maxrss_bytes": children_rss,
            "maxrss_bytes": self_rss + children_rss}


def machine_cpu_seconds() -> dict:
    """CPU seconds of the whole machine so far, busy and stolen (Linux /proc/stat; zeros elsewhere).

    Other engineers' jobs on the same VM run in other PID namespaces: invisible to ps, visible here.
    """
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(v) for v in handle.readline().split()[1:9]]
    except (OSError, ValueError):
        return {"busy": 0.0, "steal": 0.0}
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    tick = os.sysconf("SC_CLK_TCK")
    return {"busy": (user + nice + system + irq + softirq) / tick, "steal": steal / tick}


def own_cpu_seconds() -> float:
    import resource

    return sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))


def wait_for_quiet(max_busy_cores: float, timeout: float) -> float:
    """Wait until the machine's other work stays under ``max_busy_cores`` for 2 s; returns the seconds waited."""
    start = time.monotonic()
    quiet_since = None
    before = machine_cpu_seconds()["busy"]
    while time.monotonic() - start < timeout:
        time.sleep(0.5)
        now = machine_cpu_seconds()["busy"]
        quiet = (now - before) / 0.5 <= max_busy_cores
        before = now
        quiet_since = (quiet_since or time.monotonic()) if quiet else None
        if quiet_since is not None and time.monotonic() - quiet_since >= 2.0:
            break
    return time.monotonic() - start


def child(task: dict) -> dict:
    import hashlib
    import logging
    import multiprocessing

    import dask  # noqa: F401  (imports before the clock, except spaCy's)
    import pyarrow.parquet as pq

    from irgrid.parsing.pipeline import load_pipeline
    from irgrid.sentences import parsing

    assert "spacy" not in sys.modules

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    out: dict = {}
    texts = []
    for path in sorted(Path(task["docs"]).glob("part-*.parquet")):
        texts.extend(pq.read_table(path, columns=["text"]).column("text").to_pylist())
    machine_before, own_before = machine_cpu_seconds(), own_cpu_seconds()
    start = time.perf_counter()
    if task["workers"] is None:
        nlp = load_pipeline(task["pipeline"])
        loaded = time.perf_counter()
        docs = list(nlp.pipe(texts, batch_size=256))
        end = time.perf_counter()
        out.update(load_seconds=loaded - start, pipe_seconds=end - loaded, sentences=len(docs))
    else:
        paths = parsing.parse_document_shards(task["docs"], task["out"], pipeline=task["pipeline"],
                                              workers=task["workers"])
        end = time.perf_counter()
    machine_after = machine_cpu_seconds()
    for process in multiprocessing.active_children():  # workers exiting in the background: reap them
        process.join()
    out["seconds"] = end - start
    out["cpu_seconds"] = own_cpu_seconds() - own_before
    out["other_cpu_seconds"] = max(0.0, machine_after["busy"] - machine_before["busy"] - out["cpu_seconds"])
    out["steal_seconds"] = machine_after["steal"] - machine_before["steal"]
    if task["workers"] is not None:
        digest = hashlib.sha256()
        rows = 0
        for path in paths:  # after the clock: what was written, to compare the worker counts
            table = pq.read_table(path, columns=["id", "tokens", "heads", "labels"])
            rows += table.num_rows
            digest.update(json.dumps(table.to_pydict()).encode())
        out.update(sentences=rows, digest=digest.hexdigest())
    out.update(maxrss_bytes())
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(child(task)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--xml", type=Path, default=DEFAULT_XML, help="a TrecQA file (TEST.xml, DEV.xml, TRAIN.xml)")
    parser.add_argument("--shards", type=int, default=4, help="document shards the sentences are split into")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pipeline", default="en_core_web_sm")
    parser.add_argument("--quiet-cores", type=float, default=0.3,
                        help="before each measurement, wait until other work uses at most this many cores ...")
    parser.add_argument("--quiet-timeout", type=float, default=300.0, help="... for at most this many seconds")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    sentences = trecqa_sentences(args.xml)
    work = SCRATCH / args.xml.stem.lower()
    docs_dir = work / "docs"
    write_docs(sentences, docs_dir, args.shards)
    log_dir = work / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    n = len(sentences)
    print("command: python benchmarks/sentence_parsing.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"machine: {harness.machine()}", flush=True)
    print(f"{args.xml}: {n} sentences ({sum(len(s.split()) for s in sentences):,} tokens) in {args.shards} shards; "
          f"pipeline {args.pipeline}; {args.repeats} repeats", flush=True)
    results: dict[str, list] = {}
    for r in range(args.repeats):
        for label, workers in CASES:
            task = {"kind": "parse", "system": label, "docs": str(docs_dir), "out": str(work / f"parses-{label}"),
                    "workers": workers, "pipeline": args.pipeline}
            waited = wait_for_quiet(args.quiet_cores, args.quiet_timeout)
            result = harness.run_child(task, log_dir, single_thread=True, script=Path(__file__).resolve())
            result["waited_for_quiet_seconds"] = waited
            if result["sentences"] != n:
                raise RuntimeError(f"{label}: {result['sentences']} sentences parsed, not {n}")
            result["rate"] = n / result["seconds"]
            results.setdefault(label, []).append(result)
            extra = (f" (load {result['load_seconds']:.2f} s + pipe {result['pipe_seconds']:.2f} s)"
                     if workers is None else "")
            print(f"[{r + 1}/{args.repeats}] {label:9s} {result['seconds']:.2f} s{extra}  {result['rate']:,.0f} "
                  f"sentences/s  maxrss self+children {result['maxrss_bytes'] / 2**20:,.0f} MiB "
                  f"(cpu {result['cpu_seconds']:.1f} s; other work {result['other_cpu_seconds']:.1f} cpu-s, "
                  f"steal {result['steal_seconds']:.1f} s, waited {waited:.0f} s for quiet)", flush=True)
    digests = {result["digest"] for label, _ in CASES[:2] for result in results[label]}
    if len(digests) != 1:
        raise RuntimeError("the parses differ between runs or worker counts")

    spread, med = harness.spread, harness.med
    rates = {label: [r["rate"] for r in runs] for label, runs in results.items()}
    rates["nlp.pipe, pipe only"] = [n / r["pipe_seconds"] for r in results["nlp.pipe"]]
    ratios = {
        "shards-w2 / shards-w1": [a / b for a, b in zip(rates["shards-w2"], rates["shards-w1"])],
        "shards-w1 / nlp.pipe": [a / b for a, b in zip(rates["shards-w1"], rates["nlp.pipe"])],
        "shards-w2 / nlp.pipe": [a / b for a, b in zip(rates["shards-w2"], rates["nlp.pipe"])],
        "shards-w2 / nlp.pipe, pipe only": [a / b for a, b in zip(rates["shards-w2"], rates["nlp.pipe, pipe only"])],
    }
    print("\nmedian [min-max]")
    for label, values in rates.items():
        runs = results[label.split(",")[0]]
        memory = [r["maxrss_bytes"] / 2**20 for r in runs]
        tree = [r["peak_rss_bytes"] / 2**20 for r in runs]
        print(f"  {label:20s} {spread(values, '{:,.0f}')} sentences/s  maxrss self+children "
              f"{spread(memory, '{:,.0f}')} MiB (sampled tree peak {spread(tree, '{:,.0f}')} MiB)")
    print(f"  nlp.pipe: import spaCy and load the pipeline {spread([r['load_seconds'] for r in results['nlp.pipe']])} s")
    print("ratios of rates (same repeat):")
    for name, values in ratios.items():
        print(f"  {name:32s} {spread(values)}")
    print(f"parses identical across repeats and worker counts: yes ({len(digests)} digest)")
    print(f"speed-up of 2 workers over 1: {med(ratios['shards-w2 / shards-w1']):.2f}x")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rates": rates, "ratios": ratios, "results": results, "sentences": n,
                                         "xml": str(args.xml), "shards": args.shards, "pipeline": args.pipeline,
                                         "machine": harness.machine()}, indent=1))


if __name__ == "__main__":
    main()
