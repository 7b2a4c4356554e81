"""Text analysis: tokenizers, possessive filter, stop lists and stemmers.

``Analyzer`` is the only thing the rest of the package needs; see
``docs/architecture.md`` (section Analysis) for the contract.
"""

from .analyzer import Analyzer
from .stem import STEMMERS, get_stemmer
from .stopwords import BUILTIN_STOPLISTS, builtin_stopwords, load_stopwords
from .tokenize import TOKENIZERS, alnum_tokenize, lucene_tokenize

__all__ = [
    "Analyzer",
    "BUILTIN_STOPLISTS",
    "STEMMERS",
    "TOKENIZERS",
    "alnum_tokenize",
    "builtin_stopwords",
    "get_stemmer",
    "load_stopwords",
    "lucene_tokenize",
]
