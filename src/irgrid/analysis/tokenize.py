"""Tokenizers.

``lucene``
    A regular-expression approximation of Lucene's ``StandardTokenizer``, which
    implements the word-break rules of Unicode UAX #29:

    * runs of letters and digits form a token (``abc123``, ``v2``; WB5, WB8-WB10);
    * an apostrophe, period or colon between two letters does not break (``don't``,
      ``o'neil's``, ``u.s.a``, ``cpu:i``; WB6/WB7 with MidLetter / MidNumLet /
      Single_Quote: the colon, U+00B7, U+0387, U+05F4, U+2027, U+FE13, U+FE55 and U+FF1A
      are MidLetter);
    * a period, comma, semicolon or apostrophe between two digits does not break
      (``3.14``, ``1,000``; WB11/WB12 with MidNum / MidNumLet);
    * underscores (ExtendNumLet) join what they touch and are kept (``foo_bar``,
      ``_tmp``; WB13a/WB13b), but a run of underscores alone is no token;
    * combining marks and format characters stay with the character before them
      (WB4), so decomposed accents do not split a word;
    * Han ideographs and Hiragana are emitted one character per token, as Lucene does;
    * tokens longer than 255 characters are split into 255-character pieces
      (Lucene's default ``maxTokenLength``).

    Not reproduced: emoji sequences, Katakana/Hebrew special cases, the
    ``<ALPHANUM>``/``<NUM>`` token types.  Everything that is not part of a token
    (punctuation, symbols, whitespace) is dropped.

``alnum``
    Maximal runs of Unicode letters and digits (``[^\\W_]+``); everything else
    separates tokens.

``cjk``
    For Chinese (and Japanese/Korean) text indexed as characters, the phrase paper's
    Chinese setting: the text is NFKC-normalised first (full-width ``ＮＢＡ２０１０``
    becomes ``NBA2010``, compatibility ideographs their unified forms); then every Han
    ideograph, kana and Hangul syllable is a token of its own, maximal runs of other
    letters and digits are words (``NBA``, ``2010``), and punctuation, symbols and
    spaces (full-width ``，。？「」`` included) separate tokens and are dropped.
    Traditional and Simplified characters are different tokens: a collection and its
    queries are indexed in the script they are written in.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

MAX_TOKEN_LENGTH = 255

# Han ideographs (CJK unified + extensions, compatibility) and Hiragana: one token each.
_IDEO = "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_IDEO_RE = re.compile(f"[{_IDEO}]")


def _ranges_to_class(codepoints: list[int]) -> str:
    out = []
    start = prev = None
    for cp in codepoints:
        if start is None:
            start = prev = cp
        elif cp == prev + 1:
            prev = cp
        else:
            out.append((start, prev))
            start = prev = cp
    if start is not None:
        out.append((start, prev))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in out
    )


@functools.cache
def _extend_class() -> str:
    """Characters that attach to the preceding one (UAX #29 Extend/Format/ZWJ)."""
    cps = []
    for cp in range(0x20000):
        cat = unicodedata.category(chr(cp))
        if cat in ("Mn", "Mc", "Me") or (cat == "Cf" and cp != 0x200B):
            cps.append(cp)
    cps.extend(range(0xE0100, 0xE01F0))  # variation selectors supplement
    return _ranges_to_class(cps)


@functools.cache
def _lucene_patterns() -> tuple[re.Pattern, re.Pattern]:
    """``(pattern, pattern_with_ideographs)`` for general Unicode text."""
    ext = _extend_class()
    apos = "'\u2019\uff07"
    # MidLetter (UAX #29: the colon and its look-alikes) / MidNumLet / Single_Quote between letters
    mid_letter = ".:\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a\u2018\ufe52\uff0e" + apos
    mid_num = ".,;" + apos  # MidNum / MidNumLet / Single_Quote between digits

    # Without ideographs: runs of letters/digits, each optionally followed by marks.
    run = f"[^\\W_]+(?:[{ext}]+[^\\W_]*)*"
    join = (
        f"(?:(?<=[^\\W\\d_]|[{ext}])[{mid_letter}](?=[^\\W\\d_])"
        f"|(?<=\\d)[{mid_num}](?=\\d)"
        f"|_+(?=[^\\W_]))"
    )
    plain = re.compile(f"_*{run}(?:{join}{run})*_*")

    # With ideographs (rare): a character at a time, ideographs excluded from words.
    no_ideo = f"(?![{_IDEO}])"
    letter = f"{no_ideo}[^\\W\\d_]"
    start = f"{no_ideo}[^\\W_]"
    unit = f"(?:{start}|[{ext}])"
    join_i = (
        f"(?:(?<=[^\\W\\d_]|[{ext}])[{mid_letter}](?={letter})"
        f"|(?<=\\d)[{mid_num}](?=\\d)"
        f"|_+(?={start}))"
    )
    with_ideo = re.compile(f"[{_IDEO}][{ext}]*|_*{start}{unit}*(?:{join_i}{unit}+)*_*")
    return plain, with_ideo


# ASCII fast path (most text): split into chunks of word characters and the joining
# punctuation, keep all-alphanumeric chunks as they are, and run the full rules only
# on the others.  Lookarounds never need to see past a chunk (the characters around
# it are neither letters nor digits), so this equals the general pattern.
_ASCII_CHUNK = re.compile(r"[A-Za-z0-9_.,;:']+")
_ASCII_WORD = re.compile(
    r"_*[A-Za-z0-9]+(?:(?:(?<=[A-Za-z])['.:](?=[A-Za-z])|(?<=[0-9])[.,;'](?=[0-9])|_+(?=[A-Za-z0-9]))[A-Za-z0-9]+)*_*"
)


def _split_long(tokens: list[str]) -> list[str]:
    if all(len(t) <= MAX_TOKEN_LENGTH for t in tokens):
        return tokens
    out: list[str] = []
    for t in tokens:
        if len(t) <= MAX_TOKEN_LENGTH:
            out.append(t)
        else:
            out.extend(t[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(t), MAX_TOKEN_LENGTH))
    return out


def lucene_tokenize(text: str) -> list[str]:
    """Tokens of ``text`` following (an approximation of) Lucene's StandardTokenizer."""
    if not text:
        return []
    if text.isascii():
        tokens = []
        word = _ASCII_WORD.findall
        for chunk in _ASCII_CHUNK.findall(text):
            if chunk.isalnum():
                tokens.append(chunk)
            else:
                tokens.extend(word(chunk))
        return _split_long(tokens)
    plain, with_ideo = _lucene_patterns()
    pattern = with_ideo if _IDEO_RE.search(text) else plain
    return _split_long(pattern.findall(text))


_ALNUM_RE = re.compile(r"[^\W_]+")


def alnum_tokenize(text: str) -> list[str]:
    """Maximal runs of letters and digits."""
    if not text:
        return []
    return _ALNUM_RE.findall(text)


#: a word token: a maximal run of letters and digits (the ``alnum`` tokenizer's pattern)
WORD_RE = _ALNUM_RE


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """The word tokens of ``text``, casefolded, each with its start and end offsets in ``text``."""
    return [(match.group().casefold(), match.start(), match.end()) for match in WORD_RE.finditer(text or "")]


def surface(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with each run of whitespace made one space."""
    return " ".join(text[start:end].split())


def head_words(phrase: str, max_words: int) -> str:
    """``phrase`` cut to its last ``max_words`` words (word tokens as :data:`WORD_RE` finds them), as
    its surface text; a phrase of ``max_words`` words or fewer is returned as it is.

    The last words because a base noun phrase ends at its head (a spaCy noun chunk runs from its
    left edge to its root) and the modifiers nearest the head bind tightest: of ``new large scale
    parallel computer architecture`` the cut keeps ``scale parallel computer architecture``, which
    holds the compounds a dictionary of terms would list (``computer architecture``, ``parallel
    computer architecture``), and drops the loosest modifiers (``new``, ``large``). Dropping the
    whole phrase instead would leave the query without the phrase such a dictionary finds in it.
    A run of Han characters is one word: a Chinese segmenter's word is never cut.
    """
    spans = word_spans(phrase)
    if len(spans) <= max_words:
        return phrase
    return surface(phrase, spans[-max_words][1], spans[-1][2])


# Han (unified, extensions, compatibility), Hiragana, Katakana, Hangul syllables: one token per character.
_CJK_CHARS = (
    "\u3005\u3007\u3021-\u3029\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
    "\uf900-\ufaff\U00020000-\U0003134f"
)
_CJK_RE = re.compile(f"[{_CJK_CHARS}]|(?:(?![{_CJK_CHARS}])[^\\W_])+")


def cjk_tokenize(text: str) -> list[str]:
    """CJK characters one token each, other letter/digit runs as words, after NFKC (see the module docstring)."""
    if not text:
        return []
    return _CJK_RE.findall(unicodedata.normalize("NFKC", text))


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "lucene": lucene_tokenize,
    "alnum": alnum_tokenize,
    "cjk": cjk_tokenize,
}
