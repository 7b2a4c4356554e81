"""The sentence experiment end to end on a small answer-sentence TSV collection added by a registry entry alone.

No mirror needed: the collection is written here. Its sentences carry no parse, so the workflow
parses them with spaCy (the pipeline the set-up installs), builds the re-ranking query sets
(X+judged), scores the MRF sentence model over the parse trees, and writes the tables tuned on dev
with the rows over the "clean" questions. The numbers are checked in the unit tests; here the wiring is.
"""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from common import ANALYZER, assert_ok, cell_runs, make_workdir, snakemake, write_yaml

from irgrid.collections.dependency_parse import read_parses

HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
# (question id, question, [(sentence, label)]): the answers are listed first, as WikiQA's files do
QUESTIONS = {
    "dev": [
        ("D1", "who founded the gang crips", [("The Crips gang was founded by Raymond Washington in 1969 .", 1),
                                               ("Gang members said the crips are violent .", 0),
                                               ("Street gangs grew in Los Angeles .", 0)]),
        ("D2", "where is the eiffel tower", [("The Eiffel Tower stands in Paris .", 1),
                                             ("The tower was built for a fair .", 0),
                                             ("Eiffel designed bridges too .", 0)]),
        ("D3", "what do bees make", [("Bees make honey and wax .", 1), ("Honey is sweet .", 1)]),  # only positives
    ],
    "test": [
        ("T1", "who wrote the play hamlet", [("William Shakespeare wrote the play Hamlet .", 1),
                                             ("Hamlet is a prince of Denmark .", 0),
                                             ("The play was staged in London .", 0)]),
        ("T2", "when did the titanic sink", [("The Titanic sank in April 1912 .", 1),
                                             ("The ship hit an iceberg .", 0),
                                             ("Titanic films were made later .", 0)]),
        ("T3", "what is the capital of peru", [("Lima is the capital of Peru .", 1),
                                               ("Peru has mountains .", 0)]),
        ("T4", "how tall is mount everest", [("Everest is in Nepal .", 0), ("Mountains are tall .", 0)]),  # no answer
    ],
}
EXPERIMENT = {
    "title": "Sentences on a mini QA set (test)",
    "collections": ["mini_qa"],
    "querysets": ["dev+judged", "test+judged", "test+alljudged", "dev", "test"],
    "analyzer": "porter_smart",
    "models": {
        "kld": {"family": "kl_ml", "grid": {"mu": [10, 50]}},
        "word_count": {"family": "word_count"},
        "mrf_fdm": {"family": "mrf_sentence", "grid": {"alpha_i": 0.5, "lambda_sr": [0.1, 0.3], "lambda_pr": 0.1}},
        # RM3 on the MRF: feedback sentences from the MRF (with the parses), the expansion scored by ql_jm
        "mrf_sdm_rm3": {"family": "mrf_sentence+rm3", "grid": {"alpha_i": 0.5, "lambda_sr": 0.3, "fb_docs": 2,
                                                                "fb_terms": 5}},
    },
    "baseline": "kld",
    "table_measures": ["AP", "RR", "P@1"],
    "tables": ["tuned", "best"],
    "tune_on": {"test+judged": "dev+judged", "test+alljudged": "dev+judged", "test": "dev"},
    "query_subsets": ["mixed", "positive"],
    "query_counts": True,
    "tie_aware": True,
}


@pytest.mark.slow
def test_answer_tsv_collection_through_the_sentence_experiment(tmp_path):
    pytest.importorskip("spacy")
    data = tmp_path / "data"
    data.mkdir()
    for role, questions in QUESTIONS.items():
        lines = [HEADER]
        for qid, question, candidates in questions:
            for i, (sentence, label) in enumerate(candidates):
                lines.append(f"{qid}\t{question}\t{qid}-doc\ttitle\t{qid}-{i}\t{sentence}\t{label}\n")
        (data / f"{role}.tsv").write_text("".join(lines), encoding="utf-8")
    config = {
        "registry": "config/collections.yaml",
        "num_shards": 2,
        "analyzers": {"porter_smart": {**ANALYZER, "stopwords": "smart"}},
        "measures": ["AP", "RR", "P@1"],
        "experiments": {"sentences": "config/experiments/sentences.yaml"},
    }
    workdir = make_workdir(tmp_path / "work", config, experiment={})
    write_yaml(EXPERIMENT, workdir / "config" / "experiments" / "sentences.yaml")
    registry = workdir / "config" / "collections.yaml"
    entries = yaml.safe_load(registry.read_text(encoding="utf-8"))
    # the registry entry is all a user adds
    entries["mini_qa"] = {"format": "answer_tsv",
                          "files": {"dev": str(data / "dev.tsv"), "test": str(data / "test.tsv")}}
    write_yaml(entries, registry)
    assert_ok(snakemake(workdir))

    parses = read_parses(workdir / "results" / "mini_qa" / "parses")
    assert len(parses) == sum(len(c) for qs in QUESTIONS.values() for _, _, c in qs)  # every sentence parsed once
    query_parses = read_parses(workdir / "results" / "mini_qa" / "parses" / "queries.parquet")  # and every question
    assert set(query_parses) == {qid for qs in QUESTIONS.values() for qid, _, _ in qs}
    assert query_parses["T1"].tokens == ("who", "wrote", "the", "play", "hamlet")
    topics = workdir / "results" / "mini_qa" / "topics"
    every = pd.read_parquet(topics / "test+alljudged.parquet").set_index("qid")
    assert len(every.loc["T1", "candidates"]) == 3 and every.loc["T4", "relevant"] == 0
    # X+judged: the questions with a positive candidate only (T4 has none)
    assert list(pd.read_parquet(topics / "test+judged.parquet")["qid"]) == ["T1", "T2", "T3"]
    tuned = (workdir / "results" / "tables" / "sentences" / "table_tuned.md").read_text(encoding="utf-8")
    assert "mini_qa (test+judged; 3 queries)" in tuned
    assert "mini_qa (test+alljudged; 4 queries)" in tuned
    assert "test+alljudged, questions with a positive candidate; 3 queries" in tuned
    assert "test+alljudged, questions with a positive and a negative candidate; 3 queries" in tuned  # T1-T3
    assert "dev+judged;" not in tuned  # the tuning set chooses, it is not a row
    # tie_aware: the expected value over tied orderings beside each measure, and the ties' reach
    assert "Cells: AP / E[AP] / RR / E[RR] / P@1 / E[P@1] / tied_relevant@1 / tied_relevant;" in tuned
    [run] = list(cell_runs(workdir, "mini_qa", "porter_smart", "test+alljudged", "mrf_fdm", "any").values())
    assert set(run["qid"]) == {"T1", "T2", "T3", "T4"}
    assert run.groupby("qid").size().to_dict() == {"T1": 3, "T2": 3, "T3": 2, "T4": 2}  # every candidate ranked
    [run] = list(cell_runs(workdir, "mini_qa", "porter_smart", "test+judged", "mrf_fdm", "any").values())
    assert run.groupby("qid").size().to_dict() == {"T1": 3, "T2": 3, "T3": 2}
    # with feedback: re-ranking keeps to each question's candidates, retrieval draws from the pool
    [run] = list(cell_runs(workdir, "mini_qa", "porter_smart", "test+judged", "mrf_sdm_rm3", "any").values())
    assert run.groupby("qid").size().to_dict() == {"T1": 3, "T2": 3, "T3": 2}
    [run] = list(cell_runs(workdir, "mini_qa", "porter_smart", "test", "mrf_sdm_rm3", "any").values())
    assert len(run) and set(run["qid"]) <= {"T1", "T2", "T3", "T4"}
