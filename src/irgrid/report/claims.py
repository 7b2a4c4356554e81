"""The findings an experiment file states (its ``claims:``), checked when the config loads.

A claim says that one model scores higher than another on one evaluated measure, as a paper
states its findings ("GJM-2 beats Dirichlet on AP"). A claim may name the query sets it is
about (``querysets``: the paper's verbose queries, not its short ones), say whether the paper
claimed a significant difference or a direction only (``kind``), or compare the gain on a query
subset with the gain over all queries (``larger_on``: "the gain is larger on the queries with a
phrase"). The paper's own significance test (``paper_test``) is the experiment's.

A claim naming a model the experiment does not run, a measure the config does not evaluate or a
query set the experiment does not list stops the run before any job starts, with the experiment
file and the claim's key in the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..evaluation.measure_names import canonical_measures

#: a claim of a significant difference (the paper tested it), or of a direction only
CLAIM_KINDS = ("significant", "direction")
#: query subsets a ``larger_on`` claim can name (irgrid.tables.QUERY_SUBSETS)
SUBSET_NAMES = ("phrases", "mixed")


@dataclass(frozen=True)
class Claim:
    """``better`` scores higher than ``than`` on ``measure`` (ir-measures' spelling).

    ``querysets``: the query sets (table rows) the claim is about, empty for every row;
    ``kind``: ``significant`` (the paper reports a significant difference) or ``direction``
    (the paper reports which is higher, no test); ``larger_on``: a query subset on which the
    gain of ``better`` over ``than`` is claimed to be larger than over all queries.
    """

    better: str
    than: str
    measure: str
    text: str = ""
    querysets: tuple[str, ...] = ()
    kind: str = "significant"
    larger_on: str | None = None

    def describe(self, labels: Mapping[str, str] | None = None) -> str:
        labels = labels or {}
        better, than = labels.get(self.better, self.better), labels.get(self.than, self.than)
        if self.larger_on:
            return f"{better} − {than} on {self.measure} larger on the '{self.larger_on}' queries"
        where = f" ({', '.join(self.querysets)})" if self.querysets else ""
        return f"{better} > {than} on {self.measure}{where}"

    def applies_to(self, queryset: str) -> bool:
        return not self.querysets or queryset in self.querysets

    def to_dict(self) -> dict[str, Any]:
        return {"better": self.better, "than": self.than, "measure": self.measure, "text": self.text,
                "querysets": list(self.querysets), "kind": self.kind, "larger_on": self.larger_on}

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> Claim:
        return cls(entry["better"], entry["than"], entry["measure"], entry.get("text", ""),
                   tuple(entry.get("querysets") or ()), entry.get("kind", "significant"), entry.get("larger_on"))


@dataclass(frozen=True)
class PaperTest:
    """The significance test the paper itself used: as the paper ran it, uncorrected.

    ``None`` in place of a PaperTest means the paper reports no test (a direction only).
    """

    test: str = "ttest"
    alternative: str = "two-sided"
    alpha: float = 0.05
    correction: str = "none"

    def describe(self) -> str:
        sided = "two-sided" if self.alternative == "two-sided" else "one-sided"
        correction = "" if self.correction == "none" else f", {self.correction}-corrected"
        return f"{self.test} ({sided}{correction}), alpha {self.alpha:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "alternative": self.alternative, "alpha": self.alpha,
                "correction": self.correction}


def parse_paper_test(experiment: Mapping[str, Any]) -> PaperTest | None:
    entry = experiment.get("paper_test")
    return None if entry is None else PaperTest(**entry)


def parse_claims(experiment: Mapping[str, Any], measures: Sequence[str], source: str,
                 querysets: Sequence[str] | None = None) -> list[Claim]:
    """The experiment's claims, checked against its models, the evaluated ``measures`` and its
    ``querysets`` (None: any query set is accepted, e.g. an experiment running every set).

    ``source`` names the experiment (its file) in errors; each error names the key, e.g.
    ``config/experiments/gjm.yaml: claims/0/better: model 'gjm3' is not one of its models [...]``.
    Measures are normalised to ir-measures' spelling (``map`` and ``AP`` are one measure). A claim's
    ``kind`` defaults to ``significant`` when the experiment names the paper's test
    (``paper_test``) and to ``direction`` when the paper reports no test.
    """

    models = list(experiment.get("models", {}))
    default_kind = "significant" if experiment.get("paper_test") is not None else "direction"
    claims = []
    for i, entry in enumerate(experiment.get("claims") or []):
        key = f"{source}: claims/{i}"
        for role in ("better", "than"):
            if entry[role] not in models:
                raise ConfigError(f"{key}/{role}: model {entry[role]!r} is not one of its models {models}")
        if entry["better"] == entry["than"]:
            raise ConfigError(f"{key}: compares model {entry['better']!r} with itself; name two of its models {models}")
        measure = canonical_measures([entry["measure"]], f"{key}/measure")[0]
        if measure not in measures:
            raise ConfigError(f"{key}/measure: measure {entry['measure']!r} is not evaluated; "
                              f"the config's measures are {list(measures)}")
        named = list(entry.get("querysets") or [])
        if querysets is not None:
            unknown = [name for name in named if name not in querysets]
            if unknown:
                raise ConfigError(f"{key}/querysets: {unknown} not among the experiment's query sets {list(querysets)}")
        kind = entry.get("kind", default_kind)
        if kind not in CLAIM_KINDS:
            raise ConfigError(f"{key}/kind: {kind!r}; expected one of {list(CLAIM_KINDS)}")
        larger_on = entry.get("larger_on")
        if larger_on is not None and larger_on not in SUBSET_NAMES:
            raise ConfigError(f"{key}/larger_on: {larger_on!r}; expected one of {list(SUBSET_NAMES)}")
        claims.append(Claim(entry["better"], entry["than"], measure, entry.get("text", ""), tuple(named), kind,
                            larger_on))
    return claims
