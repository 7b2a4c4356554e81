"""Stemmers, memoised per process because stemming dominates analysis cost.

``porter``  PyStemmer's ``porter`` algorithm: Porter (1980) as published.
``lucene_porter``
            Lucene's ``PorterStemFilter``: Porter's reference implementation, which departs
            from the paper in two step-2 rules, ``-bli -> -ble`` and ``-logi -> -log``
            (``apology -> apolog``, ``possibly -> possibl``; ``porter`` gives ``apologi``,
            ``possibli``), computed by NLTK's ``PorterStemmer`` in its ``MARTIN_EXTENSIONS``
            mode (the rules of Porter's own implementations).  It agrees with Lucene 9's
            ``org.apache.lucene.analysis.en.PorterStemmer`` on all 37,193 alphabetic words of
            the six test collections and TrecQA (compared through Anserini 0.21's jar);
            ``porter`` differs on some of them.
``krovetz`` Krovetz's inflectional/derivational stemmer (``krovetzstemmer``).
``wordnet`` WordNet's morphy lemmatiser (:mod:`irgrid.analysis.wordnet`), as the ADM
            paper used; needs WordNet's database (Debian's ``wordnet-base``).
``none``    the identity.

As in Lucene's ``PorterStemmer`` (and Porter's reference code), words of one or
two characters are not stemmed (the published rules would turn ``as`` into ``a``
and ``s`` into nothing).  No stemmer ever returns an empty term: the word is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .wordnet import load_morphy

STEMMERS = ("porter", "lucene_porter", "krovetz", "wordnet", "none")

# Beyond this many cached words the cache is dropped and refilled (bounded memory).
CACHE_SIZE = 1 << 20

_local = threading.local()  # stemmer objects are not shared between threads
_caches: dict[str, dict[str, str]] = {}
_functions: dict[str, Callable[[str], str]] = {}
_lock = threading.Lock()


def _raw_stemmer(name: str) -> Callable[[str], str]:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    fn = stemmers.get(name)
    if fn is None:
        if name == "porter":
            # deferred: a stemmer's library is imported only when that stemmer is used
            import Stemmer

            fn = Stemmer.Stemmer("porter", 0).stemWord  # our own cache below
        elif name == "lucene_porter":
            # deferred: a stemmer's library is imported only when that stemmer is used
            from nltk.stem.porter import PorterStemmer

            fn = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS).stem
        elif name == "krovetz":
            # deferred: a stemmer's library is imported only when that stemmer is used
            import krovetzstemmer

            fn = krovetzstemmer.Stemmer().stem
        elif name == "wordnet":
            fn = load_morphy()
        else:  # pragma: no cover - guarded by get_stemmer
            raise ValueError(name)
        stemmers[name] = fn
    return fn


def get_stemmer(name: str) -> Callable[[str], str]:
    """A memoised ``word -> stem`` function for ``name`` (one of :data:`STEMMERS`)."""
    if name not in STEMMERS:
        raise ValueError(f"unknown stemmer {name!r}; expected one of {', '.join(STEMMERS)}")
    if name == "none":
        return _identity
    if name == "wordnet":
        # a missing database stops the analyzer now, not inside the first document's analysis
        load_morphy()
    fn = _functions.get(name)
    if fn is not None:
        return fn
    with _lock:
        cache = _caches.setdefault(name, {})

        def stem(word: str, _cache: dict[str, str] = cache, _name: str = name) -> str:
            s = _cache.get(word)
            if s is None:
                s = word if len(word) <= 2 else (_raw_stemmer(_name)(word) or word)
                if len(_cache) >= CACHE_SIZE:
                    _cache.clear()
                _cache[word] = s
            return s

        _functions[name] = stem
    return stem


def _identity(word: str) -> str:
    return word
