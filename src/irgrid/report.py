"""The run's HTML report: every experiment's table with links to its other formats."""

from __future__ import annotations

import datetime as _dt
import html
import os
from pathlib import Path

from . import __version__
from .io import write_text


def write_report(experiments: dict[str, str], out: str | os.PathLike) -> None:
    """``experiments`` maps experiment name -> directory holding its table.{md,tex,html,csv}."""
    out = Path(out)
    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>irgrid report</title>",
        "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>",
        "<h1>irgrid report</h1>",
        f"<p>irgrid {html.escape(__version__)}, generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    for name, table_dir in experiments.items():
        table_dir = Path(table_dir)
        parts.append(f"<section id='{html.escape(name)}'>")
        parts.append((table_dir / "table.html").read_text(encoding="utf-8"))
        links = " · ".join(
            f"<a href='{html.escape(os.path.relpath(table_dir / f'table.{suffix}', out.parent))}'>{suffix}</a>"
            for suffix in ("md", "tex", "csv")
        )
        parts.append(f"<p>Also as {links}.</p></section>")
    parts.append("</body></html>")
    write_text("\n".join(parts) + "\n", out)
