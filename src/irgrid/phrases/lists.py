"""Query phrases from a phrase list: the list's multi-word entries found in each query.

Shi & Nie's phrase model needs to know which word groups of a query are phrases.  With a
list of known phrases (a dictionary, Wikipedia titles, a hand-made list) a query's phrases
are the list's entries that occur in it.  Matching works on word tokens (maximal runs of
letters and digits, as :func:`irgrid.analysis.tokenize.alnum_tokenize`), casefolded, so
``Boundary  Layer`` and ``boundary-layer`` both match the entry ``boundary layer``; the
phrase returned is the query's own text for the matched words (its surface span, inner
whitespace made one space), which the models then analyze with the index's analyzer.

The list file is UTF-8, one phrase a line; blank lines and lines whose first non-blank
character is ``#`` are skipped.  A phrase has 1 to 4 words.  A one-word line is accepted and
kept by :func:`read_phrase_list` (so a general-purpose list can be used as is), but it never
makes a phrase: only entries of two or more words are matched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..analysis.tokenize import WORD_RE, surface, word_spans
from ..errors import InputFormatError

#: the most words a list phrase may have
MAX_PHRASE_WORDS = 4

def read_phrase_list(path: str | os.PathLike) -> list[str]:
    """The phrases of a phrase-list file, in file order (see the module docstring for the format).

    Each phrase is returned with its whitespace normalised (stripped, inner runs made one
    space); a phrase equal to an earlier one up to case is left out.  Raises
    :class:`~irgrid.errors.InputFormatError` naming the file and line for a line that is not
    UTF-8 or has no word or more than :data:`MAX_PHRASE_WORDS` words, and naming the file for a
    file with no phrase.
    """
    path = Path(path)
    phrases: list[str] = []
    seen: set[str] = set()
    with open(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError as error:
                snippet = raw[max(0, error.start - 20): error.end + 20]
                raise InputFormatError(path, line_no, "UTF-8 text", found=repr(snippet)) from None
            phrase = " ".join(line.split())
            if not phrase or phrase.startswith("#"):
                continue
            words = WORD_RE.findall(phrase)
            if not 1 <= len(words) <= MAX_PHRASE_WORDS:
                raise InputFormatError(path, line_no, f"a phrase of 1 to {MAX_PHRASE_WORDS} words",
                                       found=f"{len(words)} words: {phrase}")
            key = phrase.casefold()
            if key not in seen:
                seen.add(key)
                phrases.append(phrase)
    if not phrases:
        raise InputFormatError(path, None, "at least one phrase (one a line)", found="no phrase")
    return phrases


@dataclass(frozen=True)
class PhraseTable:
    """The multi-word phrases of a list as casefolded word tuples, for matching."""

    keys: frozenset[tuple[str, ...]]
    longest: int

    @classmethod
    def of(cls, phrases: Iterable[str]) -> PhraseTable:
        keys = frozenset(key for key in (tuple(word for word, _, _ in word_spans(p)) for p in phrases) if len(key) >= 2)
        return cls(keys, max((len(key) for key in keys), default=0))


def match_phrases(text: str, phrases: Iterable[str] | PhraseTable) -> list[str]:
    """The list phrases of ``text``, in query order, as the query writes them.

    Greedy longest match from left to right without overlap: at each word, the longest
    multi-word list phrase starting there is taken and matching goes on after it; if none
    starts there, matching goes on at the next word.  Words compare casefolded; the phrase
    returned is the query's surface text from the first to the last matched word, with each
    run of whitespace made one space.  ``phrases`` is a list of phrases or a
    :class:`PhraseTable` made once for many queries.
    """
    table = phrases if isinstance(phrases, PhraseTable) else PhraseTable.of(phrases)
    tokens = word_spans(text)
    words = [word for word, _, _ in tokens]
    found = []
    i = 0
    while i < len(tokens):
        for length in range(min(table.longest, len(tokens) - i), 1, -1):
            if tuple(words[i: i + length]) in table.keys:
                found.append(surface(text, tokens[i][1], tokens[i + length - 1][2]))
                i += length
                break
        else:
            i += 1
    return found
