"""What the benchmarks share: a child process run with its process tree's peak RSS watched, the
synthetic collection made once, the machine's description and the statistics printed.

``run_child`` runs ``python SCRIPT --_child TASK RESULT``; each benchmark's own script holds its
child (scale.py's by default).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

DEFAULT_SCRATCH = HERE / ".data"


SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")}


class TreeRSS(threading.Thread):
    """Peak of the summed RSS of a process and all its descendants, sampled every ``interval`` s."""

    def __init__(self, pid: int, interval: float = 0.05):
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.root = psutil.Process(pid)
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self.halt = threading.Event()

    def run(self) -> None:
        psutil = self.psutil
        while not self.halt.is_set():
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except psutil.Error:
                break
            total = 0
            for proc in procs:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.samples += 1
            self.halt.wait(self.interval)


def run_child(task: dict, log_dir: Path, single_thread: bool, script: Path | None = None) -> dict:
    """Run ``task`` in a fresh ``python SCRIPT --_child`` (scale.py's by default), watching its process tree's RSS."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(task, handle)
        task_path = handle.name
    result_path = task_path + ".out"
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(REPO / "src"))
    if single_thread:
        env.update(SINGLE_THREAD_ENV)
    log_path = log_dir / f"{task['kind']}-{task['system']}.log"
    start = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen([sys.executable, str(script or HERE / "scale.py"), "--_child", task_path, result_path],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(REPO))
        monitor = TreeRSS(proc.pid)
        monitor.start()
        try:
            code = proc.wait()
        finally:
            monitor.halt.set()
            monitor.join()
            if proc.poll() is None:  # interrupted: end the child and its descendants
                kill_tree(proc.pid)
    wall = time.perf_counter() - start
    os.unlink(task_path)
    if code != 0:
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"child {task['kind']} {task['system']} failed (exit {code}); log {log_path}:\n{tail}")
    with open(result_path, encoding="utf-8") as handle:
        result = json.load(handle)
    os.unlink(result_path)
    result["peak_rss_bytes"] = max(monitor.peak, result["self_maxrss_bytes"])
    result["rss_samples"] = monitor.samples
    result["process_wall_s"] = wall
    return result


def kill_tree(pid: int) -> None:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = root.children(recursive=True) + [root]
    except psutil.Error:
        return
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=10)


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def index_breakdown(path: Path, max_files: int = 12) -> dict[str, int]:
    """Bytes of each entry of an index directory: a subdirectory as ``name/`` (all it holds), a file by
    name; where there are more than ``max_files`` files (tantivy's segment files) they are summed by
    suffix (``*.pos``). Read from the directory, so a new component (``positions/``) or a missing one
    (an optional forward index) shows as it is."""
    entries = sorted(Path(path).iterdir())
    files = [e for e in entries if e.is_file()]
    out = {f"{e.name}/": dir_bytes(e) for e in entries if e.is_dir()}
    if len(files) > max_files:
        for f in files:
            key = f"*{f.suffix}" if f.suffix else f.name
            out[key] = out.get(key, 0) + f.stat().st_size
    else:
        out.update({f.name: f.stat().st_size for f in files})
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def med(values):
    return statistics.median(values) if values else float("nan")


def percentile(values, q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def spread(values, fmt: str = "{:.2f}", scale: float = 1.0) -> str:
    if not values:
        return "n/a"
    values = [v * scale for v in values]
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(med(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


MIB = 2**20


def qps_with_open(run: dict) -> float:
    """Queries a second of what a fresh process takes after its imports: the open, the first query
    with its one-off costs (numba loading a kernel; timed apart as the warm-up), the other queries."""
    latencies = run["latencies"]
    return len(latencies) / (run["open_s"] + run["warmup_s"] + sum(latencies) - latencies[0])


def ensure_collection(path: Path, num_docs: int, workers: int = 2) -> Path:
    sys.path.insert(0, str(REPO / "src"))
    from irgrid.collections.synthetic import SyntheticSpec, write_synthetic_collection

    spec = SyntheticSpec(num_docs=num_docs)
    spec_path = path / "spec.json"
    if spec_path.is_file():
        existing = json.loads(spec_path.read_text())
        if existing != spec.to_dict():
            raise SystemExit(f"{path} holds another synthetic collection (num_docs={existing.get('num_docs')}); "
                             f"pass --docs {existing.get('num_docs')} or another --collection")
        return path
    if path.exists() and any(path.iterdir()):
        raise SystemExit(f"{path} exists and holds no complete synthetic collection (no spec.json); not overwriting")
    import resource

    print(f"generating {num_docs:,} synthetic documents into {path} ({workers} processes) ...", flush=True)
    start = time.perf_counter()
    write_synthetic_collection(spec, path, workers=workers)
    # a shard a process: the peak does not grow with num_docs (the pool's processes are reaped by now)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"  done in {time.perf_counter() - start:.1f} s; peak RSS of this process {own:,.0f} MiB, "
          f"of the largest generating process {worker:,.0f} MiB", flush=True)
    return path


def machine() -> str:
    import platform

    import psutil

    return (f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus, "
            f"{psutil.virtual_memory().total / 2**30:.1f} GiB RAM, Python {platform.python_version()}")


def flat_query_layout(queries: dict) -> tuple:
    """``Scorer._read_flat``'s layout of analysed queries (``analyse_queries``: qid -> terms), for a benchmark
    that reads the postings itself: ``(terms, term_offsets, query_term_offsets, placements)``, each query's
    terms one after the other, a term's df rows each, ``placements`` a term's offsets (as
    ``IndexReader.postings_into`` takes them)."""
    import numpy as np  # deferred: the parents that only run children never load numpy

    per_query = list(queries.values())
    terms = [t for query_terms in per_query for t in query_terms]
    term_offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum([t.df for t in terms], out=term_offsets[1:])
    query_term_offsets = np.zeros(len(per_query) + 1, dtype=np.int64)
    np.cumsum([len(query_terms) for query_terms in per_query], out=query_term_offsets[1:])
    placements: dict[str, list[int]] = {}
    for t, at in zip(terms, term_offsets[:-1].tolist()):
        placements.setdefault(t.term, []).append(at)
    return terms, term_offsets, query_term_offsets, placements
