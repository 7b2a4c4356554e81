"""The paper experiments' outputs end to end, on ADI with tiny grids.

Checks that an experiment asking for cross-validated tables, Holm-corrected tests, figures and
the constraint-violation analysis gets every file it names, in every format, and that the report
links them all. The numbers themselves are checked in the unit tests (test_tables, test_stats,
test_axioms, test_constraints); here the wiring is.
"""

from __future__ import annotations

import pandas as pd
import pytest
from common import ANALYZER, assert_ok, cell_runs, find_mirror, make_workdir, snakemake, write_yaml

from irgrid.phrases import has_phrase, phrase_words

GJM = {
    "title": "Smoothing on ADI (test)",
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {
        "jm": {"family": "ql_jm", "grid": {"lambda": [0.3, 0.7]}},
        "dirichlet": {"family": "ql_dirichlet", "grid": {"mu": [500, 1000]}},
        "gjm2": {"family": "ql_gjm2", "grid": {"mu": [50, 200]}},
    },
    "baseline": "dirichlet",
    "table_measures": ["AP", "P@10"],
    "tables": ["best", "cv"],
    "folds": 3,
    "correction": "holm",
    "figures": True,
}
CONSTRAINTS = {
    "title": "Constraints on ADI (test)",
    "collections": ["adi"],
    "analyzer": ["porter", "porter_smart"],
    "models": {
        "bm25_default": {"family": "bm25_rsj", "grid": {"b": [0.5, 0.75]}},
        "dfr": {"family": "inl2", "grid": {"c": 1}},
        "piv": {"family": "piv", "grid": {"s": 0.2}},
    },
    "baseline": "dfr",
    "correction": "holm",
    "axioms": True,
    "axiom_depth": 30,
}
ADM = {
    "title": "Term dependence on ADI (test)",
    "collections": ["adi"],
    "querysets": ["text", "text+parser"],
    "analyzer": "porter",
    "models": {
        "ug": {"family": "kl_ml", "grid": {"mu": [500, 1000]}},
        "culm": {"family": "culm", "grid": {"mu": 1000}},
        "adm": {"family": "adm", "grid": {"mu": 1000, "window": [2, 8], "beta": [0.5, 0.9]}},
        "sdm": {"family": "sdm", "grid": {"mu": 1000}},
    },
    "baseline": "ug",
    "correction": "holm",
    "tables": ["best", "cv"],
    "folds": 3,
    "parameter_figures": ["window"],
}
PHRASES = {
    "title": "Phrases on ADI (test)",
    "collections": ["adi"],
    "querysets": ["text+list", "text+pmi"],
    "analyzer": "porter",
    "models": {
        "uni": {"family": "uni", "grid": {"mu": [500, 1000]}},
        "pm": {"family": "pm", "grid": {"mu": 1000, "t1": [0.0, 0.2]}},
    },
    "baseline": "uni",
    "table_measures": ["AP"],
    "query_subsets": ["phrases"],
    "query_counts": True,
}
# phrases of ADI's queries (documentation and retrieval), one of them twice and in other case
PHRASE_LIST = "# test list\ninformation retrieval\nInformation Retrieval\n\nmachine translation\ncomputer science\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    mirror = find_mirror()
    if mirror is None:
        pytest.skip("the ADI collection is not in a local mirror (../shared/collections or IRGRID_MIRROR)")
    config = {
        "registry": "config/collections.yaml",
        "mirror": str(mirror),
        "num_shards": 2,
        "analyzers": {"porter": dict(ANALYZER), "porter_smart": {**ANALYZER, "stopwords": "smart"}},
        "measures": ["AP", "P@10"],
        "experiments": {"gjm": "config/experiments/gjm.yaml", "constraints": "config/experiments/constraints.yaml",
                        "adm": "config/experiments/adm.yaml", "phrases": "config/experiments/phrases.yaml"},
        "phrases": {"list": "config/phrases.txt", "pmi_threshold": 2.0, "min_count": 2},
    }
    workdir = make_workdir(tmp_path_factory.mktemp("papers"), config, experiment={})
    write_yaml(GJM, workdir / "config" / "experiments" / "gjm.yaml")
    write_yaml(CONSTRAINTS, workdir / "config" / "experiments" / "constraints.yaml")
    write_yaml(ADM, workdir / "config" / "experiments" / "adm.yaml")
    write_yaml(PHRASES, workdir / "config" / "experiments" / "phrases.yaml")
    (workdir / "config" / "phrases.txt").write_text(PHRASE_LIST, encoding="utf-8")
    assert_ok(snakemake(workdir))
    return workdir


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("papers")
def test_best_and_cross_validated_tables_with_corrected_p_values(workdir):
    tables = workdir / "results" / "tables" / "gjm"
    for stem in ["table", "table_cv"]:
        for suffix in ["md", "tex", "html", "csv"]:
            assert (tables / f"{stem}.{suffix}").stat().st_size > 0
    assert "cross-validation" in (tables / "table_cv.md").read_text()
    assert "Holm-corrected" in (tables / "table.md").read_text()
    summary = pd.read_csv(tables / "table_cv.csv")
    assert set(summary["model"]) == {"jm", "dirichlet", "gjm2"}
    assert (summary["selection"] == "cv").all()
    compared = summary[summary["model"] != "dirichlet"]
    assert (compared["p_corrected"] >= compared["p_value"]).all()


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("papers")
def test_figures_and_report(workdir):
    figures = workdir / "results" / "figures"
    for name in ["gjm/by_method", "gjm/sensitivity", "constraints/violations_vs_measure"]:
        for suffix in ["svg", "png"]:
            assert (figures / f"{name}.{suffix}").stat().st_size > 1000
    report = (workdir / "results" / "report.html").read_text()
    for linked in ["table_cv.md", "by_method.svg", "sensitivity.svg", "violations_vs_measure.svg", "violations.md"]:
        assert linked in report


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("papers")
def test_violations_for_each_function_and_analyzer(workdir):
    table = pd.read_csv(workdir / "results" / "tables" / "constraints" / "violations.csv")
    # One row per function and analyzer; rows are labelled by query set and analyzer.
    assert len(table) == 3 * 2
    assert set(table["queryset"]) == {"text, porter", "text, porter_smart"}
    assert {"C1", "C2", "C3", "C4", "total", "common_total", "AP", "rho_paper_own", "p_less_paper_common"} \
        <= set(table.columns)
    assert (table[["C1", "C2", "C3", "C4", "common_C1", "common_C2", "common_C3", "common_C4"]] >= 0).all().all()
    # the common run is the baseline's (dfr): its own counts are its common counts
    dfr = table[table["model"] == "dfr"]
    assert (dfr["total"] == dfr["common_total"]).all()
    claims = pd.read_csv(workdir / "results" / "tables" / "constraints" / "violations_claims.csv")
    assert set(claims["claim"]) == {"inverse_correlation"} and len(claims) == 2 * 2  # analyzers x document sets
    assert "## Claims" in (workdir / "results" / "tables" / "constraints" / "violations.md").read_text()
    per_doc = pd.read_parquet(workdir / "results" / "axioms" / "constraints" / "adi.parquet")
    # At most axiom_depth documents of each query were analysed, on each document set.
    assert set(per_doc["counted_on"]) == {"own", "common"}
    assert per_doc.groupby(["model", "analyzer", "qid", "counted_on"]).size().max() <= 30


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("papers")
def test_term_dependence_rows_for_adjacent_and_parser_pairs(workdir):
    parsed = pd.read_parquet(workdir / "results" / "adi" / "topics" / "text+parser.parquet")
    plain = pd.read_parquet(workdir / "results" / "adi" / "topics" / "text.parquet")
    assert parsed["qid"].tolist() == plain["qid"].tolist()
    assert parsed["phrases"].map(len).sum() > len(parsed)  # queries have several phrases
    assert all(len(tokens) == len(heads) for tokens, heads in zip(parsed["tokens"], parsed["heads"]))
    summary = pd.read_csv(workdir / "results" / "tables" / "adm" / "table.csv")
    assert set(summary["queryset"]) == {"text", "text+parser"}
    assert set(summary["model"]) == {"ug", "culm", "adm", "sdm"}
    # the pairs differ between the two rows, so ADM's runs do; UG's do not
    ug = [cell_runs(workdir, "adi", "porter", queryset, "ug", "mu~1000")["mu~1000"] for queryset in ("text", "text+parser")]
    pd.testing.assert_frame_equal(ug[0], ug[1])
    point = "mu~1000_window~8_alpha~0.5_beta~0.5"
    adm = [cell_runs(workdir, "adi", "porter", queryset, "adm", point)[point] for queryset in ("text", "text+parser")]
    assert not adm[0]["score"].equals(adm[1]["score"])
    for run in adm:
        assert run["score"].notna().all()
    for suffix in ["svg", "png"]:
        assert (workdir / "results" / "figures" / "adm" / f"parameter-window.{suffix}").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("papers")
def test_phrase_query_sets_weights_files_and_subset_rows(workdir):
    topics = workdir / "results" / "adi" / "topics"
    listed = pd.read_parquet(topics / "text+list.parquet")
    found = {phrase.lower() for phrases in listed["phrases"] for phrase in phrases}
    assert found and found <= {"information retrieval", "machine translation", "computer science"}
    pmi = pd.read_parquet(topics / "text+pmi.parquet")
    assert pmi["qid"].tolist() == listed["qid"].tolist()
    # adjacent word pairs as written in the query ("data-processing" is two words)
    assert all(len(phrase_words(phrase)) == 2 for phrases in pmi["phrases"] for phrase in phrases)
    # a weights file per phrase model and query set, one row per phrase or per query without one
    weights = pd.read_csv(workdir / "results" / "adi" / "phrases" / "porter" / "text+list" / "pm.tsv", sep="\t")
    assert set(weights["qid"].astype(str)) == set(listed["qid"])
    assert [c for c in weights.columns if c.startswith("lambda")] == [
        "lambda[t1=0,t2=0.4,lambda_max=0.9,pmi_threshold=1]", "lambda[t1=0.2,t2=0.4,lambda_max=0.9,pmi_threshold=1]"]
    with_phrase = sum(has_phrase(phrases) for phrases in listed["phrases"])
    table = (workdir / "results" / "tables" / "phrases" / "table.md").read_text()
    assert f"text+list, queries with a phrase; {with_phrase} queries" in table
    assert f"text+list; {len(listed)} queries" in table
