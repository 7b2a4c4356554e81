"""Query-likelihood language models with smoothing (Dirichlet now; JM, AD, GJM later).

Scores are the exact log query likelihood log P(q | theta_D) =
sum_t qtf(t) log p_s(t | D), split as the base class asks: the contribution of
the matched terms plus a per-document part that holds the smoothing mass of the
unmatched ones. Query terms absent from the collection (cf = 0) are dropped,
since p(t | C) = 0 would make every score -inf and carry no ranking
information. Derivations are in docs/models.md.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel


def collection_probability(term: QueryTerm, stats: CollectionStatistics) -> float:
    """Maximum-likelihood collection model p(t | C) = cf / |C|."""
    return term.cf / stats.total_length


class QLDirichlet(RetrievalModel):
    """Query likelihood, Dirichlet prior smoothing (Zhai & Lafferty 2001).

    p_s(t | D) = (tf + mu p(t|C)) / (|D| + mu)

    log P(q|D) = sum_{t in q, tf>0} qtf log(1 + tf / (mu p(t|C)))
               + sum_{t in q} qtf log(mu p(t|C)) - |q| log(|D| + mu)
    """

    name = "ql_dirichlet"
    description = "query likelihood, Dirichlet smoothing"
    parameters = (
        Parameter("mu", 1000.0, 0.0, 1e9, "Dirichlet prior sample size", low_inclusive=False),
    )

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        mu = point["mu"]
        return np.log1p(term.tfs / (mu * collection_probability(term, stats)))

    def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
        mu = point["mu"]
        query_length = sum(term.qtf for term in terms)
        constant = sum(term.qtf * np.log(mu * collection_probability(term, stats)) for term in terms)
        return constant - query_length * np.log(doc_lengths + mu)
