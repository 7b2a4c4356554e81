"""The findings an experiment file states (its ``claims:``), checked when the config loads.

A claim says that one model scores higher than another on one evaluated measure, as a paper
states its findings ("GJM-2 beats Dirichlet on AP"). A claim naming a model the experiment does
not run, or a measure the config does not evaluate, stops the run before any job starts, with
the experiment file and the claim's key in the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Claim:
    """``better`` scores higher than ``than`` on ``measure`` (ir-measures' spelling)."""

    better: str
    than: str
    measure: str
    text: str = ""

    def describe(self, labels: Mapping[str, str] | None = None) -> str:
        labels = labels or {}
        return f"{labels.get(self.better, self.better)} > {labels.get(self.than, self.than)} on {self.measure}"

    def to_dict(self) -> dict[str, str]:
        return {"better": self.better, "than": self.than, "measure": self.measure, "text": self.text}


def parse_claims(experiment: Mapping[str, Any], measures: Sequence[str], source: str) -> list[Claim]:
    """The experiment's claims, checked against its models and the evaluated ``measures``.

    ``source`` names the experiment (its file) in errors; each error names the key, e.g.
    ``config/experiments/gjm.yaml: claims/0/better: model 'gjm3' is not one of its models [...]``.
    Measures are normalised to ir-measures' spelling (``map`` and ``AP`` are one measure).
    """
    from ..config import canonical_measures  # late: irgrid.config calls this module while loading

    models = list(experiment.get("models", {}))
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
        claims.append(Claim(entry["better"], entry["than"], measure, entry.get("text", "")))
    return claims
