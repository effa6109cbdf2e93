"""Render a plan for people: a terminal table, Markdown for wikis, one self-contained HTML file.

Renderers read the typed plan (``search.types.Plan``) and only format: every number comes from the
plan, none is computed here.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from infrafit import safe_io
from infrafit.catalog.model import short_accelerator
from infrafit.errors import InputError
from infrafit.report.summary import MODE_SHORT as _MODE_SHORT
from infrafit.search.explain import price_age_line
from infrafit.search.types import Option, Plan
from infrafit.units import fmt_bytes, fmt_duration, fmt_usd


def _perf_summary(option: Option) -> str:
    """p99 latencies at the load the plan runs the option at (``performance.latency`` is the option as
    planned: the same figures the why lines and the ranking use)."""
    perf = option.performance
    run = perf.get("batch_run")
    if run:  # a batch job is judged by finishing inside its window, not by a request latency
        return f"run {fmt_duration(run['finish_s'])} of {fmt_duration(run['window_s'])}"
    lat = perf.get("latency") or {}
    parts = []
    if lat.get("ttft_s"):
        parts.append(f"TTFT p99 {fmt_duration(lat['ttft_s']['p99'])}")
    if lat.get("tpot_s"):
        parts.append(f"TPOT p99 {fmt_duration(lat['tpot_s']['p99'])}")
    if lat.get("e2e_s") and (lat["e2e_s"] or {}).get("p99") and not lat.get("ttft_s"):
        parts.append(f"latency p99 {fmt_duration(lat['e2e_s']['p99'])}")
    if perf.get("time_to_train_s"):
        parts.append(f"train {fmt_duration(perf['time_to_train_s'])}")
    return ", ".join(parts) or "-"


def _hardware_cell(o: Option) -> str:
    return f"{o.count}x {short_accelerator(o.accelerator)} {o.precision} {o.stack or ''}".rstrip()


def _deployment_cell(o: Option) -> str:
    mark = " (your overlay)" if o.user_row else ""  # a price the user supplied, not a sourced catalog row
    return f"{_MODE_SHORT.get(o.deployment, o.deployment)} · {o.provider or '-'}{mark} · {o.region or '-'}"


def _parts_cell(o: Option, cell: Callable[[Option], str]) -> str:
    """A hybrid option shows each part (train here, serve there) on its own line."""
    if o.deployment != "hybrid" or not o.parts:
        return cell(o)
    return "\n".join(f"{p.part or ''}: {cell(p)}".strip(": ") for p in o.parts)


def _monthly_cell(cost: Mapping[str, Any]) -> str:
    """The first month's cost, and the busiest month's when growth makes it differ (a bare 'monthly'
    read as a steady figure while traffic growth tripled it by the horizon)."""
    first = float(cost.get("monthly_usd") or 0.0)
    peak = float(cost.get("peak_monthly_usd") or first)
    return fmt_usd(first) if peak <= first * 1.01 else f"{fmt_usd(first)} / {fmt_usd(peak)}"


def option_rows(plan: Plan) -> list[dict[str, str]]:
    """One row of display strings per ranked option."""
    rows = []
    for o in plan.options:
        cost, perf = o.cost, o.performance
        rows.append({
            "#": str(o.rank),
            "hardware": _parts_cell(o, _hardware_cell),
            "deployment": _parts_cell(o, _deployment_cell),
            "month 1 / peak": _monthly_cell(cost),
            "TCO": f"{fmt_usd(cost.get('tco_usd') or 0.0)} / {cost.get('horizon_months')} mo",
            "performance (p99)": _perf_summary(o).replace(" p99", ""),
            "bottleneck": str(perf.get("bottleneck") or "-"),
        })
    return rows


#: Columns the terminal drops, in this order, when the table would otherwise split a word or a number
#: (their content is in the why lines too).
_OPTIONAL_COLUMNS = ("bottleneck", "performance (p99)")


def _longest_token(rows: list[dict[str, str]], col: str) -> int:
    return max((len(w) for r in rows for w in [*col.split(), *r[col].split()]), default=1)


def _longest_line(rows: list[dict[str, str]], col: str) -> int:
    return max((len(x) for r in rows for x in [col, *r[col].replace(" / ", "\n").splitlines()]), default=1)


def fitting_columns(rows: list[dict[str, str]], width: int,
                    optional: tuple[str, ...] = _OPTIONAL_COLUMNS) -> tuple[list[str], dict[str, int]]:
    """(columns to show, each one's width; empty when the table fits as it is) so that no word or number
    is split at ``width``: each column gets at least its longest token, optional columns go until the
    floors fit, and what is left is shared out by how much more each column would like (a box table costs
    3 characters per column plus 1). Fixed widths, because rich shrinks wrapping columns below their
    longest word when a table is too wide."""
    columns = list(rows[0]) if rows else ["#", "hardware", "deployment", "month 1 / peak", "TCO"]
    if not width or not rows:
        return columns, {}
    natural = {c: _longest_line(rows, c) for c in columns}
    if sum(natural.values()) + 3 * len(columns) + 1 <= width:
        return columns, {}
    floors = {c: _longest_token(rows, c) for c in columns}
    for drop in optional:
        if sum(floors[c] for c in columns) + 3 * len(columns) + 1 <= width:
            break
        if drop in columns:
            columns.remove(drop)
    spare = width - (sum(floors[c] for c in columns) + 3 * len(columns) + 1)
    want = {c: natural[c] - floors[c] for c in columns}
    total = sum(want.values())
    widths = {c: floors[c] + (int(spare * want[c] / total) if total > 0 and spare > 0 else 0) for c in columns}
    return columns, widths


def _bold(head: str, rest: str = "") -> Any:
    """``head`` in bold, then ``rest``, as rich Text: never read as markup, so a provider, region or command
    with brackets in it (``[sum(x) for x in y]``, an overlay's ``[/]``) prints as written."""
    from rich.text import Text

    return Text.assemble((head, "bold"), rest)


def render_terminal(plan: Plan, console: Any) -> None:
    """A rich table of the ranked options, then the why, risks and exclusions."""
    from rich.table import Table

    from infrafit.report.summary import headline

    rows = option_rows(plan)
    console.print(headline(plan), highlight=False)
    table = Table(title=f"infrafit plan: {plan.name}", show_lines=True)
    columns, floors = fitting_columns(rows, int(getattr(console, "width", 0) or 0))
    for col in columns:
        table.add_column(col, overflow="fold", no_wrap=col == "#", width=floors.get(col))
    for row in rows:  # the peak month under the first keeps the column narrow on a terminal
        table.add_row(*(row[k].replace(" / ", "\n") if k == "month 1 / peak" else row[k] for k in columns))
    console.print(table)
    common = shared_risks(plan)
    for o in plan.options:
        why = short_why(o)
        console.print(_bold(f"#{o.rank}", " " + why[0]), highlight=False)
        for line in why[1:]:
            console.print(f"    - {line}", highlight=False)
        own = [r for r in o.risks if r not in common]
        for r in own[:TERMINAL_RISKS]:
            console.print(f"    ! {r}", highlight=False)
        more = len(o.why) - len(why) + max(len(own) - TERMINAL_RISKS, 0)
        if more > 0:
            console.print(f"    ({more} more line(s): infrafit plan ... --explain {o.rank})", highlight=False)
    if common:
        console.print(_bold("Applies to every option"))
        for r in common:
            console.print(f"  ! {r}", highlight=False)
    for line in hidden_lines(plan):
        console.print(line, highlight=False)
    if plan.excluded:
        console.print(_bold("Excluded"))
        for e in plan.excluded:
            console.print(f"  - {e.what}: {e.reason}", highlight=False)
    console.print(f"Prices retrieved {plan.catalog_retrieved_on or '?'}; "
                  f"{plan.evaluated:,} configurations evaluated.", highlight=False)
    stale = price_age_line(plan.price_age)
    if stale:
        console.print(stale[0].upper() + stale[1:] + ".", highlight=False)


#: The why lines the terminal shows per option (the ranking line first); the rest are one --explain away.
TERMINAL_WHY = 4
TERMINAL_RISKS = 3
#: Why lines worth the terminal, by how they start, in this order after the ranking line.
_KEY_WHY = ("stay as is", "switch from", "binding constraint", "emissions", "workflow", "owned:", "billing:",
            "cost drivers")


def short_why(o: Option) -> list[str]:
    """The ranking line, then up to ``TERMINAL_WHY - 1`` of the lines that say most (``_KEY_WHY``)."""
    if not o.why:
        return ["-"]
    picked = [o.why[0]]
    for lead in _KEY_WHY:
        for w in o.why[1:]:
            if w.startswith(lead) and w not in picked and len(picked) < TERMINAL_WHY:
                picked.append(w)
    return picked


def shared_risks(plan: Plan) -> list[str]:
    """Risks every option carries (said once), when there is more than one option."""
    if len(plan.options) < 2:
        return []
    first = list(plan.options[0].risks)
    return [r for r in first if all(r in o.risks for o in plan.options[1:])]


def render_explain(plan: Plan, rank: int, console: Any) -> None:
    """Option ``rank`` in full: hardware and server, every why and risk as a bullet, cost items, efficiency."""
    from infrafit.errors import InputError

    o = next((x for x in plan.options if x.rank == rank), None)
    if o is None:
        ranks = sorted(x.rank for x in plan.options)
        raise InputError(f"--explain {rank}: the plan has {len(plan.options)} option(s), ranked "
                         f"{', '.join(map(str, ranks))}", fix="give one of those ranks, or raise --top")
    server = dict(o.server)
    console.print(_bold(f"#{o.rank}", f" {o.count}x {o.accelerator} {o.precision} {o.stack} · "
                        f"{_MODE_SHORT.get(o.deployment, o.deployment)} · {o.provider} · {o.region}"),
                  highlight=False)
    if server.get("host_id"):
        cores, ram = float(server.get("cpu_cores") or 0), float(server.get("ram_bytes") or 0)
        size = (f"{cores:g} cores, {fmt_bytes(ram)} RAM" if cores and ram
                else "cores and RAM not stated by the provider's listing")
        console.print(f"  server: {server.get('instances_per_replica', 1)} x {server['host_id']} per replica, "
                      f"{size}", highlight=False)
    console.print(f"  performance: {_perf_summary(o)}; bottleneck {o.performance.get('bottleneck') or '-'}",
                  highlight=False)
    console.print(_bold("why"))
    for w in o.why:
        console.print(f"  - {w}", highlight=False)
    if o.risks:
        console.print(_bold("risks"))
        for r in o.risks:
            console.print(f"  - {r}", highlight=False)
    months = o.cost.get("horizon_months")
    console.print(_bold(f"cost over {months} months", f": TCO {fmt_usd(float(o.cost.get('tco_usd') or 0))}"),
                  highlight=False)
    for k, v in (o.cost.get("breakdown") or {}).items():
        if v:
            console.print(f"  - {k.removesuffix('_usd').replace('_', ' ')}: {fmt_usd(float(v))}", highlight=False)
    e = dict(o.efficiency)
    if e.get("work_per_usd"):
        unit = str(e.get("work_unit", "work")).replace("_", " ")
        line = f"  {e['work_per_usd']:,.0f} {unit} per $"
        if e.get("work_per_kwh"):
            line += f", {e['work_per_kwh']:,.0f} per kWh"
        if e.get("co2e_kg_per_month") is not None:
            line += f"; {e['co2e_kg_per_month']:,.0f} kg CO2e/month"
        console.print(_bold("efficiency"), highlight=False)
        console.print(line, highlight=False)


#: The fleet table's columns (terminal and reports).
FLEET_COLUMNS = ("workload", "best apart", "TCO apart", "in the combined plan")


def fleet_rows(result: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """One row per workload of a fleet plan: its name, its best option planned apart and that option's TCO, and
    its cost within the combined plan (with its share of a pooled fleet)."""
    within = {x["name"]: x for x in (result.get("combined") or {}).get("per_workload", [])}
    rows = []
    for w in result["workloads"]:
        options = w["plan"].get("options") or []
        best = options[0] if options else None
        what = (f"{best['count']}x {best['accelerator']} {best['precision']} · {best['deployment']} · "
                f"{best['provider']}" if best else "no option")
        mine = within.get(w["name"])
        share = (fmt_usd(mine["tco_usd"]) + (f" ({mine['share']:.0%} of the fleet)" if "share" in mine else "")
                 if mine else "-")
        rows.append((str(w["name"]), what, fmt_usd(best["cost"]["tco_usd"]) if best else "-", share))
    return rows


def render_fleet(result: dict, console: Any) -> None:
    """A fleet plan: each workload's best option apart, then the combined fleet and its saving."""
    from rich.table import Table

    table = Table(title=f"infrafit fleet plan: {result['name']} ({result['horizon_months']} months)", show_lines=True)
    for col in FLEET_COLUMNS:
        table.add_column(col, overflow="fold")
    for row in fleet_rows(result):
        table.add_row(*row)
    console.print(table)
    combined = result.get("combined") or {}
    if combined:
        head = "shared fleet" if combined["kind"] == "shared" else "planned apart"
        console.print(_bold(f"combined ({head})", f": TCO {fmt_usd(combined['tco_usd'])}, saving "
                            f"{fmt_usd(combined['saving_usd'])} against {fmt_usd(result['separate_tco_usd'])} apart"),
                      highlight=False)
        for line in combined["why"]:
            console.print(f"  - {line}", highlight=False)
    for e in result.get("excluded", []):
        console.print(f"  - {e['what']}: {e['reason']}", highlight=False)


def hidden_lines(plan: Plan) -> list[str]:
    """What the top-N did not show, in words: near-copies the diversity rule hid (``--all`` shows them)
    and candidates past the worth-showing bounds (``search.pareto.worth_showing``)."""
    h = plan.hidden
    out = [f"{n} cheaper {fam} variant{'s' if n != 1 else ''} hidden (the same chip elsewhere): --all"
           for fam, n in (h.get("variants") or {}).items()]
    if h.get("over_tco_ratio"):
        out.append(f"{h['over_tco_ratio']} feasible option(s) costing over 5x #1 not shown")
    if h.get("over_accelerator_ratio"):
        out.append(f"{h['over_accelerator_ratio']} feasible option(s) holding over 4x the accelerators the load "
                   "needs not shown")
    return out


def render_markdown(plan: Plan) -> str:
    """The plan as Markdown for a wiki page."""
    from infrafit.report.summary import headline, workload_lines

    rows = option_rows(plan)
    lines = [f"# infrafit plan: {plan.name}", "", f"**{headline(plan)}**", "", "## Workload", ""]
    lines += [f"- {x}" for x in workload_lines(plan.workload)] + [""]
    lines.append(f"Objective: **{plan.objective}**. Prices retrieved "
                 f"{plan.catalog_retrieved_on or '?'}. {plan.evaluated:,} configurations evaluated.")
    stale = price_age_line(plan.price_age)
    if stale:
        lines += ["", stale[0].upper() + stale[1:] + "."]
    lines.append("")
    if rows:
        header = list(rows[0].keys())
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "---|" * len(header))
        for row in rows:
            lines.append("| " + " | ".join(v.replace("|", "\\|") for v in row.values()) + " |")
        lines.append("")
    for o in plan.options:
        lines.append(f"## #{o.rank}: {o.count}x {o.accelerator}, {o.deployment}")
        lines.extend(f"- {w}" for w in o.why)
        if o.risks:
            lines.append("")
            lines.append("Risks:")
            lines.extend(f"- {r}" for r in o.risks)
        breakdown = o.cost.get("breakdown") or {}
        if breakdown:
            lines.append("")
            # the breakdown sums to the TCO: totals over the horizon, not a month's figures
            months = o.cost.get("horizon_months")
            lines.append(f"| cost item | over {months} months |" if months else "| cost item | total |")
            lines.append("|---|---|")
            lines.extend(f"| {k.removesuffix('_usd')} | {fmt_usd(v)} |" for k, v in breakdown.items() if v)
        mem = o.performance.get("memory") or {}
        if mem:
            lines.append("")
            lines.append(f"Memory per accelerator: {fmt_bytes(mem.get('per_accelerator_bytes') or 0)} of "
                         f"{fmt_bytes(mem.get('capacity_bytes') or 0)}.")
        lines.append("")
    hidden = hidden_lines(plan)
    if hidden:
        lines.extend(["## Not shown", *(f"- {x}" for x in hidden), ""])
    if plan.excluded:
        lines.append("## Excluded")
        lines.extend(f"- **{e.what}**: {e.reason}" for e in plan.excluded)
        lines.append("")
    return "\n".join(lines)


def _plan_html_body(plan: Plan, with_plotly_js: bool, demote: int = 0) -> tuple[str, bool]:
    """A plan's HTML without the page around it: the summary (title, options table), then the charts, then
    each option's details; and whether plotly.js is still to be embedded. ``with_plotly_js``: embed it with
    the first chart (once per page); ``demote``: heading levels to add (a workload's plan in a fleet report)."""
    from infrafit.report.figures import ALL_FIGURES

    body = []
    for fig in (f(plan) for f in ALL_FIGURES):
        if fig is None:
            continue
        body.append(fig.to_html(full_html=False, include_plotlyjs=with_plotly_js))
        with_plotly_js = False
    md = render_markdown(plan)
    head, _, details = md.partition("\n## #")  # the options' own sections start "## #1: ..."
    details = "## #" + details if details else ""
    return (_markdown_html(_demoted(head, demote)) + "".join(body) + _markdown_html(_demoted(details, demote)),
            with_plotly_js)


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")


def render_html(plan: Plan) -> str:
    """One self-contained HTML file: plotly embedded inline, nothing fetched."""
    return _page(f"infrafit plan: {plan.name}", _plan_html_body(plan, with_plotly_js=True)[0])


def _demoted(md: str, levels: int) -> str:
    """``md`` with every ATX heading ``levels`` deeper (``# x`` -> ``## x``), at most ``######``."""
    if levels <= 0:
        return md
    out = []
    for line in md.split("\n"):
        depth = len(line) - len(line.lstrip("#"))
        if 0 < depth <= 6 and line[depth:depth + 1] == " ":
            line = "#" * min(depth + levels, 6) + line[depth:]
        out.append(line)
    return "\n".join(out)


def _fleet_summary_markdown(result: Mapping[str, Any]) -> str:
    """The fleet's own part: each workload's best option apart, the combined plan, its why and exclusions."""
    lines = [f"# infrafit fleet plan: {result['name']}", ""]
    combined = result.get("combined") or {}
    if combined:
        head = "shared fleet" if combined["kind"] == "shared" else "planned apart"
        lines += [f"**Combined ({head}): TCO {fmt_usd(combined['tco_usd'])} over {result['horizon_months']} months, "
                  f"saving {fmt_usd(combined['saving_usd'])} against {fmt_usd(result['separate_tco_usd'])} "
                  "with every workload planned apart.**", ""]
    lines += ["| " + " | ".join(FLEET_COLUMNS) + " |", "|" + "---|" * len(FLEET_COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in fleet_rows(result)]
    lines.append("")
    if combined.get("why"):
        lines += ["## Why this combined plan", "", *(f"- {x}" for x in combined["why"]), ""]
    if result.get("excluded"):
        lines += ["## Excluded", "", *(f"- **{e['what']}**: {e['reason']}" for e in result["excluded"]), ""]
    return "\n".join(lines)


def render_fleet_markdown(result: Mapping[str, Any]) -> str:
    """A fleet plan as Markdown: the fleet summary, then each workload's own plan one heading level down."""
    parts = [_fleet_summary_markdown(result)]
    for w in result["workloads"]:
        parts.append(f"## Workload {w['name']}\n")
        parts.append(_demoted(render_markdown(Plan.from_dict(w["plan"])), 2))
    return "\n".join(parts)


def render_fleet_html(result: Mapping[str, Any]) -> str:
    """A fleet plan as one self-contained HTML file: the summary, then each workload's plan with its charts
    (plotly.js embedded once)."""
    body = [_markdown_html(_fleet_summary_markdown(result))]
    js = True
    for w in result["workloads"]:
        body.append(_markdown_html(f"## Workload {w['name']}"))
        text, js = _plan_html_body(Plan.from_dict(w["plan"]), with_plotly_js=js, demote=2)
        body.append(text)
    return _page(f"infrafit fleet plan: {result['name']}", "".join(body))


_CSS = ("body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#1f2328}"
        "table{border-collapse:collapse;margin:1em 0;font-size:0.92em}"
        "th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
        "th{background:#f6f8fa}h2{margin-top:1.6em;border-bottom:1px solid #d0d7de}")


def _markdown_html(text: str) -> str:
    """Markdown to HTML with markdown-it-py (CommonMark + tables); raw HTML in the text is escaped."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def write_report(plan: Plan | Mapping[str, Any], path: Path) -> None:
    """Write ``path`` as HTML or Markdown by its suffix; atomically (no half-written report). ``plan`` is a
    ``Plan`` or a fleet plan (``search.fleet.plan_fleet``'s dict)."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        text = render_fleet_html(plan) if not isinstance(plan, Plan) else render_html(plan)
    elif suffix in (".md", ".markdown"):
        text = render_fleet_markdown(plan) if not isinstance(plan, Plan) else render_markdown(plan)
    else:
        raise InputError(f"--report {path}: unknown report type {suffix or '(none)'!r}",
                         fix="name the file with .html or .md")
    safe_io.atomic_write_text(path, text, what="report", fix="choose a writable path for --report")
