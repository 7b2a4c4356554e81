"""Checks of an experiment's query sets and title against its collections: what is a typo (an error)
and what is a choice made for another kind of collection or a copied file (a warning, listed once)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError
from .querysets import base_queryset

#: TREC topic fields: query sets made of them (title, desc, title_desc_narr, title+min3words, desc+parser...)
#: are what experiments written for TREC data list; collections without TREC topics lack them.
TREC_TOPIC_FIELDS = ("title", "desc", "narr")


def is_trec_topic_queryset(name: str) -> bool:
    """Whether query set ``name`` is made of TREC topic fields (``title``, ``title_desc_narr``, ``desc+parser``)."""
    stem = name.split("+", 1)[0]
    return bool(stem) and all(part in TREC_TOPIC_FIELDS for part in stem.split("_"))


#: the classic collections' one query set (the request's text): experiments written for them list it,
#: and a TREC collection lacks it as the classic ones lack the TREC topic sets
CLASSIC_QUERYSET = "text"


def is_standard_queryset(name: str) -> bool:
    """A query set the default experiments list for one kind of collection: the TREC topic sets and the
    classic collections' ``text`` (and sets derived from them). Lacking one is a warning, not a typo."""
    return is_trec_topic_queryset(name) or name.split("+", 1)[0] == CLASSIC_QUERYSET


def check_querysets(experiment: Mapping[str, Any], registry: Mapping[str, Any], name: str, where: str,
                     warnings: list[dict[str, str]]) -> None:
    """Each listed query set must be one that some collection of the experiment has (``titel`` is a
    typo, not a choice): else a ConfigError naming the sets each collection has. A set that only
    some collections lack, or a standard set (:func:`is_standard_queryset`) that all lack, is
    skipped there with one warning for the experiment."""
    listed = experiment.get("querysets") or []
    collections = experiment["collections"]
    lacking = {queryset: [c for c in collections if base_queryset(queryset) not in registry[c].querysets]
               for queryset in listed}
    has = "; ".join(f"{c}: {sorted(registry[c].querysets)}" for c in collections)
    for queryset, missing in lacking.items():
        if len(missing) == len(collections) and not is_standard_queryset(queryset):
            raise ConfigError(f"{where}: query set {queryset!r} is in none of its collections (a derived set X+... "
                              f"needs X); they have {has}")
    skipped = [f"{queryset!r} ({'every collection' if len(missing) == len(collections) else ', '.join(missing)})"
               for queryset, missing in lacking.items() if missing]
    if skipped:
        warnings.append({"experiment": name, "message": f"experiment {name!r}: query sets skipped where a collection "
                                                        f"lacks them: {'; '.join(skipped)}"})


#: Collections a title may name besides the registry's ids: the usual spellings of well-known sets.
WELL_KNOWN_COLLECTIONS = ("Cranfield", "CACM", "CISI", "MED", "Medline", "NPL", "ADI", "TIME", "LISA", "TrecQA",
                          "WikiQA", "SQuAD", "DRCD", "Robust04", "MS MARCO", "ClueWeb09", "ClueWeb12", "GOV2",
                          "WT10g", "TREC-COVID", "NFCorpus", "SciFact", "InsuranceQA", "SelQA")


def check_title(experiment: Mapping[str, Any], registry: Mapping[str, Any], name: str,
                 warnings: list[dict[str, str]]) -> None:
    """Warn when the title names a collection the experiment does not run: an experiment file copied
    from another ("... on TrecQA") would label the user's tables and report with the wrong data."""
    title = experiment.get("title") or ""
    run = {part.lower() for collection in experiment["collections"] for part in [collection, *collection.split("_")]}
    named: list[str] = []
    for candidate in dict.fromkeys([*registry, *WELL_KNOWN_COLLECTIONS]):
        if candidate.lower() in run:
            continue
        boundary = r"(?<![A-Za-z0-9_])({})(?![A-Za-z0-9_])"
        # Short names only as written or in capitals: "med", "time" or "adi" in a sentence name nothing.
        if len(candidate) <= 4:
            match = re.search(boundary.format(f"{re.escape(candidate)}|{re.escape(candidate.upper())}"), title)
        else:
            match = re.search(boundary.format(re.escape(candidate)), title, re.IGNORECASE)
        if match and match.group(1).lower() not in {shown.lower() for shown in named}:
            named.append(match.group(1))
    if named:
        warnings.append({"experiment": name, "message": f"experiment {name!r}: its title {title!r} names "
                                                        f"{', '.join(named)}, which it does not run (its collections: "
                                                        f"{', '.join(experiment['collections'])}); a copied title?"})
