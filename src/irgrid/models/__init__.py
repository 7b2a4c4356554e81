"""The model registry: config names a model family by its ``name``."""

from __future__ import annotations

from ..errors import ConfigError
from .base import CollectionStatistics, Parameter, QueryFeature, QueryTerm, RetrievalModel
from .dependence import AxiomaticDependence, BigramLM, ConceptUnigramLM, FeatureModel, FullDependence, SequentialDependence
from .feedback import FeedbackModel, feedback_model
from .lm import (
    QLGJM1,
    QLGJM2,
    KLDirichletML,
    QLAbsoluteDiscounting,
    QLDirichlet,
    QLJelinekMercer,
    QLTwoStage,
    SmoothedQueryLikelihood,
    smoothed_probabilities,
)
from .lucene import BM25Lucene, QLLucene
from .phrase import FixedPhraseWeight, PhraseInseparability, PhraseModel, PhrasesOnly, UnigramWords
from .sentence import SentenceMRF, SentenceTFIDF
from .weighting import BM25, BM25RSJ, MBM25, TFIDF, EvolvedScheme, InL2, PivotedNormalisation, WordCount

MODEL_FAMILIES: dict[str, type[RetrievalModel]] = {
    model.name: model
    for model in (BM25, QLJelinekMercer, QLDirichlet, QLAbsoluteDiscounting, QLTwoStage, QLGJM1, QLGJM2, KLDirichletML,
                  BM25RSJ, MBM25, PivotedNormalisation, InL2, TFIDF, EvolvedScheme,
                  SequentialDependence, FullDependence, BigramLM, ConceptUnigramLM, AxiomaticDependence,
                  UnigramWords, PhrasesOnly, FixedPhraseWeight, PhraseInseparability, SentenceMRF, SentenceTFIDF,
                  WordCount, BM25Lucene, QLLucene)
}


def get_model(family: str) -> RetrievalModel:
    """An instance of the model family named ``family``.

    ``<family>+<method>`` is ``<family>`` with a feedback stage (:mod:`irgrid.models.feedback`;
    :mod:`irgrid.feedback` runs it).
    """
    if "+" in family:
        return feedback_model(family, MODEL_FAMILIES)()
    try:
        return MODEL_FAMILIES[family]()
    except KeyError:
        raise ConfigError(
            f"unknown model family {family!r}; known families: {', '.join(sorted(MODEL_FAMILIES))}"
        ) from None


__all__ = [
    "AxiomaticDependence",
    "BM25",
    "BM25Lucene",
    "BM25RSJ",
    "BigramLM",
    "ConceptUnigramLM",
    "EvolvedScheme",
    "FeatureModel",
    "FeedbackModel",
    "FullDependence",
    "CollectionStatistics",
    "InL2",
    "KLDirichletML",
    "MBM25",
    "MODEL_FAMILIES",
    "Parameter",
    "PhraseInseparability",
    "PhraseModel",
    "PhrasesOnly",
    "PivotedNormalisation",
    "FixedPhraseWeight",
    "UnigramWords",
    "WordCount",
    "QLAbsoluteDiscounting",
    "QLDirichlet",
    "QLLucene",
    "QLGJM1",
    "QLGJM2",
    "QLJelinekMercer",
    "QLTwoStage",
    "QueryFeature",
    "QueryTerm",
    "SentenceMRF",
    "SentenceTFIDF",
    "SequentialDependence",
    "RetrievalModel",
    "SmoothedQueryLikelihood",
    "TFIDF",
    "get_model",
    "smoothed_probabilities",
]
