"""The run's HTML report: every experiment's tables and figures, with links to the other formats."""

from __future__ import annotations

import datetime as _dt
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import __version__
from ..io import write_text


def write_report(experiments: Mapping[str, Mapping[str, Sequence[str]]], out: str | os.PathLike) -> None:
    """``experiments``: name -> {"tables": [table HTML paths], "figures": [figure SVG paths]}."""
    out = Path(out)

    def link(path: Path) -> str:
        return html.escape(os.path.relpath(path, out.parent))

    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>irgrid report</title>",
        "<style>body{font-family:sans-serif;max-width:75em;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}"
        "td:first-child,th:first-child{text-align:left}img{max-width:100%}</style></head><body>",
        "<h1>irgrid report</h1>",
        f"<p>irgrid {html.escape(__version__)}, generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
        "<ul>" + "".join(f"<li><a href='#{html.escape(name)}'>{html.escape(name)}</a></li>" for name in experiments) + "</ul>",
    ]
    for name, outputs in experiments.items():
        parts.append(f"<section id='{html.escape(name)}'><h1>{html.escape(name)}</h1>")
        for table_html in map(Path, outputs.get("tables", [])):
            parts.append(table_html.read_text(encoding="utf-8"))
            others = " · ".join(
                f"<a href='{link(table_html.with_suffix(f'.{suffix}'))}'>{suffix}</a>" for suffix in ("md", "tex", "csv")
            )
            parts.append(f"<p>{html.escape(table_html.stem)} also as {others}.</p>")
        for figure in map(Path, outputs.get("figures", [])):
            parts.append(
                f"<figure><img src='{link(figure)}' alt='{html.escape(figure.stem)}'>"
                f"<figcaption>{html.escape(figure.stem)} (<a href='{link(figure.with_suffix('.png'))}'>png</a>)"
                "</figcaption></figure>"
            )
        parts.append("</section>")
    parts.append("</body></html>")
    write_text("\n".join(parts) + "\n", out)
