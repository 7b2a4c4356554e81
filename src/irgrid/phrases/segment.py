"""Query phrases of a Chinese query: the words of a segmenter.

Chinese is written without spaces, and the Chinese analyzers here index one character a
term; a word of two or more characters is then a phrase of that many terms.  The words of
a query come from jieba (precise mode, HMM for unknown words), which ships its dictionary
in the package.  jieba's dictionary is Simplified Chinese, so a Traditional query is
converted to Simplified with OpenCC (``t2s``) for the segmentation only: conversion maps
character to character in almost every case, so the word offsets found in the converted
text are the offsets in the original, and each phrase is returned in the query's own
(Traditional) characters.  When a conversion changes the length of the text, the offsets
would not carry over, and the original text is segmented instead.

A phrase is a word of two or more characters that are all Han ideographs: single
characters, punctuation, Latin letters (full-width too) and digits are left out.
"""

from __future__ import annotations

import functools
import logging
import re
import tempfile

from ..errors import ConfigError

#: Han ideographs: CJK unified ideographs and their extensions, compatibility ideographs, U+3007 (〇)
HAN_RE = re.compile("[\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_ALL_HAN_RE = re.compile(f"(?:{HAN_RE.pattern})+")

#: ``convert`` value that segments the text as it is
NO_CONVERSION = "none"


def is_han(text: str) -> bool:
    """True when ``text`` is non-empty and every character of it is a Han ideograph."""
    return bool(_ALL_HAN_RE.fullmatch(text))


@functools.cache
def _segmenter():
    """jieba's default tokenizer, initialised once per process, its cache file in the temp dir, quiet."""
    # deferred: jieba and opencc are imported only when Chinese text is segmented
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.dt.tmp_dir = tempfile.gettempdir()
    jieba.dt.initialize()
    return jieba.dt


@functools.cache
def _converter(convert: str):
    # deferred: jieba and opencc are imported only when Chinese text is segmented
    import opencc

    try:
        return opencc.OpenCC(convert)
    except FileNotFoundError:
        raise ConfigError(f"phrases: unknown OpenCC conversion convert={convert!r} "
                          f"(e.g. 't2s', 'tw2s', 'hk2s', or '{NO_CONVERSION}')") from None


def segmentation_text(text: str, convert: str = "t2s") -> str:
    """The text jieba segments: ``text`` converted by OpenCC ``convert``, or ``text`` itself when
    ``convert`` is ``"none"`` or the conversion changed the text's length."""
    if convert == NO_CONVERSION or not text:
        return text
    converted = _converter(convert).convert(text)
    return converted if len(converted) == len(text) else text


def segment_phrases(text: str, convert: str = "t2s") -> list[str]:
    """The words of two or more Han characters of ``text``, in query order, in its own characters.

    See the module docstring: jieba (precise mode, HMM on) segments ``text`` converted by
    OpenCC ``convert`` (``"none"``: as is); each word is cut from the original ``text`` at
    the same offsets.
    """
    text = text or ""
    if not HAN_RE.search(text):
        return []
    segmented = segmentation_text(text, convert)
    phrases = []
    for _, start, end in _segmenter().tokenize(segmented, mode="default", HMM=True):
        word = text[start:end]
        if end - start >= 2 and is_han(word):
            phrases.append(word)
    return phrases
