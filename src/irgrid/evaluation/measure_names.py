"""Measure names as the config gives them -> the spelling the evaluation files store."""

from __future__ import annotations

from ..errors import ConfigError
from .ties import canonical_name, is_tie_aware_name


def canonical_measures(names, where: str) -> list[str]:
    """Measure names as ir-measures writes them ('NDCG@10' -> 'nDCG@10').

    Evaluation files store ir-measures' own spelling; tables look measures up by
    name, so every name in the config is normalised once, here, and a name
    ir-measures cannot parse stops the run before any job starts. Tie-aware names (``E[AP]``,
    ``tied_relevant@10``) are irgrid.evaluation.ties' own, evaluated from the runs' scores.
    """
    import ir_measures  # imported late: slow to import, and only here and in irgrid.evaluation.evaluator

    canonical = []
    for name in names:
        if is_tie_aware_name(name):
            try:
                canonical.append(canonical_name(name))
            except ConfigError as error:
                raise ConfigError(f"{where}: unknown evaluation measure {name!r} ({error})") from None
            continue
        try:
            canonical.append(str(ir_measures.parse_measure(name)))
        except Exception as error:  # ir-measures raises several types for a bad name
            raise ConfigError(f"{where}: unknown evaluation measure {name!r} ({error})") from None
    return canonical
