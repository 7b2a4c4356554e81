"""Stop lists: ``none``, ``lucene`` (33 words), ``smart`` (571 entries) or a file path.

Files hold one word a line; blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from irgrid.errors import ConfigError

BUILTIN_STOPLISTS = ("none", "lucene", "smart")


def read_word_list(lines) -> list[str]:
    words = []
    for line in lines:
        w = line.strip()
        if w and not w.startswith("#"):
            words.append(w)
    return words


@functools.cache
def builtin_stopwords(name: str) -> tuple[str, ...]:
    """The words of a shipped stop list, in file order (duplicates kept)."""
    if name == "none":
        return ()
    if name not in BUILTIN_STOPLISTS:
        raise ConfigError(f"unknown stop list {name!r}; expected one of {', '.join(BUILTIN_STOPLISTS)} or a path")
    text = resources.files("irgrid").joinpath("data", f"stopwords-{name}.txt").read_text(encoding="utf-8")
    return tuple(read_word_list(text.splitlines()))


def load_stopwords(spec: str) -> tuple[str, ...]:
    """The words named by ``spec``: a built-in list name or a path to a word file."""
    if spec in BUILTIN_STOPLISTS:
        return builtin_stopwords(spec)
    path = Path(spec)
    if not path.is_file():
        raise ConfigError(
            f"stop list {spec!r} is neither one of {', '.join(BUILTIN_STOPLISTS)} nor an existing file"
        )
    with open(path, encoding="utf-8") as f:
        return tuple(read_word_list(f))
