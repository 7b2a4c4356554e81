"""The report a researcher hands on: per experiment, what it reproduces, its tables, the findings
it claims checked on every collection, the per-query evidence behind each difference, and the
provenance of every number (configuration, code, inputs, time and memory).

- :mod:`.claims`: the experiment file's ``claims:``, checked when the config loads;
- :mod:`.findings`: each claim evaluated per collection (difference, bootstrap CI, corrected p, verdict);
- :mod:`.evidence`: per-query differences against the baseline (sorted bar plot, largest gains and losses);
- :mod:`.html`: the one self-contained HTML file.

The provenance it shows is what the jobs wrote (:mod:`irgrid.jobs.provenance`).
"""

from __future__ import annotations

from .claims import Claim, parse_claims

__all__ = ["Claim", "parse_claims"]
