"""Fixtures shared by test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def default_experiments() -> dict:
    """The default config's experiments as loaded for a run (config/config.yaml and its experiment files)."""
    from irgrid.config import load_config, load_yaml

    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {name: str(REPO / path) for name, path in config["experiments"].items()}
    return load_config(config)["_experiments"]
