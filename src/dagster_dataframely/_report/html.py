"""The report as one self-contained HTML file: inline CSS, inline SVG plots, no script.

It opens offline, as a CI artifact or an e-mail attachment: nothing is fetched, and its
Content-Security-Policy forbids any fetch a later edit might add (`default-src 'none'`).
Failing rows, queries and samples are collapsed under `<details>`, which needs no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from .words import MARKS, failing, filters, last_runs, totals

_POLICY = "default-src 'none'; style-src 'unsafe-inline'"
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:78rem;padding:0 1rem}
body{color:#1f2328}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.2rem;margin:2rem 0 .5rem}
.meta{color:#59636e;margin:0 0 1rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}
th,td{border-bottom:1px solid #d1d9e0;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.passed{color:#1a7f37}.warned{color:#9a6700}.failed{color:#cf222e}.unknown{color:#59636e}
.cell{display:inline-block;min-width:1.2rem;text-align:center}
code,pre{font:12px ui-monospace,monospace;background:#f6f8fa}
pre{padding:.5rem;overflow-x:auto;white-space:pre-wrap}
details{margin:.25rem 0 .75rem}summary{cursor:pointer}
svg{vertical-align:middle}.plot{color:#0969da}
.checks td.nw{white-space:nowrap}.address{word-break:break-all}
.rule{color:#59636e;font-size:12px;white-space:normal}
"""


def render_html(report: Mapping[str, Any]) -> str:
    """The report as an HTML document."""
    assets = report["assets"]
    body = [
        "<h1>Data quality report</h1>",
        f'<p class="meta">{len(assets)} assets, checks {escape(totals(report))}. '
        f"Instance {escape(report['instance'])}; {escape(filters(report))}; "
        f"generated {escape(report['generated_at'])}.</p>",
        _overview(assets),
        *(_asset(asset) for asset in assets),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>Data quality report</title><style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _overview(assets: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for asset in assets:
        checks = asset["checks"]
        counts = {v: sum(c["verdict"] == v for c in checks) for v in ("failed", "warned", "passed")}
        rows.append(
            f'<tr><td><a href="#{_anchor(asset["asset"])}">{escape(asset["asset"])}</a></td>'
            f"<td>{_verdict(asset['verdict'])}</td>"
            + "".join(f'<td class="n">{counts[v]}</td>' for v in ("failed", "warned", "passed"))
            + f"<td>{escape(max(c['latest']['timestamp'] for c in checks))}</td></tr>"
        )
    return _table(["Asset", "Verdict", "Failed", "Warned", "Passed", "Last evaluated"], rows)


def _asset(asset: Mapping[str, Any]) -> str:
    counts = [point["rows"] for point in asset["row_counts"]]
    parts = [
        f'<section id="{_anchor(asset["asset"])}">',
        f"<h2>{escape(asset['asset'])} {_verdict(asset['verdict'])}</h2>",
    ]
    if counts:
        parts.append(
            f"<p>Rows checked {last_runs(len(counts))}: {_plot(counts, 'rows')} "
            f"{'latest ' if len(counts) > 1 else ''}{counts[-1]:,}</p>"
        )
    parts.append(_checks(asset["checks"]))
    if asset["partitions"] is not None:
        parts.append(_grid(asset["partitions"]))
    if asset["columns"] is not None:
        parts.append(_columns(asset["columns"], asset["table_rules"]))
    parts.extend(_details(check) for check in asset["checks"])
    parts.append("</section>")
    return "\n".join(part for part in parts if part)


def _checks(checks: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for check in checks:
        current = check["current"]
        fractions = [e["failed_fraction"] for e in check["history"]]
        known = [f for f in fractions if f is not None]
        rows.append(
            f"<tr><td><code>{escape(check['check'])}</code>{_described(check)}</td>"
            f'<td class="nw">{_verdict(check["verdict"])}</td>'
            f'<td class="nw">{escape(failing(current))}</td>'
            f'<td class="nw">{escape(current["tolerance"] or "")}</td>'
            f"<td>{escape(current['engine'] or '')}</td>"
            f"<td>{escape(current['partition'] or '')}</td>"
            f"<td>{_plot(known, 'failing fraction')}</td>"
            f"<td>{_address(current['kept'])}</td></tr>"
        )
    return _table(
        [
            "Check",
            "Verdict",
            "Failing rows",
            "Tolerance",
            "Engine",
            "Partition",
            "Failing fraction, last runs",
            "Failing rows kept in",
        ],
        rows,
        "checks",
    )


def _details(check: Mapping[str, Any]) -> str:
    """A failed or warned check's assessment, sample and the query of its kept rows."""
    current = check["current"]
    if current["verdict"] in ("passed", "unknown") and not current["kept_query"]:
        return ""
    parts = [f"<details><summary><code>{escape(check['check'])}</code>: details</summary>"]
    if current["assessment"]:
        parts.append(f"<p>{escape(current['assessment'])}</p>")
    if current["sample"]:
        names = list(current["sample"][0])
        rows = [
            "<tr>" + "".join(f"<td>{escape(str(row.get(n)))}</td>" for n in names) + "</tr>"
            for row in current["sample"]
        ]
        parts.append("<p>Failing rows, a sample:</p>" + _table(names, rows))
    if current["kept_query"]:
        parts.append(f"<p>The kept rows:</p><pre>{escape(current['kept_query'])}</pre>")
    parts.append("</details>")
    return "".join(parts)


def _grid(grid: Mapping[str, Any]) -> str:
    checks = grid["checks"]
    rows = [
        f"<tr><th>{escape(partition)}</th>"
        + "".join(
            f'<td><span class="cell {verdicts.get(c, "unknown")}" '
            f'title="{escape(c)}: {verdicts.get(c, "not evaluated")}">'
            f"{MARKS.get(verdicts.get(c, ''), '·')[0]}</span></td>"
            for c in checks
        )
        + "</tr>"
        for partition, verdicts in grid["verdicts"].items()
    ]
    header = ["Partition", *checks]
    return "<h3>Partitions \u00d7 checks</h3>" + _table(header, rows)


def _columns(columns: Sequence[Mapping[str, Any]], table_rules: Sequence[str]) -> str:
    rows = [
        f"<tr><td><code>{escape(c['name'])}</code></td><td>{escape(c['type'])}</td>"
        f"<td>{'yes' if c['nullable'] else 'no'}</td><td>{'yes' if c['unique'] else ''}</td>"
        f"<td>{escape('; '.join(c['rules']))}</td></tr>"
        for c in columns
    ]
    table_level = (
        "<p>Rules of the table: " + escape("; ".join(table_rules)) + "</p>" if table_rules else ""
    )
    return (
        "<h3>The schema's columns and rules</h3>"
        + _table(["Column", "Type", "Nullable", "Unique", "Rules"], rows)
        + table_level
    )


def _plot(values: Sequence[float], what: str, width: int = 120, height: int = 24) -> str:
    """`values` (oldest first) as a line, the latest a dot at the right; its title lists them.
    Nothing for fewer than two: one run has no trend."""
    if len(values) < 2:
        return ""
    top = max(values) or 1.0
    step = width / (len(values) - 1)
    points = [
        (round(3 + i * step, 1), round(height - 3 - (height - 6) * v / top, 1))
        for i, v in enumerate(values)
    ]
    line = " ".join(f"{x},{y}" for x, y in points)
    shown = ", ".join(f"{v:,}" if isinstance(v, int) else f"{v:.4g}" for v in values)
    x, y = points[-1]
    return (
        f'<svg class="plot" width="{width + 6}" height="{height}" role="img" '
        f'aria-label="{what}: {shown}"><title>{what}: {shown}</title>'
        f'<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{line}"/>'
        f'<circle cx="{x}" cy="{y}" r="2.5" fill="currentColor"/></svg>'
    )


def _verdict(verdict: str) -> str:
    return f'<span class="{verdict}">{MARKS[verdict]}</span>'


def _described(check: Mapping[str, Any]) -> str:
    text = check["description"]
    return f'<br><span class="rule">{escape(text)}</span>' if text else ""


def _address(text: str | None) -> str:
    return f'<code class="address">{escape(text)}</code>' if text else ""


def _table(header: Sequence[str], rows: Sequence[str], kind: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    opening = f'<table class="{kind}">' if kind else "<table>"
    return f"{opening}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _anchor(key: str) -> str:
    return "asset-" + "".join(c if c.isalnum() else "-" for c in key)
