"""WordNet's morphy: the lemmatiser the ADM paper (seed 000) used as its stemmer.

morphy (WordNet 3.0's ``morph.c``, described in its ``morphy(7WN)`` manual page; NLTK's
``WordNetCorpusReader.morphy`` implements the same) turns a word into a base form that
WordNet lists: first the exception lists (``children -> child``), then the detachment
rules of each part of speech (``-ies -> -y``, ``-ing -> ''``, ...), keeping only
candidates found in that part of speech's index.  Without a part of speech the parts
are tried in WordNet's order (noun, verb, adjective, adverb) and the first base form
found is the lemma; a word WordNet does not know is kept as it is.

The database is read from, in this order: ``$IRGRID_WORDNET``; Debian's
``wordnet-base`` (``/usr/share/wordnet``, installed by the project's set-up where
apt-get can run); NLTK's ``wordnet`` corpus directory if one is present.  Nothing is
ever downloaded; without the database the analyzer stops saying what to install.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ..errors import ConfigError

PARTS = ("noun", "verb", "adj", "adv")
DETACHMENTS = {
    "noun": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
             ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
DEBIAN_DIR = Path("/usr/share/wordnet")
INSTALL_HINT = ("install WordNet 3.0's database: Debian's package wordnet-base (apt-get install wordnet-base; "
                "make setup does it where it runs as root), or set IRGRID_WORDNET to a directory holding "
                "index.noun, noun.exc, ... (e.g. NLTK's corpora/wordnet)")


class WordNetNotInstalled(ConfigError):
    """No WordNet database where the stemmer looks for one."""


def wordnet_directory() -> Path:
    candidates = []
    if os.environ.get("IRGRID_WORDNET"):
        candidates.append(Path(os.environ["IRGRID_WORDNET"]))
    candidates.append(DEBIAN_DIR)
    candidates += [Path(root) / "corpora" / "wordnet" for root in
                   (os.environ.get("NLTK_DATA", ""), Path.home() / "nltk_data", "/usr/share/nltk_data") if root]
    for directory in candidates:
        if all((directory / f"index.{part}").is_file() for part in PARTS):
            return directory
    raise WordNetNotInstalled(f"the wordnet stemmer found no WordNet database (looked in "
                              f"{', '.join(map(str, candidates))}): {INSTALL_HINT}")


class Morphy:
    """morphy over one WordNet database directory."""

    def __init__(self, directory: str | os.PathLike):
        directory = Path(directory)
        self.lemmas = {part: self._index(directory / f"index.{part}") for part in PARTS}
        self.exceptions = {part: self._exceptions(directory / f"{part}.exc") for part in PARTS}

    @staticmethod
    def _index(path: Path) -> frozenset[str]:
        # a line is "lemma pos synset_cnt ..."; the licence header lines start with two spaces
        with open(path, encoding="utf-8", errors="replace") as lines:
            return frozenset(line.split(" ", 1)[0] for line in lines if line and not line.startswith(" "))

    @staticmethod
    def _exceptions(path: Path) -> dict[str, tuple[str, ...]]:
        if not path.is_file():
            return {}
        table = {}
        with open(path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                words = line.split()
                if len(words) >= 2:
                    table[words[0]] = tuple(words[1:])
        return table

    def base_forms(self, word: str, part: str) -> list[str]:
        """The base forms of ``word`` in one part of speech, in morphy's order."""
        known = self.lemmas[part]
        if word in self.exceptions[part]:
            candidates = [word, *self.exceptions[part][word]]
        else:
            candidates = [word] + [word[: -len(old)] + new for old, new in DETACHMENTS[part] if word.endswith(old)]
        return [form for form in dict.fromkeys(candidates) if form in known]

    def __call__(self, word: str) -> str:
        """The lemma of ``word`` (lower-cased by the analyzer before): the first base form over the parts."""
        for part in PARTS:
            forms = self.base_forms(word, part)
            if forms:
                return forms[0]
        return word


@functools.lru_cache(maxsize=1)
def load_morphy() -> Morphy:
    return Morphy(wordnet_directory())
