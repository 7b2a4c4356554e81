"""The :class:`Analyzer`: text -> indexed terms.

Order of operations (as Lucene's ``EnglishAnalyzer``): tokenize -> lowercase ->
possessive ``'s`` removal -> stop-word removal -> stemming.  Stop words are matched
before stemming, against the (lowercased) token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irgrid.errors import ConfigError

from .stem import STEMMERS, get_stemmer
from .stopwords import BUILTIN_STOPLISTS, load_stopwords
from .tokenize import TOKENIZERS

_APOSTROPHES = frozenset("'\u2019\uff07")
_FIELDS = ("tokenizer", "lowercase", "possessive", "stemmer", "stopwords", "name", "stopword_list")


@dataclass(frozen=True)
class Analyzer:
    """Configuration of the analysis chain; calling it analyses a text.

    ``stopwords`` is ``none``, ``lucene``, ``smart`` or a path to a file with one
    word a line.  For a path, the words are read once at construction and kept in
    ``stopword_list`` (also written by :meth:`to_dict`), so an analyzer restored from
    an index's ``stats.json`` does not need the file any more.
    """

    tokenizer: str = "lucene"
    lowercase: bool = True
    possessive: bool = True
    stemmer: str = "porter"
    stopwords: str = "lucene"
    name: str | None = None
    stopword_list: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ConfigError(
                f"unknown tokenizer {self.tokenizer!r}; expected one of {', '.join(TOKENIZERS)}"
            )
        if self.stemmer not in STEMMERS:
            raise ConfigError(f"unknown stemmer {self.stemmer!r}; expected one of {', '.join(STEMMERS)}")
        if self.stemmer == "wordnet":
            get_stemmer("wordnet")  # no WordNet database: stop here, saying what to install
        for flag in ("lowercase", "possessive"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"analyzer option {flag!r} must be true or false, got {getattr(self, flag)!r}")
        if not isinstance(self.stopwords, str) or not self.stopwords:
            raise ConfigError(f"analyzer option 'stopwords' must be a list name or a path, got {self.stopwords!r}")
        if self.name is not None and not isinstance(self.name, str):
            raise ConfigError(f"analyzer option 'name' must be a string, got {self.name!r}")
        if self.stopwords in BUILTIN_STOPLISTS:
            words = load_stopwords(self.stopwords)
        elif self.stopword_list is not None:
            words = tuple(self.stopword_list)
        else:
            words = load_stopwords(self.stopwords)
            object.__setattr__(self, "stopword_list", tuple(sorted(set(words))))
        object.__setattr__(self, "_stopset", frozenset(words))

    # ------------------------------------------------------------------ config
    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Analyzer:
        """Build from a configuration mapping (missing keys take the defaults)."""
        if d is None:
            return cls()
        if isinstance(d, Analyzer):
            return d
        if not isinstance(d, dict):
            raise ConfigError(f"analyzer configuration must be a mapping, got {type(d).__name__}")
        unknown = sorted(set(d) - set(_FIELDS))
        if unknown:
            raise ConfigError(
                f"unknown analyzer option(s) {', '.join(map(repr, unknown))}; expected {', '.join(_FIELDS[:-1])}"
            )
        kw = dict(d)
        for key in ("stemmer", "stopwords"):
            if key in kw and kw[key] in (None, False):
                kw[key] = "none"
        if kw.get("stopword_list") is not None:
            kw["stopword_list"] = tuple(kw["stopword_list"])
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able mapping that :meth:`from_dict` turns back into an equal analyzer."""
        d: dict[str, Any] = {
            "tokenizer": self.tokenizer,
            "lowercase": self.lowercase,
            "possessive": self.possessive,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
        }
        if self.name is not None:
            d["name"] = self.name
        if self.stopwords not in BUILTIN_STOPLISTS:
            d["stopword_list"] = sorted(self._stopset)
        return d

    @property
    def stopword_set(self) -> frozenset[str]:
        return self._stopset

    # ---------------------------------------------------------------- analysis
    def tokens(self, text: str | None) -> list[str]:
        """Tokens after tokenization, lowercasing and possessive removal (no stopping/stemming)."""
        if not text:
            return []
        toks = TOKENIZERS[self.tokenizer](text)
        if self.lowercase:
            toks = [t.lower() for t in toks]
        if self.possessive:
            apos = _APOSTROPHES
            toks = [
                t[:-2] if len(t) > 2 and (t[-1] == "s" or t[-1] == "S") and t[-2] in apos else t for t in toks
            ]
        return toks

    def __call__(self, text: str | None) -> list[str]:
        """The indexed terms of ``text``, in order."""
        toks = self.tokens(text)
        stop = self._stopset
        if stop:
            toks = [t for t in toks if t not in stop]
        if self.stemmer != "none":
            stem = get_stemmer(self.stemmer)
            toks = [stem(t) for t in toks]
        return toks

    def analyze_with_positions(self, text: str | None) -> tuple[list[str], list[int]]:
        """Terms and their positions; a removed stop word leaves a gap in the positions."""
        toks = self.tokens(text)
        stop = self._stopset
        if stop:
            positions = [i for i, t in enumerate(toks) if t not in stop]
            toks = [toks[i] for i in positions]
        else:
            positions = list(range(len(toks)))
        if self.stemmer != "none":
            stem = get_stemmer(self.stemmer)
            toks = [stem(t) for t in toks]
        return toks, positions
