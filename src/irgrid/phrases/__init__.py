"""Each query's phrases, for the phrase model of Shi & Nie (SIGIR 2009), and their weights.

A query set ``X+list``, ``X+pmi`` or ``X+segmenter`` is query set ``X`` with each query's
phrases found by a phrase list, by PMI in the collection, or by a Chinese segmenter
(:mod:`.identify`); :mod:`.weights` explains the weight a phrase model gave each phrase.
"""

from .identify import has_phrase, identified_queryset, identify_phrases, phrase_words, write_phrase_topics
from .lists import match_phrases, read_phrase_list
from .pmi import iter_document_texts, pmi_phrases
from .segment import segment_phrases

__all__ = [
    "has_phrase",
    "identified_queryset",
    "identify_phrases",
    "iter_document_texts",
    "match_phrases",
    "phrase_words",
    "pmi_phrases",
    "read_phrase_list",
    "segment_phrases",
    "write_phrase_topics",
]
