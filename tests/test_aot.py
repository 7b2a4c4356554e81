"""The ahead-of-time kernel module (irgrid.aot): the guard sends a call to the module only at the exported types
(checked against numba's own typing), a stale, missing or disabled module leaves the JIT kernels in use, and a
built module's outputs are the JIT kernels' to the last bit (the slow tests, which build one)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
from test_index import build

import irgrid.index.pages as pages
import irgrid.retrieve.ranking as ranking
from irgrid.aot import loader
from irgrid.aot.build import numba_type, signature
from irgrid.aot.kernels import EXPORTS, KERNEL_SOURCES, KEYED, Arg
from irgrid.index import IndexReader
from irgrid.models import get_model
from irgrid.models.parts import WEIGHTINGS
from irgrid.models.parts.base import document_part, posting_part
from irgrid.retrieve import Scorer

WORDS = [f"w{i}" for i in range(60)]
BM25_GRID = [{"k1": k1, "b": b} for k1 in (0.5, 0.9, 1.2, 1.6, 2.0) for b in (0.0, 0.3, 0.75, 1.0)]
DIRICHLET_GRID = [{"mu": mu} for mu in (50.0, 300.0, 1000.0, 2500.0)]


@pytest.fixture(autouse=True)
def fresh_loader(monkeypatch):
    """Each test starts with no module loaded, and none found in the environment's default directory."""
    monkeypatch.setenv("IRGRID_AOT_DIR", "/nonexistent/irgrid-aot")
    monkeypatch.delenv("IRGRID_AOT", raising=False)
    loader.reset()
    yield
    loader.reset()


def random_docs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    # Zipf-like word frequencies: a few long postings lists, many short ones
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    return [(f"doc{i:04d}", " ".join(rng.choice(WORDS, size=int(rng.integers(0, 40)), p=weights / weights.sum())))
            for i in range(n)]


def random_topics(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"qid": [str(q) for q in range(n)],
                         "text": [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 6)))) for _ in range(n)]})


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    return build(random_docs(600, 7), tmp_path_factory.mktemp("aot"), "idx", num_shards=2)


# the guard, against numba's typing ---------------------------------------------------------------------------------

def candidate_arrays():
    """Arrays of every kind the guard must tell apart: dtypes, byte orders, ndims, layouts, flags, subclasses."""
    base = np.arange(24, dtype=np.int64)
    read_only = np.arange(6, dtype=np.int32)
    read_only.flags.writeable = False
    misaligned = np.frombuffer(np.zeros(8 * 5 + 1, np.uint8).tobytes()[1:], dtype=np.int64)  # read-only, off by one
    yield from [base, base.astype(np.int32), base.astype(np.float64), base.astype(np.uint8), base.astype(">i8"),
                base[::2], base.reshape(4, 6), base.reshape(4, 6).T, base.reshape(4, 6)[:, :3],
                base.astype(np.float64).reshape(4, 6), np.zeros((0, 0)), np.zeros(0, np.int32), read_only,
                misaligned, misaligned.copy(), np.zeros(5, np.uint8), base.view(np.ndarray)[:0]]


def test_the_guard_accepts_exactly_the_arrays_numba_types_as_the_exported_type():
    """An array passes an exported argument's check exactly when numba's typeof gives the declared type (an
    argument the kernel only reads also takes a writeable array: the same code reads it)."""
    specs = {arg for export in EXPORTS.values() for arg in export.args if arg.kind == "array"}
    checked = 0
    for spec in specs:
        declared = numba_type(spec)
        for array in candidate_arrays():
            try:
                typed = numba.typeof(array)
            except numba.core.errors.NumbaValueError:  # a byte order numba refuses: the JIT raises
                typed = None
            expected = typed == declared or (not spec.writes and typed == declared.copy(readonly=False))
            assert loader.arguments_match((array,), (spec,)) == expected, (spec, array.dtype, array.flags)
            checked += expected
    assert checked >= 4  # the right arrays were among them


def test_the_guard_takes_int64_and_bool_scalars_only():
    assert loader.arguments_match((3, np.int64(-2), True, np.bool_(False)), (Arg("int"), Arg("int"), Arg("bool"),
                                                                            Arg("bool")))
    for value in (3.0, np.int32(3), 2**63, -(2**63) - 1, "3", None, True):
        assert not loader.arguments_match((value,), (Arg("int"),)), value
    for value in (1, 0.0, None, np.int64(1)):
        assert not loader.arguments_match((value,), (Arg("bool"),)), value
    assert not loader.arguments_match((3,), (Arg("int"), Arg("int")))  # a missing argument
    assert not loader.arguments_match(([1, 2],), (Arg("array", np.dtype(np.int64)),))  # a list


def test_the_exported_signatures_are_the_jit_dispatchers_after_a_retrieval(index_dir, monkeypatch):
    """The types the reader and the Scorer pass are the exported ones: each JIT dispatcher, after a BM25 and a
    Dirichlet retrieval with the JIT kernels, compiled for exactly the exported signature."""
    monkeypatch.setenv("IRGRID_AOT", "0")
    scorer = Scorer(IndexReader(index_dir))
    prepared = scorer.prepare(random_topics(10, 1))
    for family, point in (("bm25", BM25_GRID[0]), ("ql_dirichlet", DIRICHLET_GRID[0])):
        scorer.top(get_model(family), prepared, point, 20)
    for kernel, export in EXPORTS.items():
        dispatcher = getattr(__import__(export.module, fromlist=["_"]), export.attribute)
        seen = {tuple(sig[1:] if kernel in KEYED else sig) for sig in dispatcher.signatures}
        assert tuple(signature(kernel).args) in seen, kernel


# routing, with stand-in module functions -----------------------------------------------------------------------------

def slot_inputs():
    """Two queries' postings (docids, term offsets, query term offsets) at the types candidate_slots is exported at."""
    return (np.array([0, 3, 5, 3, 4, 9, 1, 5], np.int32), np.array([0, 3, 6, 8], np.int64),
            np.array([0, 2, 3], np.int64))


def strided_copy(values: np.ndarray) -> np.ndarray:
    """The same values as a view with a stride of two: not C-contiguous, which the module's functions do not check."""
    wide = np.zeros(2 * len(values), values.dtype)
    wide[::2] = values
    return wide[::2]


def counting(calls: list, name: str, function):
    def call(*args):
        calls.append(name)
        return function(*args)
    return call


def test_a_call_at_the_exported_types_goes_to_the_module_and_any_other_to_the_jit(monkeypatch):
    """With a stand-in for the module's candidate_slots_into: right arguments reach it; a wrong dtype, a strided
    view or a read-only output go to the JIT kernel, whose answer is the one of the same data made contiguous."""
    calls = []
    monkeypatch.setattr(loader, "_functions", {
        "candidate_slots_into": counting(calls, "aot", ranking._candidate_slots_into.py_func)})
    docids, term_offsets, query_term_offsets = slot_inputs()
    right = ranking.candidate_slots(docids, term_offsets, query_term_offsets, 10)
    assert calls == ["aot"]
    for wrong in (docids.astype(np.int64), strided_copy(docids)):
        got = ranking.candidate_slots(wrong, term_offsets, query_term_offsets, 10)
        assert calls == ["aot"], wrong.dtype
        assert all(np.array_equal(a, b) for a, b in zip(got, right))
    with pytest.raises(numba.core.errors.TypingError):  # the JIT's answer to a byte order it does not type
        ranking.candidate_slots(docids.astype(">i4"), term_offsets, query_term_offsets, 10)
    assert calls == ["aot"]
    assert ranking.aot_candidate_slots_into(docids, term_offsets.astype(np.int32), query_term_offsets, 10,
                                            np.zeros(8, np.int32), np.zeros(8, np.int32)) is not None
    assert calls == ["aot"]


def test_score_and_rank_goes_to_the_module_only_at_a_key_it_was_built_for(monkeypatch, index_dir):
    bm25, dirichlet = get_model("bm25"), get_model("ql_dirichlet")
    calls = []
    monkeypatch.setattr(loader, "_functions", {
        ("score_and_rank", bm25.weighting.kernel_key): counting(
            calls, "aot", lambda *args: ranking.score_and_rank(bm25.weighting.kernel_key, *args))})
    scorer = Scorer(IndexReader(index_dir))
    prepared = scorer.prepare(random_topics(10, 1))
    scorer.top(dirichlet, prepared, DIRICHLET_GRID[0], 20)
    assert calls == []
    scorer.top(bm25, prepared, BM25_GRID[0], 20)
    assert calls == ["aot"]


# finding the module ------------------------------------------------------------------------------------------------

def fake_module_dir(directory: Path, digest: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / loader.module_file_name()).write_bytes(b"not a module")
    (directory / loader.MANIFEST_NAME).write_text(json.dumps(
        {"module": loader.module_file_name(), "digest": digest, "exports": {}, "keyed": {}}))
    return directory


def test_a_stale_missing_unloadable_or_disabled_module_leaves_the_jit(tmp_path, monkeypatch, caplog):
    caplog.set_level("DEBUG", logger="irgrid.aot.loader")
    assert loader.load_functions(tmp_path / "none") == {}
    assert loader.load_functions(fake_module_dir(tmp_path / "stale", "0" * 64)) == {}
    assert "stale" in caplog.text
    # the digest current: the import fails (not an extension module), the JIT stays
    assert loader.load_functions(fake_module_dir(tmp_path / "broken", loader.current_digest(loader.kernel_keys()))) == {}
    assert "did not load" in caplog.text
    monkeypatch.setenv("IRGRID_AOT", "0")
    assert loader.load_functions(tmp_path / "none") == {}
    assert "disabled" in caplog.text


def test_the_digest_changes_with_a_kernel_source_or_a_kernel_key(monkeypatch, tmp_path):
    keys = loader.kernel_keys()
    before = loader.current_digest(keys)
    assert loader.current_digest(keys) == before
    assert loader.current_digest({**keys, "bm25": "bm25@0"}) != before
    sources = loader.source_files()
    changed = tmp_path / "pages.py"
    changed.write_bytes(sources[0].read_bytes() + b"\n")
    package = Path(loader.__file__).resolve().parent.parent
    copied = tmp_path / "irgrid"
    for path in sources:
        target = copied / path.relative_to(package)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    monkeypatch.setattr(loader, "__file__", str(copied / "aot" / "loader.py"))
    assert loader.current_digest(keys) == before  # the same files elsewhere: the same digest
    (copied / "index" / "thrift.py").write_bytes(b"# changed\n" + (copied / "index" / "thrift.py").read_bytes())
    assert loader.current_digest(keys) != before


def njit_modules(function, seen: set) -> None:
    """The modules of the @njit functions ``function`` calls, transitively (its globals that are dispatchers or
    numba overload stubs, and each weighting's parts for posting_part / document_part)."""
    code = function.__code__
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= set(const.co_names)
    for name in names:
        value = function.__globals__.get(name)
        if isinstance(value, numba.core.registry.CPUDispatcher):
            if value.py_func not in seen:
                seen.add(value.py_func)
                njit_modules(value.py_func, seen)
        elif value is posting_part or value is document_part:
            for weighting in WEIGHTINGS.values():
                for part in (weighting.posting, weighting.document):
                    if part is not None and part.py_func not in seen:
                        seen.add(part.py_func)
                        njit_modules(part.py_func, seen)


def test_the_digest_covers_every_module_the_exported_kernels_compile():
    seen: set = set()
    for export in EXPORTS.values():
        dispatcher = getattr(__import__(export.module, fromlist=["_"]), export.attribute)
        seen.add(dispatcher.py_func)
        njit_modules(dispatcher.py_func, seen)
    files = {Path(function.__code__.co_filename).resolve() for function in seen}
    assert len(files) >= 5  # pages, thrift, ranking, parts' base and the weightings' own
    assert files <= set(loader.source_files()), files - set(loader.source_files())
    assert "models/parts/*.py" in KERNEL_SOURCES


# a built module (slow: a build takes several seconds) -------------------------------------------------------------

@pytest.fixture(scope="module")
def built_module(tmp_path_factory) -> Path:
    from irgrid.aot.build import build as build_module
    directory = tmp_path_factory.mktemp("aot-module")
    manifest = build_module(directory)
    assert manifest["refused"] == {}
    return directory


def outputs(index_dir: Path, family: str, grid: list[dict], threads: int = 1) -> dict[str, np.ndarray]:
    """Every output of the guarded kernels: bucket footers, the prepared set's postings, slots and candidates, the
    top of every query at one point and at every point of a grid (docids, offsets, scores' bits)."""
    found = {}
    for i, path in enumerate(sorted((index_dir / "postings").rglob("*.parquet"))):
        status, schema, rows, bounds = pages.aot_footer(pages.PostingsPages(path).buffer)
        found.update({f"footer {i} status": np.array([status]), f"footer {i} schema": schema,
                      f"footer {i} rows": rows, f"footer {i} bounds": bounds})
    scorer = Scorer(IndexReader(index_dir), threads=threads)
    prepared = scorer.prepare(random_topics(40, 3))
    for name in ("docids", "tfs", "term_offsets", "query_term_offsets", "global_slots", "candidates",
                 "candidate_offsets"):
        found[name] = np.asarray(getattr(prepared, name))
    model = get_model(family)
    rankings = [("one point", scorer.top(model, prepared, grid[2], 25))]
    rankings += [(f"grid {j}", top) for j, top in enumerate(scorer.top_points(model, prepared, grid, 25))]
    for label, (docids, scores, offsets) in rankings:
        found[f"{label} docids"], found[f"{label} offsets"] = docids, offsets
        found[f"{label} score bits"] = np.ascontiguousarray(scores).view(np.int64)
    return found


def counted_module(monkeypatch) -> list:
    """The loaded module's functions, each counting its calls (names in the returned list)."""
    calls: list = []
    functions = loader.functions()
    monkeypatch.setattr(loader, "_functions", {
        kernel: counting(calls, kernel if isinstance(kernel, str) else kernel[0], function)
        for kernel, function in functions.items()})
    return calls


@pytest.mark.slow
@pytest.mark.parametrize("family, grid", [("bm25", BM25_GRID), ("ql_dirichlet", DIRICHLET_GRID)])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_module_gives_the_jits_outputs_to_the_bit(built_module, index_dir, monkeypatch, family, grid, threads):
    monkeypatch.setenv("IRGRID_AOT", "0")
    jit = outputs(index_dir, family, grid, threads)
    monkeypatch.setenv("IRGRID_AOT", "1")
    monkeypatch.setenv("IRGRID_AOT_DIR", str(built_module))
    loader.reset()
    calls = counted_module(monkeypatch)
    ahead = outputs(index_dir, family, grid, threads)
    # Dirichlet's parts shared by a block of points too (no JIT kernel at all: numba's compiler never starts)
    dirichlet_parts = {"tabulated_posting_parts", "document_value_table", "candidate_document_values"}
    assert set(calls) == {"footer", "read_groups", "candidate_slots_into", "score_and_rank"} | (
        dirichlet_parts if family == "ql_dirichlet" else set())
    # every kernel call went to the module: one a thread for the point, and for each block of the grid (a block of
    # BM25's 8 points, or Dirichlet's points at one mu)
    blocks = -(-len(grid) // 8) if family == "bm25" else len(grid)
    assert calls.count("score_and_rank") == threads * (1 + blocks)
    assert jit.keys() == ahead.keys()
    for name in jit:
        assert jit[name].dtype == ahead[name].dtype and np.array_equal(jit[name], ahead[name]), name


@pytest.mark.slow
def test_a_built_module_not_fresh_or_disabled_is_not_used(built_module, index_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("IRGRID_AOT_DIR", str(built_module))
    assert set(loader.load_functions()) >= {"footer", "read_groups", "candidate_slots_into",
                                            ("score_and_rank", get_model("bm25").weighting.kernel_key),
                                            ("score_and_rank", get_model("ql_dirichlet").weighting.kernel_key)}
    monkeypatch.setenv("IRGRID_AOT", "0")
    assert loader.load_functions() == {}
    monkeypatch.setenv("IRGRID_AOT", "1")
    stale = tmp_path / "stale"
    stale.mkdir()
    manifest = json.loads((built_module / loader.MANIFEST_NAME).read_text())
    (stale / manifest["module"]).write_bytes((built_module / manifest["module"]).read_bytes())
    (stale / loader.MANIFEST_NAME).write_text(json.dumps({**manifest, "digest": "f" * 64}))
    assert loader.load_functions(stale) == {}


@pytest.mark.slow
def test_wrong_arguments_take_the_jit_path_and_its_right_answer(built_module, index_dir, monkeypatch):
    """With the real module loaded: a wrong dtype or a strided view goes to the JIT (none reaches the module,
    which would crash or answer wrongly) and gives the right answer."""
    monkeypatch.setenv("IRGRID_AOT_DIR", str(built_module))
    calls = counted_module(monkeypatch)
    docids, term_offsets, query_term_offsets = slot_inputs()
    right = ranking.candidate_slots(docids, term_offsets, query_term_offsets, 10)
    assert calls == ["candidate_slots_into"]
    for wrong_docids, wrong_offsets in ((docids.astype(np.int64), term_offsets), (strided_copy(docids), term_offsets),
                                        (docids, term_offsets.astype(np.int32)), (docids, term_offsets.astype(float))):
        got = ranking.candidate_slots(wrong_docids, wrong_offsets, query_term_offsets, 10)
        assert all(np.array_equal(a, b) for a, b in zip(got, right))
    assert calls == ["candidate_slots_into"]
    path = sorted((index_dir / "postings").rglob("*.parquet"))[0]
    buffer = pages.PostingsPages(path).buffer  # its footer read by the module
    right_footer = pages.aot_footer(buffer)
    # a writeable copy: a parameter the kernel only reads takes it
    assert all(np.array_equal(a, b) for a, b in zip(pages.aot_footer(buffer.copy()), right_footer))
    assert calls.count("footer") == 3
    strided = np.repeat(buffer, 2)[::2]
    assert all(np.array_equal(a, b) for a, b in zip(pages.aot_footer(strided), right_footer))
    assert calls.count("footer") == 3


# the command ---------------------------------------------------------------------------------------------------------

def test_a_failed_build_says_in_one_line_that_the_jit_kernels_are_used(monkeypatch, tmp_path, capsys):
    import irgrid.aot.build as aot_build
    from irgrid.cli import main

    def no_compiler(directory, target_cpu):
        raise RuntimeError("Attempted to compile AOT function without the compiler\nmore")
    monkeypatch.setattr(aot_build, "build", no_compiler)
    assert main(["aot", "build", "--directory", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "without the compiler" in err and "the JIT kernels are used" in err


@pytest.mark.slow
def test_the_command_leaves_a_fresh_module_alone(built_module, capsys):
    from irgrid.cli import main
    before = (built_module / loader.MANIFEST_NAME).stat().st_mtime_ns
    assert main(["aot", "build", "--directory", str(built_module)]) == 0
    assert "fresh" in capsys.readouterr().out
    assert (built_module / loader.MANIFEST_NAME).stat().st_mtime_ns == before


@pytest.mark.slow
def test_a_kernel_numba_refuses_is_left_to_the_jit(tmp_path, monkeypatch):
    """A kernel that does not compile at its exported types is left out, the manifest says why, the rest is
    built and loaded, and the refused kernel's calls go to the JIT."""
    import irgrid.aot.build as aot_build

    def refused(buf):
        return buf.no_such_attribute  # no typing for it: numba refuses

    real = aot_build.python_functions()
    monkeypatch.setattr(aot_build, "python_functions", lambda: {
        "candidate_slots_into": real["candidate_slots_into"], "footer": ("footer", refused)})
    manifest = aot_build.build(tmp_path)
    assert list(manifest["refused"]) == ["footer"] and "TypingError" in manifest["refused"]["footer"]
    assert manifest["exports"] == {"candidate_slots_into": "candidate_slots_into"}
    monkeypatch.setenv("IRGRID_AOT_DIR", str(tmp_path))
    calls = counted_module(monkeypatch)
    assert set(loader.functions()) == {"candidate_slots_into"}
    docids = np.array([0, 3, 5, 3, 4, 9, 1, 5], np.int32)
    ranking.candidate_slots(docids, np.array([0, 3, 6, 8], np.int64), np.array([0, 2, 3], np.int64), 10)
    assert calls == ["candidate_slots_into"]
