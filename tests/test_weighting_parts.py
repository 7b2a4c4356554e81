"""A weighting function added as one file plus one registry line scores through every path.

The tiny weighting here (a TF-IDF with a log tf, (1 + ln tf) ln(N / df), no document part)
stands for a new file in src/irgrid/models/parts/ (its parts and the family that scores with them)
and its line in the family registry (MODEL_FAMILIES): its scores on a 3-document index are checked
against numbers worked out by hand, and the fused kernel's, the numpy path's and per-query
scoring's runs against each other bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numba import njit

from irgrid.models import MODEL_FAMILIES
from irgrid.models.base import WeightedModel
from irgrid.models.parts import WEIGHTINGS
from irgrid.models.parts.base import Weighting
from irgrid.retrieve import Scorer
from irgrid.retrieve.ranking import top_k
from tiny_index import TinyIndex


# --- the new weighting's file: one part and its constants -------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def log_tf_idf_part(tf, doc_length, idf, params):
    """(1 + ln tf) idf of one posting."""
    return (1.0 + math.log(tf)) * idf


def no_params(model, stats, point):
    return np.zeros(1, dtype=np.float64)


def log_idf(model, terms, stats, point):
    return np.array([math.log(stats.num_docs / term.df) for term in terms], dtype=np.float64)


LOG_TF_IDF = Weighting("log_tf_idf", log_tf_idf_part, no_params, log_idf)


class LogTFIDF(WeightedModel):
    name = "log_tf_idf"
    parameters = ()
    parts = LOG_TF_IDF
# ------------------------------------------------------------------------------------------------


DOCS = {"d1": "a b a".split(), "d2": "b c".split(), "d3": "a c c c".split()}
TOPICS = pd.DataFrame({"qid": ["q1", "q2"], "text": ["a c", "b"]})
# by hand: N = 3; a and c occur in 2 documents (idf ln 1.5 = 0.405465108), b in 2 as well
# q1: d1 = (1 + ln 2) ln 1.5 = 0.686512105, d2 = ln 1.5 = 0.405465108,
#     d3 = ln 1.5 + (1 + ln 3) ln 1.5 = (2 + ln 3) ln 1.5 = 1.256379167
# q2: d1 = d2 = ln 1.5, tied: docno order
EXPECTED = {"q1": [("d3", 1.256379167), ("d1", 0.686512105), ("d2", 0.405465108)],
            "q2": [("d1", 0.405465108), ("d2", 0.405465108)]}


@pytest.fixture(params=[True, False], ids=["length-read", "tabulated"])
def model(request, monkeypatch):
    # the registry line (the family's; the kernel finds the weighting by its key, no other list needs it),
    # and the weighting once as a part of every posting, once as one tabulated per block
    weighting = dataclasses.replace(LOG_TF_IDF, reads_length=request.param)
    monkeypatch.setattr(LogTFIDF, "parts", weighting)
    monkeypatch.setattr(LogTFIDF, "weighting", weighting)
    monkeypatch.setitem(MODEL_FAMILIES, LogTFIDF.name, LogTFIDF)
    return LogTFIDF()


def ranked(run: pd.DataFrame) -> dict[str, list[tuple[str, float]]]:
    return {qid: list(zip(group["docno"], group["score"])) for qid, group in run.groupby("qid", sort=True)}


def test_a_new_weighting_scores_as_worked_out_by_hand(model):
    scorer = Scorer(TinyIndex(DOCS))
    prepared = scorer.prepare(TOPICS, model, [{}])
    got = ranked(scorer.run(model, prepared, {}, 10))
    assert {qid: [docno for docno, _ in rows] for qid, rows in got.items()} == {
        qid: [docno for docno, _ in rows] for qid, rows in EXPECTED.items()}
    for qid, rows in EXPECTED.items():
        assert [score for _, score in got[qid]] == pytest.approx([score for _, score in rows], abs=1e-9)


def test_a_new_weighting_is_the_same_to_the_bit_on_every_path(model):
    scorer = Scorer(TinyIndex(DOCS))
    prepared = scorer.prepare(TOPICS, model, [{}])
    fused = scorer.top(model, prepared, {}, 10)  # the fused kernel: the model names a weighting
    numpy_scores = scorer.score_all(model, prepared, {})  # the model's term_scores over the whole set
    numpy_path = top_k(numpy_scores, prepared.candidates, prepared.candidate_offsets, scorer.docno_order, 10)
    per_query = scorer._run_per_query(model, list(prepared), {}, 10)
    assert fused[0].tolist() == numpy_path[0].tolist()
    assert fused[1].view(np.int64).tolist() == numpy_path[1].view(np.int64).tolist()
    assert fused[2].tolist() == numpy_path[2].tolist()
    assert fused[1].view(np.int64).tolist() == per_query["score"].to_numpy(np.float64).view(np.int64).tolist()


def scoring_path(model) -> str:
    """The path Scorer takes for a family (Scorer.top): what docs/models.md's table must say."""
    if model.weighting is not None:
        return f"fused kernel, weighting `{model.weighting.name}`"
    return "per query, from feature counts" if model.scores_candidates else "numpy `term_scores` / `document_scores`"


def test_the_scoring_paths_table_of_the_docs_names_every_family_once_on_its_path():
    text = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text()
    section = text.split("## Scoring paths", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and "`" in cells[1]:
            for family in re.findall(r"`([^`]+)`", cells[1]):
                assert family not in documented, family
                documented[family] = cells[0]
    assert documented == {name: scoring_path(model) for name, model in MODEL_FAMILIES.items()}


def test_an_unpickled_weighting_makes_its_kernel_key_anew_for_the_loops(monkeypatch):
    # a worker process knows a key only from a weighting that made it there: the pickle must not carry it
    from irgrid.models.parts import base

    key = WEIGHTINGS["dirichlet"].kernel_key
    data = pickle.dumps(WEIGHTINGS["dirichlet"])
    monkeypatch.setattr(base, "_DECLARED", {})
    unpickled = pickle.loads(data)
    assert "kernel_key" not in vars(unpickled)
    assert unpickled.kernel_key == key
    assert base.declared(key) is unpickled
