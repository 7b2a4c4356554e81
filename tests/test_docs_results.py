"""docs/results.md states no figure the generated files could contradict, and says for each experiment
what the configuration does: which selection decides its verdicts and whether the paper has a test.

The only numbers the page may hold are published reference figures (Anserini's CACM regression,
castorini/anserini's `cacm` regression page): a result measured here belongs in a generated file.
"""

from __future__ import annotations

import re

import pytest
from common import REPO

RESULTS = REPO / "docs" / "results.md"
#: Anserini's published CACM regression: MAP and P@30 of BM25 (0.9, 0.4) and QL (1000), its index size
PUBLISHED = {"0.3123", "0.1942", "0.3265", "14,363", "320,968"}


@pytest.fixture
def experiments(default_experiments) -> dict:
    return default_experiments


def measured_figures(text: str) -> set[str]:
    """Decimals with three or more digits after the point and numbers with a thousands separator:
    the shapes of a measured result (a grid value like 0.9 or a count like 52 is not one)."""
    return set(re.findall(r"(?<![\w.])\d+\.\d{3,}|(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,])", text))


def test_the_shape_check_finds_measured_figures():
    assert measured_figures("MAP 0.3157 on 52 queries, 1,847 s, k1 0.9") == {"0.3157", "1,847"}


def test_results_page_quotes_only_published_figures():
    assert measured_figures(RESULTS.read_text(encoding="utf-8")) <= PUBLISHED


def verdict_table(text: str) -> dict[str, list[str]]:
    section = text.split("## The experiments' verdicts", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_each_experiments_verdict_selection_and_paper_test_are_as_configured(experiments):
    rows = verdict_table(RESULTS.read_text(encoding="utf-8"))
    assert set(rows) == set(experiments)
    for name, experiment in experiments.items():
        selection, _, paper_test = rows[name]
        assert selection == experiment["verdict_selection"], name
        assert paper_test.startswith("none") == (experiment["paper_test"] is None), name
