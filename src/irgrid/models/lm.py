"""Query-likelihood language models with smoothing: JM, Dirichlet, AD, two-stage, GJM-1/2, KL.

Every model here scores the exact log query likelihood

    log P(q | theta_D) = sum_{t in q} qtf(t) log p_s(t | D)

(``kl_ml`` scores it divided by the query length, see :class:`KLDirichletML`), so scores of
different models are on one scale and identities between models (GJM-1 == Dirichlet) hold to
float precision. The score is split as the base class asks, following Zhai & Lafferty's
general form of a smoothed model (2001): a term seen in D has ``p_s = p_seen(t|D)``,
an unseen one ``p_s = alpha_D p(t|C)``, hence

    log P(q|D) = sum_{t in q ∩ D} qtf log(p_seen(t|D) / (alpha_D p(t|C)))     (term_scores)
               + |q| log alpha_D + sum_{t in q} qtf log p(t|C)                 (document_scores)

which is exact algebra, not a rank-equivalent. Each model also exposes its textbook
``p_s(t|D)`` as :meth:`SmoothedQueryLikelihood.smoothed` (see
:func:`smoothed_probabilities`), which the tests use to check that it is a distribution.

Query terms absent from the collection (cf = 0) are dropped by the scorer, since
p(t | C) = 0 would make every score -inf and carry no ranking information. Only documents
containing a query term are scored, so |D| >= 1 and |D|u >= 1 wherever a score is computed.
Derivations are in docs/models.md.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel, WeightedModel
from .parts import WEIGHTINGS

MU = Parameter("mu", 1000.0, 0.0, 1e9, "Dirichlet prior sample size", low_inclusive=False)


def collection_probability(term: QueryTerm, stats: CollectionStatistics) -> float:
    """Maximum-likelihood collection model p(t | C) = cf / |C|."""
    return term.cf / stats.total_length


def _query_parts(terms: list[QueryTerm], stats: CollectionStatistics) -> tuple[int, float]:
    """(|q|, sum_{t in q} qtf log p(t|C)), summed in the scorer's term order."""
    query_length = sum(term.qtf for term in terms)
    constant = sum(term.qtf * np.log(collection_probability(term, stats)) for term in terms)
    return query_length, float(constant)


class SmoothedQueryLikelihood(RetrievalModel):
    """Query likelihood under a smoothed document model (abstract).

    Subclasses give ``unseen_weight`` (alpha_D), ``seen_excess``
    (p_seen / (alpha_D p(t|C)) - 1, for tf >= 1) and ``smoothed`` (the textbook p_s).
    """

    def smoothed(self, tfs, doc_lengths, doc_unique_terms, collection_probs, point) -> np.ndarray:
        """The smoothed document model p_s(t | D), elementwise (textbook formula)."""
        raise NotImplementedError

    def unseen_weight(self, doc_lengths, doc_unique_terms, point) -> np.ndarray:
        """alpha_D: p_s(t | D) = alpha_D p(t | C) for a term not in D."""
        raise NotImplementedError

    def seen_excess(self, tfs, doc_lengths, doc_unique_terms, collection_prob, point) -> np.ndarray:
        """p_s(t | D) / (alpha_D p(t | C)) - 1 for tf >= 1 (its log1p is the matched-term part)."""
        raise NotImplementedError

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        p = collection_probability(term, stats)
        return np.log1p(self.seen_excess(term.tfs, doc_lengths, doc_unique_terms, p, point))

    def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
        query_length, constant = _query_parts(terms, stats)
        alpha = np.broadcast_to(self.unseen_weight(doc_lengths, doc_unique_terms, point), np.shape(doc_lengths))
        return constant + query_length * np.log(alpha)


class GeneralJelinekMercer(SmoothedQueryLikelihood):
    """Linear interpolation with a document-dependent coefficient (GJM, abstract).

    p_s(t | D) = (1 - lambda_D) tf / |D| + lambda_D p(t|C)

    Subclasses give ``interpolation`` -> (1 - lambda_D, lambda_D). The two weights are
    returned separately (not 1 - lambda_D computed from lambda_D) so that a weight close to 0
    keeps full relative precision.
    """

    def interpolation(self, doc_lengths, doc_unique_terms, point):
        """(1 - lambda_D, lambda_D): weights of the ML and the collection model."""
        raise NotImplementedError

    def smoothed(self, tfs, doc_lengths, doc_unique_terms, collection_probs, point):
        ml_weight, collection_weight = self.interpolation(doc_lengths, doc_unique_terms, point)
        return ml_weight * (tfs / doc_lengths) + collection_weight * collection_probs

    def unseen_weight(self, doc_lengths, doc_unique_terms, point):
        return self.interpolation(doc_lengths, doc_unique_terms, point)[1]

    def seen_excess(self, tfs, doc_lengths, doc_unique_terms, collection_prob, point):
        ml_weight, collection_weight = self.interpolation(doc_lengths, doc_unique_terms, point)
        return ml_weight * tfs / (doc_lengths * collection_weight * collection_prob)


class QLJelinekMercer(GeneralJelinekMercer):
    """Query likelihood, Jelinek-Mercer smoothing (Zhai & Lafferty 2001).

    p_s(t | D) = (1 - lambda) tf / |D| + lambda p(t|C)

    lambda is the weight of the COLLECTION model (Zhai & Lafferty's convention, also
    Lucene's LMJelinekMercerSimilarity and Anserini's -qljm.lambda); lambda = 1 ignores the
    document entirely (every candidate gets the same score).
    """

    name = "ql_jm"
    description = "query likelihood, Jelinek-Mercer smoothing (lambda = collection weight)"
    parameters = (
        Parameter("lambda", 0.1, 0.0, 1.0, "weight of the collection model", low_inclusive=False),
    )

    def interpolation(self, doc_lengths, doc_unique_terms, point):
        lam = point["lambda"]
        return 1.0 - lam, np.full(np.shape(doc_lengths), lam)


class QLDirichlet(WeightedModel, SmoothedQueryLikelihood):
    """Query likelihood, Dirichlet prior smoothing (Zhai & Lafferty 2001).

    p_s(t | D) = (tf + mu p(t|C)) / (|D| + mu)

    log P(q|D) = sum_{t in q, tf>0} qtf log(1 + tf / (mu p(t|C)))
               + sum_{t in q} qtf log(mu p(t|C)) - |q| log(|D| + mu)
    """

    name = "ql_dirichlet"
    description = "query likelihood, Dirichlet smoothing"
    parameters = (MU,)

    def smoothed(self, tfs, doc_lengths, doc_unique_terms, collection_probs, point):
        mu = point["mu"]
        return (tfs + mu * collection_probs) / (doc_lengths + mu)

    def unseen_weight(self, doc_lengths, doc_unique_terms, point):
        return point["mu"] / (doc_lengths + point["mu"])

    def seen_excess(self, tfs, doc_lengths, doc_unique_terms, collection_prob, point):
        return tfs / (point["mu"] * collection_prob)

    # The scoring below is the original formulation (not the general seen_excess / unseen_weight
    # split), its per-posting and per-document parts declared in irgrid.models.parts.dirichlet, which
    # the fused kernel shares: runs of both paths are bit-identical.
    parts = WEIGHTINGS["dirichlet"]

    def background(self, term: QueryTerm, stats: CollectionStatistics) -> float:
        """p(t|C) of a query term (the dependence models give a window never seen a floor)."""
        return collection_probability(term, stats)



class QLAbsoluteDiscounting(SmoothedQueryLikelihood):
    """Query likelihood, absolute discounting (Zhai & Lafferty 2001).

    p_s(t | D) = max(tf - delta, 0) / |D| + delta |D|u / |D| p(t|C)

    The mass taken from the seen terms, delta |D|u / |D|, goes to the collection model, so
    p_s sums to 1. delta < 1 keeps every seen term above its unseen probability.
    """

    name = "ql_ad"
    description = "query likelihood, absolute discounting"
    parameters = (
        Parameter("delta", 0.7, 0.0, 1.0, "discount subtracted from each seen count",
                  low_inclusive=False, high_inclusive=False),
    )

    def smoothed(self, tfs, doc_lengths, doc_unique_terms, collection_probs, point):
        delta = point["delta"]
        return (np.maximum(tfs - delta, 0.0) + delta * doc_unique_terms * collection_probs) / doc_lengths

    def unseen_weight(self, doc_lengths, doc_unique_terms, point):
        return point["delta"] * doc_unique_terms / doc_lengths

    def seen_excess(self, tfs, doc_lengths, doc_unique_terms, collection_prob, point):
        delta = point["delta"]
        return (tfs - delta) / (delta * doc_unique_terms * collection_prob)


class QLTwoStage(GeneralJelinekMercer):
    """Query likelihood, two-stage smoothing (Zhai & Lafferty 2002) with a chosen lambda.

    p_s(t | D) = (1 - lambda) (tf + mu p(t|C)) / (|D| + mu) + lambda p(t|C)

    Dirichlet smoothing of the document, then interpolation with a query background model,
    here the collection model p(t|C); Zhai & Lafferty estimate mu by leave-one-out and
    lambda by EM on the query, here both are grid parameters. As a GJM:
    1 - lambda_D = (1 - lambda) |D| / (|D| + mu), lambda_D = (mu + lambda |D|) / (|D| + mu).
    lambda = 0 is Dirichlet, lambda = 1 the collection model alone.
    """

    name = "ql_two_stage"
    description = "query likelihood, two-stage smoothing (Dirichlet, then JM with the collection)"
    parameters = (
        MU,
        Parameter("lambda", 0.1, 0.0, 1.0, "weight of the background (collection) model in the second stage"),
    )

    def smoothed(self, tfs, doc_lengths, doc_unique_terms, collection_probs, point):
        mu, lam = point["mu"], point["lambda"]
        return (1.0 - lam) * (tfs + mu * collection_probs) / (doc_lengths + mu) + lam * collection_probs

    def interpolation(self, doc_lengths, doc_unique_terms, point):
        mu, lam = point["mu"], point["lambda"]
        return (1.0 - lam) * doc_lengths / (doc_lengths + mu), (mu + lam * doc_lengths) / (doc_lengths + mu)


class QLGJM1(GeneralJelinekMercer):
    """GJM-1 (GJM-2 paper): lambda_D = mu / (|D| + mu). Algebraically Dirichlet smoothing.

    p_s(t | D) = |D| / (|D| + mu) * tf / |D| + mu / (|D| + mu) * p(t|C)

    Computed through the GJM interpolation (not by calling QLDirichlet), so that the test of
    the identity with ``ql_dirichlet`` compares two computations.
    """

    name = "ql_gjm1"
    description = "query likelihood, GJM-1 smoothing (lambda_D = mu/(|D|+mu); equals Dirichlet)"
    parameters = (MU,)

    def interpolation(self, doc_lengths, doc_unique_terms, point):
        mu = point["mu"]
        return doc_lengths / (doc_lengths + mu), mu / (doc_lengths + mu)


class QLGJM2(GeneralJelinekMercer):
    """GJM-2 (GJM-2 paper): lambda_D = mu / (|D|u + mu), |D|u = distinct terms of D.

    p_s(t | D) = |D|u / (|D|u + mu) * tf / |D| + mu / (|D|u + mu) * p(t|C)

    "Dirichlet with |D| replaced by |D|u" in the interpolation weight only: the ML estimate
    keeps tf / |D|. (tf + mu p) / (|D|u + mu) would not sum to 1 unless |D|u = |D|.
    """

    name = "ql_gjm2"
    description = "query likelihood, GJM-2 smoothing (lambda_D = mu/(|D|u+mu))"
    parameters = (
        Parameter("mu", 1000.0, 0.0, 1e9, "pseudo-count against the number of distinct terms |D|u",
                  low_inclusive=False),
    )

    def interpolation(self, doc_lengths, doc_unique_terms, point):
        mu = point["mu"]
        return doc_unique_terms / (doc_unique_terms + mu), mu / (doc_unique_terms + mu)


class KLDirichletML(QLDirichlet):
    """KL-divergence retrieval, ML query model, Dirichlet-smoothed document model.

    score(Q, D) = sum_t p_ml(t|Q) log p_s(t|D),  p_ml(t|Q) = qtf / |Q|

    i.e. -KL(theta_Q || theta_D) minus the query entropy (which does not depend on D and is
    left out, as usual), = log P(q|D) / |Q| under Dirichlet smoothing: rank-equivalent to
    ``ql_dirichlet``. The Dirichlet parts are reused unchanged; ``query_weight`` scales the
    whole score by 1 / |Q|.
    """

    name = "kl_ml"
    description = "KL-divergence retrieval, ML query model, Dirichlet document model"
    parameters = (MU,)
    ranks_as = "ql_dirichlet"

    def query_weight(self, terms):
        return 1.0 / sum(term.qtf for term in terms)


def smoothed_probabilities(
    model: SmoothedQueryLikelihood,
    point: Mapping[str, float],
    tf_vector,
    doc_length: float,
    doc_unique: float,
    collection_probs,
) -> np.ndarray:
    """p_s(t | D) of a model for every term of a vocabulary (aligned arrays).

    ``tf_vector[i]`` is the count of term i in the document, ``collection_probs[i]`` its
    p(t|C); ``doc_length`` (>= 1) and ``doc_unique`` describe the document. The point is
    checked against the model's parameter ranges.
    """
    point = model.check_point(point)
    tfs = np.asarray(tf_vector, dtype=np.float64)
    if doc_length < 1:
        raise ValueError("smoothed_probabilities: the document must hold at least one term")
    return model.smoothed(tfs, float(doc_length), float(doc_unique), np.asarray(collection_probs, dtype=np.float64), point)

