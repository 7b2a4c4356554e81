"""RM3 with the sentence MRF (``mrf_sentence+rm3``): the family declares the bag-of-words family that
scores its expanded query (its single-term potential, Jelinek-Mercer query likelihood: ``ql_jm`` with
alpha_i as lambda), and the feedback stage takes its feedback sentences from the MRF, parses and all.

Expected scores are worked out here from the formulas (docs/models.md, "MRF sentence retrieval" and
"Query likelihood"), not taken from the code's output."""

from __future__ import annotations

import copy
import math

import numpy as np
import pandas as pd
import pytest

from irgrid.collections.dependency_parse import Parse
from irgrid.errors import ConfigError
from irgrid.features.sentence_parses import SentenceParses
from irgrid.feedback import stage
from irgrid.models import get_model
from irgrid.models.base import Parameter, WeightedModel
from irgrid.models.feedback import expansion_family, feedback_model
from irgrid.models.lm import QLJelinekMercer
from irgrid.models.sentence import SentenceMRF
from irgrid.retrieve import Scorer, retrieve_grid
from tests.common import REPO, record_first_stages
from tests.tiny_index import TinyForwardIndex

# each sentence's tree a chain: the first word the root, every other word's head the word before it
SENTENCES = {
    "s1": "gang members said police".split(),
    "s2": "members of gang arrested".split(),
    "s3": "police arrested gang members".split(),
    "s4": "prison guards said".split(),
    "s5": "guards of prison".split(),
    "s6": "weather was fine".split(),
}


def tiny(sentences=SENTENCES):
    index = TinyForwardIndex(sentences)
    parses = {docno: Parse.from_one_based(tokens, list(range(len(tokens))), ["dep"] * len(tokens))
              for docno, tokens in sentences.items()}
    return index, SentenceParses(parses, index.docnos, index.analyzer)


def topics(*texts):
    return pd.DataFrame({"qid": [str(i + 1) for i in range(len(texts))], "text": list(texts)})


FEEDBACK = {"fb_docs": 2, "fb_terms": 4, "original_query_weight": 0.4}


# --- the declaration --------------------------------------------------------------------------------


def test_the_sentence_mrfs_expanded_query_is_scored_by_ql_jm_at_alpha_i():
    model = type(get_model("mrf_sentence+rm3"))
    assert model.expansion is QLJelinekMercer
    assert model.parameter_names() == [*SentenceMRF.parameter_names(), "fb_docs", "fb_terms",
                                       "original_query_weight", "fb_max_df"]
    point = model.check_point({"alpha_i": 0.3, "lambda_i": 0.7, "lambda_sr": 0.2, "alpha_sr": 0.9, **FEEDBACK})
    assert model.expansion_point(point) == {"lambda": 0.3}
    # the first stage reads the parses: the workflow gives them to its chunks
    assert model.uses_parses and model.base is SentenceMRF
    assert type(get_model("mrf_sentence+ax_anserini")).expansion is QLJelinekMercer
    # a family without a declaration still takes its parameters by name (SDM's mu for QL)
    sdm = type(get_model("sdm+rm3"))
    assert sdm.expansion_point(sdm.check_point({"mu": 250.0})) == {"mu": 250.0}


def _declaring(name, expands_as, mapping, parameters):
    return type(name, (WeightedModel,), {"name": name, "parameters": parameters, "expands_as": expands_as,
                                         "expansion_parameters": mapping})


ALPHA = Parameter("alpha", 0.5, 0.0, 1.0, "", low_inclusive=False)


@pytest.mark.parametrize(("declared", "message"), [
    (("nonesuch", {"lambda": "alpha"}, (ALPHA,)), "no registered bag-of-words family"),
    (("sdm", {"mu": "alpha"}, (ALPHA,)), "no registered bag-of-words family"),
    (("ql_jm", {"mu": "alpha"}, (ALPHA,)), "'ql_jm' has no parameter 'mu'"),
    (("ql_jm", {}, (ALPHA,)), "'lambda' takes its value from none of its parameters"),
    # alpha = 0 is a point of the family's, not of ql_jm's (lambda > 0)
    (("ql_jm", {"lambda": "alpha"}, (Parameter("alpha", 0.5, 0.0, 1.0, ""),)), "with the same range"),
    (("ql_jm", {"lambda": "alpha"}, (Parameter("alpha", 0.5, 0.0, 2.0, "", low_inclusive=False),)),
     "with the same range"),
])
def test_a_declared_expansion_family_is_checked(declared, message):
    family = _declaring("declaring", *declared)
    families = {"ql_jm": QLJelinekMercer, "sdm": type(get_model("sdm")), "declaring": family}
    with pytest.raises(ConfigError, match=message):
        expansion_family(family, families)


def test_a_declared_expansion_family_with_a_narrower_range_is_taken():
    narrower = Parameter("alpha", 0.5, 0.1, 0.9, "")
    family = _declaring("narrower", "ql_jm", {"lambda": "alpha"}, (narrower,))
    made = feedback_model("narrower+rm3", {"ql_jm": QLJelinekMercer, "narrower": family})
    assert made.expansion is QLJelinekMercer
    assert made.expansion_point(made.check_point({"alpha": 0.2})) == {"lambda": 0.2}


# --- the second stage, by hand ----------------------------------------------------------------------


def test_the_second_stage_scores_the_expanded_query_as_ql_jm_by_hand():
    index, _ = tiny()
    model = type(get_model("mrf_sentence+rm3"))
    alpha = 0.3
    expanded = {"1": {"gang": 0.5, "members": 0.25, "police": 0.15, "arrested": 0.1}}
    scorer = Scorer(index)
    point = model.check_point({"alpha_i": alpha, "lambda_sr": 0.5, **FEEDBACK})
    run = scorer.run(model.expansion(), scorer.prepare_weighted(expanded), model.expansion_point(point), 10)
    # sum_w weight(w) log((1 - alpha) tf / |S| + alpha cf / |C|), over the sentences holding a word
    total = sum(len(tokens) for tokens in SENTENCES.values())  # |C| = 21
    cf = {"gang": 3, "members": 3, "police": 2, "arrested": 2}
    expected = {}
    for docno, tokens in SENTENCES.items():
        if set(tokens) & set(cf):
            expected[docno] = sum(weight * math.log((1 - alpha) * tokens.count(word) / len(tokens)
                                                    + alpha * cf[word] / total)
                                  for word, weight in expanded["1"].items())
    assert sorted(run["docno"]) == sorted(expected)
    for docno, score in zip(run["docno"], run["score"]):
        assert score == pytest.approx(expected[docno], rel=1e-12)
    # ql_jm+rm3's second stage on the same expanded query: the same run
    ql = scorer.run(QLJelinekMercer(), scorer.prepare_weighted(expanded), {"lambda": alpha}, 10)
    assert run.equals(ql)


def test_mrf_sentence_with_rm3_scores_its_expanded_queries_as_ql_jm_with_rm3(monkeypatch):
    # the whole stage: the MRF (with a contiguous-group potential) ranks the feedback sentences; whatever
    # expanded queries it gives, the run is ql_jm+rm3's second stage on them at lambda = alpha_i
    index, parses = tiny()
    made = []
    original = stage.expanded_queries

    def recorded(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(stage, "expanded_queries", recorded)
    point = {"alpha_i": 0.4, "lambda_i": 0.8, "lambda_sr": 0.5, "beta_sr": 0.5, **FEEDBACK}
    queries = topics("gang members", "prison guards")
    run = retrieve_grid(index, queries, "mrf_sentence+rm3", [point], depth=10, parses=parses)[0]
    [expanded] = made
    assert set(expanded["1"]) > {"gang", "members"}  # expanded beyond the query's words
    scorer = Scorer(index)
    expected = scorer.run(QLJelinekMercer(), scorer.prepare_weighted(expanded), {"lambda": 0.4}, 10)
    assert list(zip(run["qid"], run["docno"])) == list(zip(expected["qid"], expected["docno"]))
    assert np.allclose(run["score"], expected["score"], rtol=1e-12)


def test_mrf_sentence_with_rm3_is_ql_jm_with_rm3_where_the_mrf_is_ql_jm():
    # FIDM with lambda_i = 1 scores a one-word query as ql_jm at lambda = alpha_i does (the one term's
    # potential, divided by |Q| = 1): the same feedback sentences, posterior, expanded query and run
    index, parses = tiny()
    queries = topics("gang", "prison", "arrested")
    for alpha in (0.2, 0.7):
        run = retrieve_grid(index, queries, "mrf_sentence+rm3", [{"alpha_i": alpha, **FEEDBACK}], depth=10,
                            parses=parses)[0]
        expected = retrieve_grid(index, queries, "ql_jm+rm3", [{"lambda": alpha, **FEEDBACK}], depth=10)[0]
        assert len(run) > len(queries)
        assert list(zip(run["qid"], run["docno"])) == list(zip(expected["qid"], expected["docno"]))
        assert np.allclose(run["score"], expected["score"], rtol=1e-12)


def test_mrf_sentence_with_rm3_takes_its_feedback_sentences_from_the_mrf(monkeypatch):
    calls = record_first_stages(monkeypatch)
    index, parses = tiny()
    grid = [{"alpha_i": 0.5, "lambda_sr": 0.3, "fb_docs": fb_docs, "original_query_weight": weight}
            for fb_docs in (1, 2) for weight in (0.3, 0.6)]
    runs = retrieve_grid(index, topics("gang members"), "mrf_sentence+rm3", grid, depth=10, parses=parses)
    assert calls == ["mrf_sentence"] and len(runs) == 4
    # s2 and s3 hold both words; "police" (in s1 and s3) reaches no sentence without a query word, so
    # take a query whose expansion does: "police" alone ranks s1 and s3, whose words reach s2 (arrested)
    run = retrieve_grid(index, topics("police"), "mrf_sentence+rm3", [{"alpha_i": 0.5, **FEEDBACK}], depth=10,
                        parses=parses)[0]
    assert {"s1", "s3"} < set(run["docno"]) and "s2" in set(run["docno"])


def test_feedback_on_a_re_ranking_query_set_keeps_to_each_querys_candidates(monkeypatch):
    # the answer-selection protocol (X+judged): each question ranks its own candidates only; the
    # feedback sentences are its candidates' top fb_docs, the second stage ranks every candidate
    index, parses = tiny()
    made = []
    original = stage.expanded_queries

    def recorded(method, index, query_tokens, rankings, *args, **kwargs):
        made.append((rankings, original(method, index, query_tokens, rankings, *args, **kwargs)))
        return made[-1][1]

    monkeypatch.setattr(stage, "expanded_queries", recorded)
    candidates = {"1": ["s2", "s3", "s6"], "2": ["s1", "s4", "s5"]}
    queries = topics("gang members", "prison guards").assign(candidates=[candidates["1"], candidates["2"]])
    point = {"alpha_i": 0.5, "lambda_sr": 0.3, **FEEDBACK}
    run = retrieve_grid(index, queries, "mrf_sentence+rm3", [point], depth=10, parses=parses)[0]
    [(rankings, expanded)] = made
    for qid, listed in candidates.items():
        ranked = run[run["qid"] == qid]
        assert sorted(ranked["docno"]) == sorted(listed)  # every candidate, nothing else
        assert {index.docnos[d] for d in rankings[qid][0]} <= set(listed)  # feedback from the candidates
        # a candidate holding an expanded word scores as in the run from the collection (ql_jm at alpha_i)
        scorer = Scorer(index)
        free = scorer.run(QLJelinekMercer(), scorer.prepare_weighted({qid: expanded[qid]}), {"lambda": 0.5}, 10)
        free = dict(zip(free["docno"], free["score"]))
        for docno, score in zip(ranked["docno"], ranked["score"]):
            if set(index.docs[docno]) & set(expanded[qid]):
                assert score == pytest.approx(free[docno], rel=1e-12)
    # "weather was fine" holds no word of either query or its expansion: ranked last, as re-ranking does
    assert list(run[run["qid"] == "1"]["docno"])[-1] == "s6"


def test_mrf_sentence_with_rm3_without_parses_says_what_it_needs():
    index, _ = tiny()
    with pytest.raises(ConfigError, match="needs the collection's sentence parses"):
        retrieve_grid(index, topics("gang members"), "mrf_sentence+rm3", [{}], depth=10)


# --- the sentences experiment names it ---------------------------------------------------------------


def test_the_sentences_experiment_can_name_mrf_sentence_with_rm3():
    from irgrid.config import load_config, load_yaml, retrieval_chunks

    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    experiment = copy.deepcopy(load_yaml(REPO / "config" / "experiments" / "sentences.yaml"))
    experiment["models"]["mrf_fidm_rm3"] = {"family": "mrf_sentence+rm3", "label": "FIDM+RM3",
                                            "grid": {"alpha_i": [0.1, 0.5], "lambda_sr": 0, "lambda_pr": 0,
                                                     "fb_docs": [5, 10], "original_query_weight": 0.5}}
    config["experiments"] = {"sentences": experiment}
    loaded = load_config(config)
    models = loaded["_experiments"]["sentences"]["models"]
    assert models["mrf_fidm_rm3"]["family"] == "mrf_sentence+rm3"
    chunks = [chunk for chunk in retrieval_chunks(loaded)
              if any(cell.model == "mrf_fidm_rm3" for cell in chunk.cells)]
    # four query sets (re-ranking each question's candidates and retrieving from the pooled
    # sentences) x four points, in chunks read with the collection's parses
    assert {chunk.queryset for chunk in chunks} == {"dev+judged", "test+judged", "dev", "test"}
    assert sum(cell.model == "mrf_fidm_rm3" for chunk in chunks for cell in chunk.cells) == 16
    assert chunks and all(chunk.uses_parses for chunk in chunks)
    # a point outside either family's range is refused when the config loads
    experiment["models"]["mrf_fidm_rm3"]["grid"]["alpha_i"] = [0.0]
    with pytest.raises(ConfigError, match="alpha_i"):
        load_config(config)
