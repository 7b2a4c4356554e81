"""RM3: the relevance model of the feedback documents interpolated with the query.

Lavrenko & Croft's relevance model (SIGIR 2001), RM1, estimates p(w|R) from the top documents of
a first retrieval, each weighted by how likely it made the query; RM3 (Abdul-Jaleel et al., UMass
at TREC 2004) keeps its ``fb_terms`` most likely words, renormalised, and interpolates them with
the query's own maximum-likelihood model:

    p'(w|Q) = lambda p_ml(w|Q) + (1 - lambda) p(w|R),   lambda = original_query_weight.

Two estimates are here (docs/models.md, "Pseudo-relevance feedback"):

* :func:`relevance_model` (family suffix ``+rm3``): p(w|R) = sum_D p(w|D) p(D|Q) over the
  feedback documents, p(w|D) = tf / |D| over the whole document, p(D|Q) the first stage's scores
  taken as log-likelihoods and normalised (exp(s_D) / sum exp(s)), as Indri's relevance model
  does; the fb_terms most likely words, ties by the word.
* :func:`anserini_relevance_model` (``+rm3_anserini``): Anserini's ``Rm3Reranker`` (0.21: the
  version behind its CACM regression figures) to its float arithmetic: each feedback
  document's vector is its term frequencies over the words of 2 to 20 characters of ``[a-z0-9]``
  found in at most 10% of the documents, cut to its ``fb_terms`` most frequent words; p(w|R) =
  sum_D tf(w, D) / |v_D|_1 x s_D with the first stage's raw score s_D (not a probability), cut to
  ``fb_terms`` words and L1-normalised; equal weights are cut by the word (``FeatureVector``'s
  order: weight descending, then the word ascending). The query model is the analysed query's token counts,
  L1-normalised (a word the collection lacks still takes its share).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

#: Rm3Reranker.createdFeatureVector's filter: a feedback word is 2-20 characters of [a-z0-9] ...
_ANSERINI_TERM = re.compile(r"[a-z0-9]{2,20}")
#: ... found in at most this share of the documents (compared in float: ``(float) df / numDocs > 0.1f``)
ANSERINI_MAX_DF_RATIO = np.float32(0.1)

_f32 = np.float32


def query_model(tokens: Sequence[str]) -> dict[str, float]:
    """p_ml(w|Q): each analysed query token's share of the query (a repeated token counts each time)."""
    counts = Counter(tokens)
    total = sum(counts.values())
    return {term: count / total for term, count in counts.items()} if total else {}


def interpolate(query: Mapping[str, float], relevance: Mapping[str, float], weight: float) -> dict[str, float]:
    """lambda p(w|Q) + (1 - lambda) p(w|R) over the words of either."""
    words = dict.fromkeys([*query, *relevance])
    return {w: weight * query.get(w, 0.0) + (1.0 - weight) * relevance.get(w, 0.0) for w in words}


def relevance_model(query_tokens: Sequence[str], documents: Sequence[Mapping[str, int]], lengths: Sequence[float],
                    scores: Sequence[float], fb_terms: int, original_query_weight: float) -> dict[str, float]:
    """The RM3 query model (word -> weight, summing to 1) from the feedback documents' term counts.

    ``documents[i]``: word -> tf of feedback document i, ``lengths[i]`` its length, ``scores[i]``
    its first-stage score, read as log p(Q|D).
    """
    relevance: dict[str, float] = {}
    if documents:
        scores = np.asarray(scores, dtype=np.float64)
        posterior = np.exp(scores - scores.max())
        posterior /= posterior.sum()
        for counts, length, p_doc in zip(documents, lengths, posterior):
            if length > 0:
                for word, tf in counts.items():
                    relevance[word] = relevance.get(word, 0.0) + tf / length * p_doc
        kept = sorted(relevance.items(), key=lambda item: (-item[1], item[0]))[:fb_terms]
        total = sum(p for _, p in kept)
        relevance = {word: p / total for word, p in kept} if total > 0 else {}
    return interpolate(query_model(query_tokens), relevance, original_query_weight)


# ---------------------------------------------------------------- Anserini's Rm3Reranker, exactly


def _prune(weights: Mapping[str, np.float32], k: int) -> dict[str, np.float32]:
    """FeatureVector.pruneToSize: the ``k`` heaviest words, equal weights by the word (String.compareTo)."""
    kept = sorted(weights, key=lambda word: (-float(weights[word]), word))[:k]
    return {word: weights[word] for word in kept}


def _l1_norm(weights: Mapping[str, np.float32]) -> float:
    """FeatureVector.computeL1Norm: the float weights summed in double."""
    norm = 0.0
    for weight in weights.values():
        norm += abs(float(weight))
    return norm


def _l1_normalised(weights: Mapping[str, np.float32]) -> dict[str, np.float32]:
    """FeatureVector.scaleToUnitL1Norm: each weight divided by the norm in double, stored as a float."""
    norm = _l1_norm(weights)
    return {word: _f32(float(weight) / norm) for word, weight in weights.items()}


def anserini_document_vector(counts: Mapping[str, int], df: Mapping[str, int], num_docs: int,
                             fb_terms: int) -> dict[str, np.float32]:
    """A feedback document's vector as Rm3Reranker builds it (word -> tf): the words of its term
    vector that pass the filter, cut to the ``fb_terms`` most frequent."""
    kept = {}
    for word in sorted(counts):
        if _ANSERINI_TERM.fullmatch(word) and not _f32(df[word]) / _f32(num_docs) > ANSERINI_MAX_DF_RATIO:
            kept[word] = _f32(counts[word])
    return _prune(kept, fb_terms)


def anserini_relevance_model(query_tokens: Sequence[str], vectors: Sequence[Mapping[str, np.float32]],
                             scores: Sequence[float], fb_terms: int, original_query_weight: float) -> dict[str, float]:
    """The expanded query of Rm3Reranker (word -> boost): ``vectors`` of the feedback documents in
    rank order (:func:`anserini_document_vector`), ``scores`` their first-stage scores."""
    query: dict[str, np.float32] = {}
    for token in query_tokens:  # FeatureVector.fromTerms: 1 per token, summed in float
        query[token] = _f32(query.get(token, _f32(0)) + _f32(1))
    query = _l1_normalised(query) if query else {}

    # p(w|R) of every word, a float32 column per word: each document's share tf / |v_D|_1 x s_D, summed
    # document after document in rank order, the float operations of Rm3Reranker's loop, element-wise
    words = sorted({word for vector in vectors for word in vector})
    column = {word: i for i, word in enumerate(words)}
    weights = np.zeros(len(words), dtype=np.float32)
    for vector, score in zip(vectors, scores):
        norm = _f32(_l1_norm(vector))
        if not norm > _f32(0.001):  # a document left with no word of the filter adds nothing
            continue
        shares = np.zeros(len(words), dtype=np.float32)
        shares[[column[word] for word in vector]] = np.fromiter(vector.values(), dtype=np.float32, count=len(vector))
        weights += (shares / norm) * _f32(score)
    relevance = _l1_normalised(_prune(dict(zip(words, weights)), fb_terms))

    # FeatureVector.interpolate: (float) (xWeight * x + (1.0 - xWeight) * y), xWeight a float
    x_weight = _f32(original_query_weight)
    expanded = {}
    for word in dict.fromkeys([*query, *relevance]):
        x = float(_f32(x_weight * query.get(word, _f32(0))))
        expanded[word] = float(_f32(x + (1.0 - float(x_weight)) * float(relevance.get(word, _f32(0)))))
    return expanded
