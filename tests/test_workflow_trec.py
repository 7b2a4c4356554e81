"""The term-dependence, smoothing and constraint experiments end to end on a small TREC-format collection.

Seeds 000 (ADM), 002 (constraints) and 003 (GJM-2) compare short (title) and long (description, or
title+description+narrative) queries. A TREC collection reaches the workflow through a registry entry
``format: trec``, whose topics give the query sets ``title``, ``desc``, ``title_desc`` and
``title_desc_narr``. This test writes such a collection (SGML documents, a topic file with
``<title>``, ``<desc>`` and ``<narr>``, qrels) and runs the repo's own ``adm``, ``gjm`` and
``constraints`` experiment files on it, each with its models, query sets and claims as the repo has
them, every grid cut to its first two values and one analyzer each, plus the ADM paper's short-query
filter (``title+min3words``) if the adm file does not list it yet. Only the tables and findings are
asked for (figures and the report do not depend on what a query set holds; ADI's tests cover them).
It checks that each experiment's tables, findings (and violations) have a row per query type, that
those rows hold the queries their definition says (counted here from the fixture, not from the
workflow's output), that the parser query set carries phrases, and that a filtered query set can be
parsed (``title+min3words+parser``).

No mirror needed: the collection is written here. The numbers are checked in the unit tests; here
the wiring is.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
import yaml
from common import REPO, assert_ok, job_outputs, make_workdir, snakemake, write_yaml

COLLECTION = "mini_trec"
# The ADM paper's short queries: titles of more than two words (seed 000).
SHORT_FILTERED = "title+min3words"

# Each topic: its title, description and narrative, and the sentences its relevant documents are made
# of (the title's words adjacent, the description's noun phrases), so that every model finds pairs,
# windows and phrases to score. Three titles have two words: the word filter drops them.
TOPICS = {
    "301": {
        "title": "Solar Wind Particles",
        "desc": "How does the solar wind carry charged particles toward the magnetic field of the earth?",
        "narr": "A relevant document reports measurements of solar wind particles or their effects on satellites.",
        "sentences": ["The solar wind particles reached the satellite sensors.",
                      "Charged particles of the solar wind bend in the magnetic field of the earth.",
                      "Measurements of solar wind particles rose during the storm.",
                      "The magnetic field deflects the solar wind away from the planet."],
    },
    "302": {
        "title": "Crude Oil",
        "desc": "What do reports say about crude oil prices and the supply of crude oil from offshore fields?",
        "narr": "Documents on crude oil prices, offshore fields or refinery supply are relevant.",
        "sentences": ["Crude oil prices climbed after the offshore fields closed.",
                      "The supply of crude oil from offshore fields fell sharply.",
                      "Refinery buyers paid more for crude oil this week.",
                      "Traders expect crude oil prices to fall again."],
    },
    "303": {
        "title": "Hot Dog Vendors",
        "desc": "Find articles about street vendors who sell hot dogs and the city licences they need.",
        "narr": "A relevant document mentions hot dog vendors, their carts or their street licences.",
        "sentences": ["Hot dog vendors lined the street near the stadium.",
                      "The city council renewed the licences of hot dog vendors.",
                      "Street vendors sell hot dogs from small carts.",
                      "A hot dog vendor said the new licence costs too much."],
    },
    "304": {
        "title": "Ocean Heat Transport",
        "desc": "Which studies measure the transport of heat by ocean currents in the north atlantic?",
        "narr": "Relevant documents quantify ocean heat transport or the currents that carry it.",
        "sentences": ["Ocean heat transport in the north atlantic slowed last decade.",
                      "Ocean currents carry heat toward the pole.",
                      "The study measured ocean heat transport with floating buoys.",
                      "Warm currents in the north atlantic move heat north."],
    },
    "305": {
        "title": "Neural Network Training Methods",
        "desc": "Describe methods for training deep neural network models on large data sets.",
        "narr": "A relevant document explains a neural network training method or compares such methods.",
        "sentences": ["Neural network training methods need large data sets.",
                      "The deep neural network model was trained on images.",
                      "New training methods make neural network models converge faster.",
                      "Researchers compared network training methods on speech data."],
    },
    "306": {
        "title": "Urban Air Pollution",
        "desc": "What are the sources of air pollution in large urban areas and how is it measured?",
        "narr": "Documents on urban air pollution levels, their sources or their health effects are relevant.",
        "sentences": ["Urban air pollution rose as traffic grew.",
                      "Air pollution in urban areas comes from cars and factories.",
                      "Sensors measured urban air pollution every hour.",
                      "The health effects of air pollution worry city doctors."],
    },
    "307": {
        "title": "River Water",
        "desc": "Reports on the quality of river water and the pollution of rivers by farms.",
        "narr": "A relevant document measures river water quality or describes farm runoff into rivers.",
        "sentences": ["River water quality improved after the farms cut runoff.",
                      "Farm runoff polluted the river water downstream.",
                      "Tests of river water found high nitrate levels.",
                      "The river water carried fertiliser from nearby farms."],
    },
    "308": {
        "title": "Coastal Flood Defence Planning",
        "desc": "How do coastal towns plan flood defences against rising sea levels and storm surges?",
        "narr": "Relevant documents describe coastal flood defence planning, sea walls or storm surge barriers.",
        "sentences": ["Coastal flood defence planning began after the storm surge.",
                      "The coastal town built sea walls as flood defences.",
                      "Rising sea levels forced new flood defence planning.",
                      "Storm surge barriers protect the coastal towns."],
    },
    "309": {
        "title": "Vaccine Trials",
        "desc": "What results have clinical vaccine trials reported for new influenza vaccines?",
        "narr": "A relevant document reports the results of a clinical vaccine trial.",
        "sentences": ["Clinical vaccine trials showed strong protection.",
                      "The influenza vaccine trials enrolled many volunteers.",
                      "Vaccine trials for the new influenza strain ended early.",
                      "Results of the vaccine trials were published today."],
    },
    "310": {
        "title": "Deep Sea Mining Licences",
        "desc": "Which companies hold licences for deep sea mining of metal nodules on the ocean floor?",
        "narr": "Relevant documents name holders of deep sea mining licences or discuss nodule mining rules.",
        "sentences": ["Deep sea mining licences were granted to two companies.",
                      "Metal nodules on the ocean floor attract mining companies.",
                      "The authority reviewed deep sea mining licences this year.",
                      "Companies applied for licences to mine the deep sea floor."],
    },
}
# Sentences of no topic, which every document has one or two of (common words, as real text has).
FILLER = ["The committee met on monday to discuss the budget.",
          "Officials said the report would be published next month.",
          "The weather was mild for most of the week.",
          "A spokesman declined to comment on the plans.",
          "Prices in the shops rose slightly in the spring.",
          "The museum opened a new exhibition of old maps.",
          "Local schools will close early for the holiday.",
          "The train service was delayed by the snow."]
RELEVANT_PER_TOPIC = 5
FILLER_DOCS = 10


def fixture_documents() -> tuple[list[tuple[str, str]], list[tuple[str, str, int]]]:
    """``(docs as (docno, text), qrels as (qid, docno, relevance))``.

    Per topic: four relevant documents of three of its sentences, a fifth with one sentence only
    (weak evidence), and a judged non-relevant one that repeats the title's words apart from one
    another (the words without the phrase: it outranks the weak one on words alone, so the models
    differ); then documents of filler only."""
    rng = random.Random(27)
    docs, qrels = [], []
    for qid, topic in TOPICS.items():
        for j in range(RELEVANT_PER_TOPIC):
            docno = f"MT-{qid}-{j}"
            if j < RELEVANT_PER_TOPIC - 1:
                text = " ".join(rng.sample(topic["sentences"], 3) + rng.sample(FILLER, 1))
            else:
                text = " ".join([topic["sentences"][-1], *rng.sample(FILLER, 2)])
            docs.append((docno, text))
            qrels.append((qid, docno, 1))
        words = topic["title"].lower().split()
        scattered = " ".join(f"The {word} report came first and the {word} survey later." for word in words)
        docno = f"MT-{qid}-x"
        docs.append((docno, f"{scattered} {rng.choice(FILLER)}"))
        qrels.append((qid, docno, 0))
    for j in range(FILLER_DOCS):
        docs.append((f"MT-F-{j}", " ".join(rng.sample(FILLER, 2))))
    qrels.append(("301", "MT-F-0", 0))
    return docs, qrels


def write_fixture(data) -> dict:
    """The TREC files under ``data`` and the registry entry that names them."""
    data.mkdir(parents=True, exist_ok=True)
    docs, qrels = fixture_documents()
    sgml = []
    for docno, text in docs:
        sgml.append(f"<DOC>\n<DOCNO> {docno} </DOCNO>\n<HEADLINE>\nReport {docno}\n</HEADLINE>\n<TEXT>\n<P>\n{text}\n"
                    "</P>\n</TEXT>\n</DOC>\n")
    (data / "docs.sgml").write_text("".join(sgml), encoding="utf-8")
    topics = []
    for qid, topic in TOPICS.items():
        topics.append(f"<top>\n<num> Number: {qid}\n<title> {topic['title']}\n\n<desc> Description:\n{topic['desc']}\n\n"
                      f"<narr> Narrative:\n{topic['narr']}\n\n</top>\n\n")
    (data / "topics.txt").write_text("".join(topics), encoding="utf-8")
    (data / "qrels.txt").write_text("".join(f"{qid} 0 {docno} {rel}\n" for qid, docno, rel in qrels), encoding="utf-8")
    return {"description": "A small TREC-format collection written by tests/test_workflow_trec.py.",
            "format": "trec",
            "files": {"docs": str(data / "docs.sgml"), "queries": str(data / "topics.txt"),
                      "qrels": str(data / "qrels.txt")},
            "doc_fields": ["HEADLINE", "TEXT"]}


def small_copy(name: str) -> dict:
    """The repo's experiment file ``name`` with its models, query sets and claims, on the fixture only,
    each grid cut to its first two values (every listed value is valid) and a list of analyzers to its
    first (the rows per analyzer are tested on ADI, tests/test_workflow_papers.py): a short run."""
    experiment = yaml.safe_load((REPO / "config" / "experiments" / f"{name}.yaml").read_text(encoding="utf-8"))
    experiment["collections"] = [COLLECTION]
    if isinstance(experiment["analyzer"], list):
        experiment["analyzer"] = experiment["analyzer"][0]
    for model in experiment["models"].values():
        model["grid"] = {parameter: values[:2] if isinstance(values, list) else values
                         for parameter, values in (model.get("grid") or {}).items()}
    return experiment


#: the file stem of each table selection (workflow/rules/common.smk, TABLE_STEMS)
TABLE_STEMS = {"best": "table", "cv": "table_cv", "tuned": "table_tuned"}


def targets(name: str, experiment: dict) -> list[str]:
    """The tables and findings of an experiment (not its figures and the report, which do not depend on
    what a query set holds and are tested on ADI): what this test reads."""
    files = [f"results/tables/{name}/{TABLE_STEMS[selection]}.csv" for selection in experiment.get("tables", ["best"])]
    files.append(f"results/tables/{name}/findings.csv")
    if experiment.get("axioms"):
        files.append(f"results/tables/{name}/violations.csv")
    return files


def words(text: str) -> int:
    return len(text.split())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    pytest.importorskip("spacy")
    root = tmp_path_factory.mktemp("trec")
    entry = write_fixture(root / "data")
    repo_config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    config = {
        "registry": "config/collections.yaml",
        "num_shards": 2,
        "analyzers": repo_config["analyzers"],
        "measures": repo_config["measures"],
        "experiments": {name: f"config/experiments/{name}.yaml" for name in ("adm", "gjm", "constraints")},
    }
    workdir = make_workdir(root / "work", config, experiment={})
    experiments = {name: small_copy(name) for name in ("adm", "gjm", "constraints")}
    if SHORT_FILTERED not in experiments["adm"]["querysets"]:
        experiments["adm"]["querysets"].append(SHORT_FILTERED)
    for name, experiment in experiments.items():
        write_yaml(experiment, workdir / "config" / "experiments" / f"{name}.yaml")
    # the registry entry is all a user adds
    write_yaml({COLLECTION: entry}, workdir / "config" / "collections.yaml")
    files = [path for name, experiment in experiments.items() for path in targets(name, experiment)]
    # under 2 CPU minutes once numba's kernels are compiled and cached (more on a fresh checkout); the
    # timeout leaves room for a loaded machine
    assert_ok(snakemake(workdir, "--cores", "1", *files, timeout=1200))
    return workdir


def expected_queries(queryset: str) -> int:
    """The queries of a query set of the fixture, counted from the topic texts here."""
    if queryset == SHORT_FILTERED:
        return sum(words(topic["title"]) >= 3 for topic in TOPICS.values())
    return len(TOPICS)


# The query sets each experiment lists that the fixture has (the public collections' `text` it lacks).
EXPECTED_ROWS = {
    # adm's short queries are the titles of more than two words only, as the paper's
    "adm": {"desc+parser", SHORT_FILTERED},
    "gjm": {"title", "title_desc_narr"},
    "constraints": {"title", "title_desc", "title_desc_narr"},
}


@pytest.mark.slow
@pytest.mark.parametrize("experiment", sorted(EXPECTED_ROWS))
def test_short_and_long_queries_are_separate_rows(workdir, experiment):
    tables = workdir / "results" / "tables" / experiment
    table = pd.read_csv(tables / "table.csv")
    assert set(table["collection"]) == {COLLECTION}
    assert set(table["queryset"]) == EXPECTED_ROWS[experiment]
    models = yaml.safe_load((workdir / "config" / "experiments" / f"{experiment}.yaml").read_text())["models"]
    for queryset, rows in table.groupby("queryset"):
        assert set(rows["model"]) == set(models), queryset
    findings = pd.read_csv(tables / "findings.csv")
    assert set(findings["queryset"]) == EXPECTED_ROWS[experiment]
    for queryset, rows in findings.groupby("queryset"):
        assert set(rows["num_queries"]) == {expected_queries(queryset)}, queryset
    if experiment == "constraints":
        violations = pd.read_csv(tables / "violations.csv")
        assert set(violations["queryset"]) == EXPECTED_ROWS[experiment]


@pytest.mark.slow
def test_query_sets_hold_the_fields_they_name(workdir):
    topics = workdir / "results" / COLLECTION / "topics"
    title = pd.read_parquet(topics / "title.parquet").set_index("qid")["text"]
    assert title.to_dict() == {qid: topic["title"] for qid, topic in TOPICS.items()}
    long = pd.read_parquet(topics / "title_desc_narr.parquet").set_index("qid")["text"]
    for qid, topic in TOPICS.items():
        assert long[qid].split() == f"{topic['title']} {topic['desc']} {topic['narr']}".split()
    short = pd.read_parquet(topics / f"{SHORT_FILTERED}.parquet")
    assert set(short["qid"]) == {qid for qid, topic in TOPICS.items() if words(topic["title"]) > 2}
    parsed = pd.read_parquet(topics / "desc+parser.parquet").set_index("qid")
    assert list(parsed.index) == list(TOPICS)
    # every description has a noun phrase of two or more words ("the solar wind", "crude oil prices")
    assert all(any(len(phrase.split()) >= 2 for phrase in phrases) for phrases in parsed["phrases"])


@pytest.mark.slow
def test_a_filtered_query_set_can_be_parsed(workdir):
    # title+min3words+parser: the parse of the filtered titles (a dry run: the rule chain resolves)
    target = f"results/{COLLECTION}/topics/{SHORT_FILTERED}+parser.parquet"
    result = snakemake(workdir, "-n", target)
    assert_ok(result)
    assert job_outputs(result.stdout) == {"parse_topics": [target]}
