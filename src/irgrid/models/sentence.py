"""Sentence retrieval models: a Markov random field over query terms and the sentence's parse tree.

* ``mrf_sentence``: the term-context-dependence model of the sentence-retrieval paper
  (seed 004; reconstructed in docs/models.md, "MRF sentence retrieval").  Three potential
  functions over cliques of the sentence S and query terms:

  - I (one query term): Jelinek-Mercer smoothed likelihood,
    f_I(q, S) = log((1 - alpha_i) tf(q, S) / |S| + alpha_i cf(q) / |C|);
  - SR (a group of two or more terms contiguous in the query): the group's evidence in S,
    e_SR(c, S) = cooc(c, S) [beta_sr BoolSynR(c, S) + (1 - beta_sr) / ((1 + dis(c, S)) (1 + h(c, S)))],
    smoothed by its mean over the collection E_SR(c):
    f_SR(c, S) = log((1 - alpha_sr) e_SR(c, S) + alpha_sr E_SR(c));
  - PR (a group of two or more terms NOT contiguous in the query): the same with syntactic
    proximity in place of connection (BoolSynP: every two of the group's terms within
    ``proximity`` links) and the group's mean height h'(c, S) in place of its height.

  score(S) = lambda_i / |I| sum_I f_I + lambda_sr / |CD| sum_CD f_SR + lambda_pr / |UD| sum_UD f_PR,

  each group averaged as Indri's ``#combine`` and the SDM here.  The paper's three models are
  the same family at three settings: FIDM (lambda_sr = lambda_pr = 0: ``ql_jm`` to the
  ranking), SDM (lambda_pr = 0: single terms and contiguous groups), FDM (all three).
  cooc(c, S) is 1 when every term of the group occurs in S (the group's ``#uw`` window over
  the whole sentence matches), the tree values come from the sentence's dependency parse
  (:mod:`irgrid.features.trees`), looked up once per query set, never per grid point.

* ``tfidf_sentence``: the TF-IDF of the sentence-retrieval literature (Allan, Wade & Bolivar,
  SIGIR 2003; the "tfidf"/"TFISF" baseline of the later sentence-retrieval papers),
  score(s, q) = sum_{t in q} log(tf(t, q) + 1) log(tf(t, s) + 1) log((n + 1) / (0.5 + sf(t))),
  n the number of sentences of the collection and sf(t) the number containing t.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..features import contiguous_runs, counted, unordered
from ..features.sentence_parses import tree_values
from .base import Parameter, QueryFeature, WeightedModel
from .dependence import TERMS_GROUP, FeatureModel, sorted_terms, whole_number
from .parts import WEIGHTINGS

CONTIGUOUS_GROUP = "SR"
NONCONTIGUOUS_GROUP = "PR"
#: the width of the window that stands for "in the same sentence": wider than any sentence
SENTENCE_WINDOW = 1 << 20


ALPHA_I = Parameter("alpha_i", 0.5, 0.0, 1.0, "collection weight of the single-term potential (Jelinek-Mercer)",
                    low_inclusive=False)
ALPHA_SR = Parameter("alpha_sr", 0.5, 0.0, 1.0, "collection weight of the contiguous-group potential",
                     low_inclusive=False)
BETA_SR = Parameter("beta_sr", 0.5, 0.0, 1.0, "weight of BoolSynR (syntactic connection) against the tree "
                    "closeness 1 / ((1 + dis)(1 + h)) in the contiguous-group potential")
ALPHA_PR = Parameter("alpha_pr", 0.5, 0.0, 1.0, "collection weight of the non-contiguous-group potential",
                     low_inclusive=False)
BETA_PR = Parameter("beta_pr", 0.5, 0.0, 1.0, "weight of syntactic proximity against the tree closeness "
                    "1 / ((1 + dis)(1 + h')) in the non-contiguous-group potential")
LAMBDA_I = Parameter("lambda_i", 1.0, 0.0, 1.0, "weight of the single-term potentials")
LAMBDA_SR = Parameter("lambda_sr", 0.0, 0.0, 1.0, "weight of the contiguous-group potentials (0: FIDM)")
LAMBDA_PR = Parameter("lambda_pr", 0.0, 0.0, 1.0, "weight of the non-contiguous-group potentials (0: FIDM or SDM)")
PROXIMITY = Parameter("proximity", 2.0, 1.0, 64.0, "links within which every two terms of a non-contiguous group "
                      "are syntactically proximate (BoolSynP)")
GROUP_TERMS = Parameter("max_terms", 4.0, 2.0, 64.0, "largest group of query terms given a clique")


def noncontiguous_subsets(terms: Sequence[str], max_size: int) -> list[tuple[str, ...]]:
    """Every subset of >= 2 query-term positions, up to ``max_size``, whose positions are not one run."""
    n = len(terms)
    out = []
    for size in range(2, min(n, max_size) + 1):
        for chosen in itertools.combinations(range(n), size):
            if chosen[-1] - chosen[0] != size - 1:
                out.append(tuple(terms[i] for i in chosen))
    return out


class SentenceMRF(FeatureModel):
    """``mrf_sentence``: FIDM, SDM and FDM of the sentence-retrieval paper (module docstring)."""

    name = "mrf_sentence"
    description = "MRF sentence retrieval with co-occurrence and dependency-parse features (reconstructed)"
    parameters = (ALPHA_I, LAMBDA_I, LAMBDA_SR, ALPHA_SR, BETA_SR, LAMBDA_PR, ALPHA_PR, BETA_PR, PROXIMITY,
                  GROUP_TERMS)
    scores_candidates = True
    #: its clique features carry values from the sentences' parse trees (compile_query_set asks for them)
    uses_parses = True
    #: ``mrf_sentence+rm3``'s expanded query is a bag of words: scored by the single-term potential,
    #: Jelinek-Mercer query likelihood with alpha_i, the collection's weight, as ql_jm's lambda
    expands_as = "ql_jm"
    expansion_parameters = {"lambda": "alpha_i"}

    def compile(self, query, points):
        caps = sorted({whole_number(p["max_terms"], "max_terms", self.name, 2) for p in points})
        features = sorted_terms(query.terms)
        if any(p["lambda_sr"] > 0 for p in points):
            for cap in caps:
                features += [(unordered(run, SENTENCE_WINDOW), f"{CONTIGUOUS_GROUP}{cap}")
                             for run in contiguous_runs(query.terms, max_size=cap)]
        if any(p["lambda_pr"] > 0 for p in points):
            for cap in caps:
                features += [(unordered(subset, SENTENCE_WINDOW), f"{NONCONTIGUOUS_GROUP}{cap}")
                             for subset in noncontiguous_subsets(query.terms, cap)]
        return counted(features)

    def document_values(self, features: list[QueryFeature], parses) -> list[QueryFeature]:
        """``features`` with the parse-tree values of each clique in each sentence of its postings."""
        out = []
        for feature in features:
            if feature.group == TERMS_GROUP:
                out.append(feature)
                continue
            values = tree_values(parses, feature.feature.terms, feature.docids)
            out.append(replace(feature, values=values))
        return out

    # -- scoring -------------------------------------------------------------------------------------

    @staticmethod
    def _groups(point: Mapping[str, float]) -> tuple[str, str]:
        cap = int(point["max_terms"])
        return f"{CONTIGUOUS_GROUP}{cap}", f"{NONCONTIGUOUS_GROUP}{cap}"

    @staticmethod
    def term_potentials(term, counts_row, doc_lengths, stats, alpha) -> np.ndarray:
        """f_I(q, S) for each candidate: log((1 - alpha) tf / |S| + alpha cf / |C|) (an empty S: tf / |S| = 0)."""
        lengths = np.asarray(doc_lengths, dtype=np.float64)
        tf = counts_row.astype(np.float64)
        maximum_likelihood = np.divide(tf, lengths, out=np.zeros_like(tf), where=lengths > 0)
        return np.log((1.0 - alpha) * maximum_likelihood + alpha * term.cf / stats.total_length)

    @staticmethod
    def evidence(values: Mapping[str, np.ndarray], cooccurs: np.ndarray, contiguous: bool,
                 point: Mapping[str, float]) -> np.ndarray:
        """e(c, S): 0 without co-occurrence, else beta BoolSyn + (1 - beta) closeness."""
        if contiguous:
            beta, syntactic, closeness = point["beta_sr"], values["connected"], values["closeness"]
        else:
            beta = point["beta_pr"]
            syntactic = (values["span"] <= point["proximity"]).astype(np.float64)
            closeness = values["mean_closeness"]
        return cooccurs * (beta * syntactic + (1.0 - beta) * closeness)

    def collection_evidence(self, feature: QueryFeature, contiguous: bool, point, num_docs: int) -> float:
        """E(c): e(c, S) averaged over every sentence of the collection; half a sentence's worth if never seen."""
        if len(feature.docids):
            total = float(self.evidence(feature.values, np.ones(len(feature.docids)), contiguous, point).sum())
        else:
            total = 0.0
        return (total if total > 0 else 0.5) / num_docs

    def candidate_scores(self, terms, counts, doc_lengths, doc_unique_terms, stats, point, cache=None, values=None):
        scores = np.zeros(counts.shape[1], dtype=np.float64)
        words = [(row, t) for row, t in enumerate(terms) if t.group == TERMS_GROUP]
        if words and point["lambda_i"] > 0:
            weight = point["lambda_i"] / sum(t.qtf for _, t in words)
            for row, t in words:
                scores += weight * t.qtf * self.term_potentials(t, counts[row], doc_lengths, stats, point["alpha_i"])
        contiguous_group, noncontiguous_group = self._groups(point)
        for group, lam, alpha, contiguous in ((contiguous_group, point["lambda_sr"], point["alpha_sr"], True),
                                              (noncontiguous_group, point["lambda_pr"], point["alpha_pr"], False)):
            cliques = [(row, t) for row, t in enumerate(terms) if t.group == group]
            if lam <= 0 or not cliques:
                continue
            weight = lam / sum(t.qtf for _, t in cliques)
            for row, t in cliques:
                background = self.collection_evidence(t, contiguous, point, stats.num_docs)
                cooccurs = (counts[row] > 0).astype(np.float64)
                evidence = self.evidence(values[row], cooccurs, contiguous, point)
                scores += weight * t.qtf * np.log((1.0 - alpha) * evidence + alpha * background)
        return scores


class SentenceTFIDF(WeightedModel):
    """``tfidf_sentence``: Allan, Wade & Bolivar's (SIGIR 2003) sentence TF-IDF, no parameters.

    score(s, q) = sum_{t in q and s} log(tf(t, q) + 1) * log(tf(t, s) + 1) * log((n + 1) / (0.5 + sf(t)))

    n is the collection's number of sentences (``stats.num_docs``) and sf(t) the number of sentences
    containing t (the term's df): each indexed sentence is a document. The logarithms are natural;
    another base multiplies every score by the same positive constant (the cube of 1/ln(base)), so
    no ranking changes. No length normalisation. The query part log(tf(t, q) + 1) is the term's
    weight (:meth:`term_weight`: a repeated question word counts log 3 / log 2 times as much, not
    twice); the per-posting part log(tf + 1) idf is declared in
    :mod:`irgrid.models.parts.sentence_tfidf`, shared with the fused kernel.
    """

    name = "tfidf_sentence"
    description = "sentence-retrieval TF-IDF (Allan, Wade & Bolivar 2003): log(qtf+1) log(tf+1) log((n+1)/(0.5+sf))"
    parameters = ()
    parts = WEIGHTINGS["sentence_tfidf"]

    def term_weight(self, term, point):
        return math.log(term.qtf + 1.0)
