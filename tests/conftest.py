"""Fixtures shared by test modules; the plain helpers behind them are in ``common.py``.

Kinds of tests, by marker (pyproject.toml): ``slow`` runs Snakemake, whole collections or worker
pools (the workflow tests), ``mirror`` needs the public collections mirror, ``peers`` checks against
another system's or a paper's published figures, and ``hypothesis`` (added by Hypothesis' plugin)
is a property test. ``make test-fast`` runs the unit tests: neither slow nor property tests;
``make test-properties`` the property tests not marked slow, with the ``fast`` profile below (fewer
examples where a test does not set its own count); ``make test`` runs everything, as CI does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from common import REGISTRY, REPO, find_mirror, make_workdir, small_config, snakemake
from hypothesis import settings

# `pytest --hypothesis-profile fast` (make test-properties): property tests try fewer examples
# while editing; CI and make test use Hypothesis's default profile.
settings.register_profile("fast", max_examples=20)

# The tests run the JIT kernels whether or not `make setup` built the ahead-of-time module (irgrid.aot):
# some inspect the JIT dispatchers' compilations, and numba's cache warmed above must serve them.
# tests/test_aot.py builds its own module; `IRGRID_AOT=1 pytest ...` runs the suite with the environment's.
os.environ.setdefault("IRGRID_AOT", "0")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In the process starting pytest-xdist's workers (``-n``), before it starts them: numba's cache of
    irgrid's kernels filled once (numba_cache.py), so that workers and the Snakemake jobs of the tests
    load the kernels instead of each compiling them. A run without workers, or a worker, does nothing."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None) or config.option.collectonly:
        return
    # deferred: it imports irgrid's index, retrieval and evaluation, which a run without workers need not
    from numba_cache import warm_numba_cache

    warm_numba_cache()


@pytest.fixture(scope="session")
def repo() -> Path:
    """The checkout's root."""
    return REPO


@pytest.fixture(scope="session")
def registry() -> Path:
    """The repo's collection registry, config/collections.yaml."""
    return REGISTRY


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The collections mirror root holding a verified ADI; the test is skipped without one."""
    root = find_mirror()
    if root is None:
        pytest.skip("the ADI collection is not in a local mirror (../shared/collections or IRGRID_MIRROR)")
    return root


@pytest.fixture(scope="session")
def run_snakemake() -> Callable:
    """``run_snakemake(workdir, *args)``: Snakemake on the repo's Snakefile in ``workdir`` (common.snakemake)."""
    return snakemake


@pytest.fixture
def small_workdir(tmp_path: Path, mirror: Path) -> Path:
    """A work dir with the repo's config/ and the small ADI experiment's config over it (common.small_config)."""
    return make_workdir(tmp_path / "work", small_config(mirror))


@pytest.fixture(scope="session")
def default_experiments() -> dict:
    """The default config's experiments as loaded for a run (config/config.yaml and its experiment files)."""
    from irgrid.config import load_config, load_yaml

    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {name: str(REPO / path) for name, path in config["experiments"].items()}
    return load_config(config)["_experiments"]
