"""Sentence retrieval: sentence collections with their dependency parses, and parse-tree features.

:mod:`.parse` (a checked dependency parse), :mod:`.tree` (distances, heights and
connectedness of query terms in a parse tree), :mod:`.trecqa` and :mod:`.answer_tsv`
(answer-sentence collections), :mod:`.parsing` (spaCy parses of the sentences that
lack one, cached as Parquet next to the documents).
"""
