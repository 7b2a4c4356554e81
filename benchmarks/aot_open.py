"""What ahead-of-time compiled kernels would give a fresh BM25 retrieval process (issue 30, item 4).

    python benchmarks/aot_open.py --index DIR --topics TOPICS.parquet [--repeats 7] [--build-dir /tmp/aot]
                                  [--target-cpu host]

(Since irgrid.aot, the package builds and loads such a module itself and its call sites go through
guarded wrappers made at import, which this script's swaps of the module attributes no longer reach:
it measures the code before irgrid.aot (d6f6562). benchmarks/open_job.py --aot-dir compares the
integrated module with the JIT kernels.)

A prototype that changes nothing under src/: it builds, with numba.pycc (pending deprecation in
numba; its warning silenced here), an extension module in ``--build-dir`` exporting the kernels a
fresh BM25 job calls on its open and first query, at the types the reader and the Scorer pass them
(the ``*_SIGNATURE`` constants below; the check compares them with the JIT dispatchers' own):

  footer               irgrid.index.pages._footer (a bucket file's Parquet footer)
  read_groups          irgrid.index.pages._read_groups (the page decoder)
  candidate_slots_into irgrid.retrieve.ranking._candidate_slots_into
  score_bm25           irgrid.retrieve.ranking.score_and_rank with the literal weighting "bm25"

(each with the @njit functions it calls compiled in). The parent then runs, in fresh children with
one thread each (OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1):

  build   the module's build (a child of its own): CPU s (the process and its compiler children),
          wall s, the file's size, the target CPU (``--target-cpu``; pycc's default, "", is a generic
          CPU)
  check   bit identity, in one child: the footer of every postings bucket file, and the whole query
          set prepared (flat postings, slots, candidates) and ranked (top-1000 of every query: docids,
          offsets, the scores' int64 bit patterns) by the JIT kernels and then by the AOT ones swapped
          in; the ``vfmadd`` instructions in the module's code and in the JIT scoring kernel's
  warm    in one process, each kernel's CPU s, JIT then AOT, over rounds of open + first query after
          the first (the JIT's kernels loaded): the compiled code's own speed, numba's setup aside
  jit     today's path: irgrid imported, topics read with pandas (neither counted, the imports printed
          apart), then ``Scorer(IndexReader(index)).prepare(topics)`` ("open") and
          ``Scorer.top(bm25, prepared, point, 1000, 0, 1)`` ("first query", scale.py's warm-up call),
          numba's cache warm
  aot     the same, with the module imported (counted apart, beside the imports) and its functions
          swapped in for the module attributes the reader and the Scorer call
  aot-bare
          aot, and Scorer's ``import_arraymath_without_blas_probe`` made a no-op: that import of
          numba's array-math registry only serves a JIT kernel's load

``--profile VARIANT`` instead runs one child of that variant under cProfile (the module built by an
earlier run in ``--build-dir``) and prints its open and first query's functions by their own CPU time.

``--repeats`` children of each run alternating (jit, aot, aot-bare, jit, ...). Each child times each
kernel's calls (CPU s, a JIT kernel's first call with its load from numba's cache), counts the
JIT dispatchers compiled or loaded (``Dispatcher._compile_for_args``) and numba's target context
refreshes (``BaseContext.refresh``, the registries' installation): both zero when no JIT kernel ran.
The parent prints CPU seconds of each step, median [min-max], the differences of the medians, and the
1-minute load average after each child.
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
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import spread  # noqa: E402  (the benchmarks' median [min-max])

MODULE = "irgrid_aot_kernels"
#: how the seconds and loads are printed (harness.spread's format)
THREE_PLACES = "{:.3f}"
BM25_POINT = {"k1": 1.2, "b": 0.75}
DEPTH = 1000
SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}
VARIANTS = ("jit", "aot", "aot-bare")
#: LLVM's floating-point flags that allow a result other than IEEE's (contract: fusing into an FMA)
FAST_MATH_FLAGS = ("fast", "contract", "reassoc", "arcp", "afn", "nnan", "ninf", "nsz")


def signatures() -> dict:
    """Each exported function's signature: the types the reader and the Scorer pass (and the kernels return)."""
    from numba import types

    def array(dtype, ndim=1, readonly=False):
        return types.Array(dtype, ndim, "C", readonly=readonly)

    i32, i64, f64 = array(types.int32), array(types.int64), array(types.float64)
    mapped_file = array(types.uint8, readonly=True)  # np.frombuffer of a read-only mmap
    f64_2d = array(types.float64, 2)
    return {
        "footer": types.Tuple((types.int64, array(types.int64, 2), i64, array(types.int64, 2)))(mapped_file),
        "read_groups": types.UniTuple(types.int64, 2)(mapped_file, i64, i64, array(types.int64, 2), i64, i64, i64,
                                                      i32, i32),
        "candidate_slots_into": i64(i32, i64, i64, types.int64, i32, i32),
        # score_and_rank's arguments after the weighting; doc_lengths and docno_rank are the reader's read-only arrays
        "score_bm25": types.Tuple((array(types.int32, 2), f64_2d, i64))(
            types.boolean, f64_2d, f64_2d, f64_2d, f64_2d, f64_2d, f64_2d, i64, i64, i32, i32,
            array(types.int32, readonly=True), i32, i32, i64, array(types.int32, readonly=True), types.int64,
            types.int64, types.int64, f64, f64, i32, i32, i64, array(types.int32, 2), f64_2d),
    }


#: score_and_rank at BM25's kernel key as a literal (its Weighting.kernel_key, "bm25@<digest of its parts>"), the
#: arguments after the weighting as the Scorer passes them; compiled from source with score_and_rank a global
#: (numba compiles a function's globals, not its imports) and the key written in
SCORE_BM25_SOURCE = """
def score_bm25(tabulated, params, term_constants, term_weights, query_constants, query_lengths, query_weights,
               term_offsets, query_term_offsets, tfs, docids, doc_lengths, slots, candidates, candidate_offsets,
               docno_rank, depth, first_query, last_query, posting_parts, document_values, candidate_ranks,
               posting_lengths, offsets, out_docids, out_scores):
    return score_and_rank({key!r}, tabulated, params, term_constants, term_weights, query_constants, query_lengths,
                          query_weights, term_offsets, query_term_offsets, tfs, docids, doc_lengths, slots, candidates,
                          candidate_offsets, docno_rank, depth, first_query, last_query, posting_parts,
                          document_values, candidate_ranks, posting_lengths, offsets, out_docids, out_scores)
"""


def score_bm25_function(score_and_rank, key: str):
    """The plain Python function of SCORE_BM25_SOURCE at kernel key ``key``, ``score_and_rank`` (the JIT
    dispatcher) its global."""
    namespace = {"score_and_rank": score_and_rank}
    exec(compile(SCORE_BM25_SOURCE.format(key=str(key)), "<score_bm25>", "exec"), namespace)  # noqa: S102  (this file's own source)
    return namespace["score_bm25"]


def build(build_dir: Path, target_cpu: str) -> dict:
    """Compile the extension module into ``build_dir``; what each export did, the CPU and wall time, the size."""
    start_cpu, start_children, start = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation warning
        from numba.pycc import CC

    import irgrid.index.pages as pages
    import irgrid.retrieve.ranking as ranking
    from irgrid.models import get_model

    kernels = {"footer": pages._footer.py_func, "read_groups": pages._read_groups.py_func,
               "candidate_slots_into": ranking._candidate_slots_into.py_func,
               # the key made here is recorded for posting_part's lookup at compile time
               "score_bm25": score_bm25_function(ranking.score_and_rank, get_model("bm25").weighting.kernel_key)}
    build_dir.mkdir(parents=True, exist_ok=True)

    def compile_module(name: str, output_dir: Path, exports: list[str]) -> str:
        cc = CC(name)
        cc.output_dir = str(output_dir)
        cc.target_cpu = target_cpu
        for export in exports:
            cc.export(export, signatures()[export])(kernels[export])
        cc.compile()
        return cc.output_file

    exported, refused = list(kernels), {}
    try:
        output_file = compile_module(MODULE, build_dir, exported)
    except Exception:  # noqa: BLE001  (a kernel pycc refuses: found one module per kernel, the rest built again)
        exported = []
        for name in kernels:
            try:
                compile_module(f"{MODULE}_{name}", build_dir / "tries", [name])
                exported.append(name)
            except Exception as error:  # noqa: BLE001
                refused[name] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        output_file = compile_module(MODULE, build_dir, exported)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    path = build_dir / output_file
    return {"exported": exported, "refused": refused, "path": str(path), "bytes": path.stat().st_size,
            "cpu_s": time.process_time() - start_cpu, "compiler_cpu_s": (children.ru_utime + children.ru_stime
                                                                          - start_children.ru_utime
                                                                          - start_children.ru_stime),
            "wall_s": time.time() - start, "target_cpu": target_cpu or "(default: generic)"}


def load_module(build_dir: Path):
    sys.path.insert(0, str(build_dir))
    import importlib
    return importlib.import_module(MODULE)


KERNELS = ("footer", "read_groups", "candidate_slots_into", "score_bm25")


def jit_kernels() -> dict:
    """The JIT kernels under the exported names (call before any swap_in): score_bm25 at BM25's key."""
    import irgrid.index.pages as pages
    import irgrid.retrieve.ranking as ranking
    from irgrid.models import get_model
    bm25_key = get_model("bm25").weighting.kernel_key
    score_and_rank = ranking.score_and_rank
    return {"footer": pages._footer, "read_groups": pages._read_groups,
            "candidate_slots_into": ranking._candidate_slots_into,
            "score_bm25": lambda *args: score_and_rank(bm25_key, *args)}


def swap_in(kernels: dict, bare: bool = False) -> tuple[dict, dict]:
    """``kernels`` (name -> function, :data:`KERNELS`) in place of the module attributes the reader and the
    Scorer call, each wrapped to count its calls and their CPU seconds: (calls, CPU s), updated as they run.
    ``bare``: Scorer's import of numba's array-math registry made a no-op too."""
    import irgrid.index.pages as pages
    import irgrid.retrieve
    import irgrid.retrieve.ranking as ranking
    from irgrid.models import get_model
    calls, cpu = dict.fromkeys(KERNELS, 0), dict.fromkeys(KERNELS, 0.0)

    def counted(name):
        function, clock = kernels[name], time.process_time

        def call(*args):
            start = clock()
            try:
                return function(*args)
            finally:
                calls[name] += 1
                cpu[name] += clock() - start
        return call

    pages._footer = counted("footer")
    pages._read_groups = counted("read_groups")
    ranking._candidate_slots_into = counted("candidate_slots_into")
    jit_score_and_rank = ranking.score_and_rank
    score = counted("score_bm25")
    bm25_key = str(get_model("bm25").weighting.kernel_key)

    def score_and_rank(weighting, *args):
        return score(*args) if weighting == bm25_key else jit_score_and_rank(weighting, *args)

    irgrid.retrieve.score_and_rank = score_and_rank
    if bare:
        irgrid.retrieve.import_arraymath_without_blas_probe = lambda: None
    return calls, cpu


def aot_kernels(aot) -> dict:
    return {name: getattr(aot, name) for name in KERNELS}


def count_numba_starts() -> dict:
    """Counters of JIT dispatchers compiled or loaded and of numba's target context refreshes."""
    from numba.core.base import BaseContext
    from numba.core.dispatcher import Dispatcher
    counts = {"dispatchers": [], "refreshes": 0}
    compile_for_args, refresh = Dispatcher._compile_for_args, BaseContext.refresh

    def counted_compile(self, *args, **kwargs):
        counts["dispatchers"].append(self.py_func.__qualname__)
        return compile_for_args(self, *args, **kwargs)

    def counted_refresh(self):
        counts["refreshes"] += 1
        return refresh(self)

    Dispatcher._compile_for_args, BaseContext.refresh = counted_compile, counted_refresh
    return counts


def child(variant: str, index: str, topics_path: str, build_dir: Path, profiled: bool = False) -> dict:
    clock = time.process_time
    start = clock()
    import pandas as pd

    import irgrid.index
    import irgrid.index.pages
    import irgrid.models
    import irgrid.retrieve
    import irgrid.retrieve.ranking  # noqa: F401
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    imported = clock()
    kernels = jit_kernels() if variant == "jit" else aot_kernels(load_module(build_dir))
    module_loaded = clock()
    calls, kernel_cpu = swap_in(kernels, variant == "aot-bare")
    counts = count_numba_starts()
    topics = pd.read_parquet(topics_path)
    model = get_model("bm25")
    point = model.check_point(BM25_POINT)
    profile = None
    if profiled:  # deferred: only --profile's child
        import cProfile
        profile = cProfile.Profile(time.process_time)  # CPU seconds, as the rest
        profile.enable()
    before = clock()
    scorer = Scorer(IndexReader(index))
    prepared = scorer.prepare(topics)
    opened = clock()
    scorer.top(model, prepared, point, DEPTH, 0, 1)
    first = clock()
    if profile is not None:
        import pstats
        profile.disable()
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    return {"imports": imported - start, "aot module import": module_loaded - imported, "open": opened - before,
            "first query": first - opened, "open + first query": first - before,
            "jit dispatchers": counts["dispatchers"], "refreshes": counts["refreshes"], "calls": calls,
            "kernel cpu": kernel_cpu, "arraymath imported": "numba.np.arraymath" in sys.modules}


def warm(index: str, topics_path: str, build_dir: Path, rounds: int = 5) -> dict:
    """Each kernel's CPU s in one process, JIT then AOT, ``rounds`` opens + first queries each (a fresh
    IndexReader and Scorer a round): its medians over the rounds after the first (the JIT's first loads)."""
    import pandas as pd

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    topics = pd.read_parquet(topics_path)
    model = get_model("bm25")
    point = model.check_point(BM25_POINT)
    jit = jit_kernels()
    medians = {}
    for label, kernels in (("jit", jit), ("aot", aot_kernels(load_module(build_dir)))):
        per_round = []
        for _ in range(rounds):
            _, cpu = swap_in(kernels)
            start = time.process_time()
            scorer = Scorer(IndexReader(index))
            scorer.top(model, scorer.prepare(topics), point, DEPTH, 0, 1)
            per_round.append({**cpu, "open + first query": time.process_time() - start})
        medians[label] = {name: statistics.median(r[name] for r in per_round[1:]) for name in per_round[0]}
    return medians


def check(index: str, topics_path: str, build_dir: Path) -> dict:
    """Bit identity of the AOT functions' outputs with the JIT kernels', on the whole query set."""
    import numpy as np
    import pandas as pd
    from numba import njit

    import irgrid.index.pages as pages
    import irgrid.retrieve.ranking as ranking
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer

    topics = pd.read_parquet(topics_path)
    model = get_model("bm25")
    point = model.check_point(BM25_POINT)
    aot = load_module(build_dir)
    jit_footer = pages._footer
    files = sorted((Path(index) / "postings").rglob("*.parquet"))
    footers_equal = all(
        all(np.array_equal(a, b) for a, b in zip(jit_footer(buffer), aot.footer(buffer)))
        for buffer in (pages.PostingsPages(path).buffer for path in files))

    def run():
        scorer = Scorer(IndexReader(index))
        prepared = scorer.prepare(topics)
        whole = scorer.top(model, prepared, point, DEPTH)
        first = scorer.top(model, prepared, point, DEPTH, 0, 1)
        arrays = {name: getattr(prepared, name) for name in ("docids", "tfs", "term_offsets", "query_term_offsets",
                                                              "global_slots", "candidates", "candidate_offsets")}
        for label, (docids, scores, offsets) in (("all queries", whole), ("first query", first)):
            arrays[f"{label} docids"], arrays[f"{label} offsets"] = docids, offsets
            arrays[f"{label} score bits"] = np.ascontiguousarray(scores).view(np.int64)
        return arrays

    jit = run()
    signatures_seen = {
        "footer": pages._footer.signatures, "read_groups": pages._read_groups.signatures,
        "candidate_slots_into": ranking._candidate_slots_into.signatures,
        "score_bm25": [sig[1:] for sig in ranking.score_and_rank.signatures]}
    expected = signatures()
    signatures_match = {name: [tuple(sig) for sig in seen] == [tuple(expected[name].args)]
                        for name, seen in signatures_seen.items()}
    # the JIT kernel's machine code: inspect_asm gives none for a cache-loaded kernel, so the same function is
    # compiled again here without the cache, at the signature the Scorer called it with
    fresh = njit(nogil=True, error_model="numpy")(ranking.score_and_rank.py_func)
    fresh.compile(ranking.score_and_rank.signatures[0])
    jit_code = "\n".join(fresh.inspect_asm().values())
    jit_ir = "\n".join(fresh.inspect_llvm().values())
    calls, _ = swap_in(aot_kernels(aot))
    ahead = run()
    disassembly = subprocess.run(["objdump", "-d", str(Path(aot.__file__))], capture_output=True, text=True).stdout
    return {"footers equal": footers_equal, "bucket files": len(files),
            "equal": {name: bool(np.array_equal(jit[name], ahead[name])) for name in jit},
            "sizes": {name: len(jit[name]) for name in jit}, "aot calls": calls,
            "jit signatures match the exported ones": signatures_match,
            "JIT score_and_rank (host CPU) instructions": instruction_counts(jit_code),
            "JIT score_and_rank LLVM IR fast-math or contract flags": sum(
                any(f" {flag} " in line for flag in FAST_MATH_FLAGS) for line in jit_ir.splitlines()),
            "AOT module instructions": instruction_counts(disassembly)}


def instruction_counts(code: str) -> dict:
    """Lines of machine code with a fused multiply-add, packed (SIMD) or scalar double divisions, 256/512-bit registers."""
    lines = code.splitlines()
    return {name: sum(any(word in line for word in words) for line in lines) for name, words in (
        ("fma", ("vfmadd", "vfmsub", "vfnmadd", "vfnmsub")), ("packed div", ("divpd",)),
        ("scalar div", ("divsd",)), ("ymm", ("%ymm",)), ("zmm", ("%zmm",)))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--build-dir", type=Path, default=Path("/tmp/aot"))
    parser.add_argument("--target-cpu", default="", help='pycc\'s target CPU ("": generic, "host": this one)')
    parser.add_argument("--profile", choices=VARIANTS, help="instead: one child of this variant under cProfile "
                        "(open + first query; the module built before), its functions by own CPU time")
    parser.add_argument("--_child", choices=(*VARIANTS, "build", "check", "warm"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child == "build":
        print(json.dumps(build(args.build_dir, args.target_cpu)))
        return
    if args._child == "check":
        print(json.dumps(check(str(args.index), str(args.topics), args.build_dir)))
        return
    if args._child == "warm":
        print(json.dumps(warm(str(args.index), str(args.topics), args.build_dir)))
        return
    if args._child:
        print(json.dumps(child(args._child, str(args.index), str(args.topics), args.build_dir, args.profile is not None)))
        return
    env = dict(os.environ, **SINGLE_THREAD_ENV)
    command = [sys.executable, __file__, "--index", str(args.index), "--topics", str(args.topics),
               "--build-dir", str(args.build_dir), "--target-cpu", args.target_cpu, "--_child"]

    def run(what: str) -> dict:
        done = subprocess.run([*command, what], env=env, check=True, capture_output=True, text=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    if args.profile:
        done = subprocess.run([*command, args.profile, "--profile", args.profile], env=env, check=True,
                              capture_output=True, text=True)
        print(done.stdout.strip().splitlines()[-1])
        print(done.stderr)
        print(f"load (1 min) {os.getloadavg()[0]:.2f}")
        return
    print(f"index {args.index}, topics {args.topics}; numba.pycc module in {args.build_dir}")
    built = run("build")
    print(f"build (load {os.getloadavg()[0]:.2f}): exported {built['exported']}, refused {built['refused'] or 'none'}")
    print(f"  target CPU {built['target_cpu']}; {built['path']}: {built['bytes']:,} bytes")
    print(f"  the module's build: CPU {built['cpu_s']:.2f} s + compiler children {built['compiler_cpu_s']:.2f} s, "
          f"wall {built['wall_s']:.2f} s (with any per-kernel tries after a refusal)")
    checked = run("check")
    print(f"check (load {os.getloadavg()[0]:.2f}): footers of {checked['bucket files']} bucket files equal: "
          f"{checked['footers equal']}; AOT kernel calls {checked['aot calls']}")
    for name, equal in checked["equal"].items():
        print(f"  {name:26s} {checked['sizes'][name]:>11,} values  identical: {equal}")
    for key in ("jit signatures match the exported ones", "JIT score_and_rank (host CPU) instructions",
                "JIT score_and_rank LLVM IR fast-math or contract flags", "AOT module instructions"):
        print(f"  {key}: {checked[key]}")
    warmed = run("warm")
    print(f"warm (one process, load {os.getloadavg()[0]:.2f}): each kernel's CPU s, median of rounds 2-5 of open + "
          "first query (fresh IndexReader + Scorer a round)")
    for name in warmed["jit"]:
        print(f"  {name:22s} jit {warmed['jit'][name]:.4f}  aot {warmed['aot'][name]:.4f}")
    results: dict[str, list[dict]] = {variant: [] for variant in VARIANTS}
    loads = []
    for _ in range(args.repeats):
        for variant in VARIANTS:
            results[variant].append(run(variant))
            loads.append(os.getloadavg()[0])
    print(f"\n{args.repeats} fresh processes each, alternating {', '.join(VARIANTS)}; CPU s, median [min-max]; "
          f"load (1 min) after each child {spread(loads, THREE_PLACES)}")
    steps = ("imports", "aot module import", "open", "first query", "open + first query")
    print(f"  {'':20s}" + "".join(f"{variant:>24s}" for variant in VARIANTS))
    for step in steps:
        print(f"  {step:20s}" + "".join(f"{spread([r[step] for r in results[v]], THREE_PLACES):>24s}" for v in VARIANTS))
    for variant in VARIANTS:
        last = results[variant][-1]
        print(f"  {variant}: JIT dispatchers called {sorted(set(last['jit dispatchers'])) or 'none'}, context refreshes "
              f"{sorted({r['refreshes'] for r in results[variant]})}, kernel calls {last['calls']}, "
              f"numba.np.arraymath imported {last['arraymath imported']}")
        print("    kernels' CPU s: " + ", ".join(
            f"{name} {spread([r['kernel cpu'][name] for r in results[variant]], THREE_PLACES)}" for name in KERNELS))
    median = {v: {s: statistics.median(r[s] for r in results[v]) for s in steps} for v in VARIANTS}
    for variant in VARIANTS[1:]:
        print(f"  {variant} - jit (medians): " + ", ".join(
            f"{step} {median[variant][step] - median['jit'][step]:+.3f}" for step in steps[2:]))
    print(f"  load per child: {' '.join(f'{load:.2f}' for load in loads)}")


if __name__ == "__main__":
    main()
