"""Dirichlet query likelihood: log(1 + tf / (mu p(t|C))) a posting, sum_t w_t log(mu p(t|C)) - |q| log(|D| + mu) a document.

``p(t|C)`` is the model's ``background(term, stats)`` and ``w_t`` its ``term_weight`` (the
qtf for ``ql_dirichlet``, the lambdas for SDM and the phrase models).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .base import Weighting


@njit(cache=True, nogil=True, inline="always")
def dirichlet_part(tf, doc_length, mu_collection_prob, params):
    """The matched-term part of Dirichlet query likelihood: log(1 + tf / (mu p(t|C)))."""
    return math.log1p(tf / mu_collection_prob)


@njit(cache=True, nogil=True, inline="always")
def dirichlet_document(doc_length, params):
    """log(|D| + mu), params (mu,): the document part is sum_t w_t log(mu p(t|C)) - |q| log(|D| + mu)."""
    return math.log(doc_length + params[0])


def dirichlet_params(model, stats, point):
    return np.array([point["mu"]], dtype=np.float64)


def dirichlet_term_constants(model, terms, stats, point):
    mu = point["mu"]
    return np.array([float(mu * model.background(term, stats)) for term in terms], dtype=np.float64)


def dirichlet_query_constants(model, terms, stats, point) -> tuple[float, float]:
    """(sum_t w_t log(mu p(t|C)), sum_t w_t), w_t = ``term_weight`` (the qtf here), in the query's term order."""
    mu = point["mu"]
    constant = length = 0.0
    for term in terms:
        weight = model.term_weight(term, point)
        constant += weight * np.log(mu * model.background(term, stats))
        length += weight
    return float(constant), float(length)


DIRICHLET = Weighting("dirichlet", dirichlet_part, dirichlet_params, dirichlet_term_constants, reads_length=False,
                      document=dirichlet_document, query_constants=dirichlet_query_constants)
