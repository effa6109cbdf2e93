"""What changed between two plans (``plan --json`` files): the top option, its cost and its
performance, and each rank's option, as text or Markdown for a pull-request comment.

Pure: ``diff_plans(old, new) -> dict`` compares; ``render_diff(d, markdown=...) -> str`` words it.
"""

from __future__ import annotations

from typing import Any

from infrafit.units import fmt_duration, fmt_usd

#: Performance figures compared: (section under ``performance``, key, JSON name, label in the text).
PERF_KEYS = (("latency", "ttft_s", "ttft_p99_s", "TTFT p99"), ("latency", "e2e_s", "e2e_p99_s", "end-to-end p99"))
LABELS = {name: label for _, _, name, label in PERF_KEYS} | {"time_to_train_s": "time to train"}


def _label(o: dict[str, Any] | None) -> str:
    if not o:
        return "(none)"
    return (f"{o['count']}x {o['accelerator']} {o['precision']} on {o['provider']} {o.get('region') or ''} "
            f"({o['deployment']})").replace("  ", " ")


def _perf(o: dict[str, Any] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    if not o:
        return out
    perf = o.get("performance") or {}
    for section, key, name, _ in PERF_KEYS:
        value = ((perf.get(section) or {}).get(key) or {})
        if isinstance(value, dict) and value.get("p99") is not None:
            out[name] = float(value["p99"])
    if perf.get("time_to_train_s"):
        out["time_to_train_s"] = float(perf["time_to_train_s"])
    return out


def _tco(o: dict[str, Any] | None) -> float | None:
    return float(o["cost"]["tco_usd"]) if o else None


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The changes from ``old`` to ``new``: ``top`` (labels, TCO before/after and change fraction,
    performance before/after), ``ranks`` (per rank: label and TCO before/after), ``excluded`` added and
    removed lines."""
    old_opts, new_opts = list(old.get("options") or []), list(new.get("options") or [])
    o1, n1 = (old_opts[0] if old_opts else None), (new_opts[0] if new_opts else None)
    t_old, t_new = _tco(o1), _tco(n1)
    change = (t_new / t_old - 1.0) if t_old and t_new is not None else None
    ranks = []
    for r in range(max(len(old_opts), len(new_opts))):
        a = old_opts[r] if r < len(old_opts) else None
        b = new_opts[r] if r < len(new_opts) else None
        ranks.append({"rank": r + 1, "old": _label(a), "new": _label(b), "old_tco_usd": _tco(a),
                      "new_tco_usd": _tco(b), "same_option": bool(a and b and a.get("offer_id") == b.get("offer_id")
                                                                  and a["count"] == b["count"])})
    old_ex = {f"{e['what']}: {e['reason']}" for e in old.get("excluded") or []}
    new_ex = {f"{e['what']}: {e['reason']}" for e in new.get("excluded") or []}
    return {"top": {"old": _label(o1), "new": _label(n1), "changed": _label(o1) != _label(n1),
                    "old_tco_usd": t_old, "new_tco_usd": t_new, "tco_change_fraction": change,
                    "old_performance": _perf(o1), "new_performance": _perf(n1)},
            "ranks": ranks, "excluded_added": sorted(new_ex - old_ex), "excluded_removed": sorted(old_ex - new_ex)}


def _money(v: float | None) -> str:
    return "-" if v is None else fmt_usd(v)


def render_diff(d: dict[str, Any], *, markdown: bool = False) -> str:
    top = d["top"]
    ch = top["tco_change_fraction"]
    change = "" if ch is None else f" ({ch:+.1%})"
    head = (f"Top option {'changed' if top['changed'] else 'unchanged'}: {top['old']} -> {top['new']}"
            if top["changed"] else f"Top option unchanged: {top['new']}")
    lines = [("**" + head + "**") if markdown else head,
             f"TCO of the top option: {_money(top['old_tco_usd'])} -> {_money(top['new_tco_usd'])}{change}"]
    for name in sorted(set(top["old_performance"]) | set(top["new_performance"])):
        a, b = top["old_performance"].get(name), top["new_performance"].get(name)
        lines.append(f"{LABELS.get(name, name)}: {fmt_duration(a) if a is not None else '-'} -> "
                     f"{fmt_duration(b) if b is not None else '-'}")
    lines.append("")
    if markdown:
        lines += ["| rank | before | TCO | after | TCO |", "|---|---|---|---|---|"]
        lines += [f"| {r['rank']} | {r['old']} | {_money(r['old_tco_usd'])} | {r['new']} | {_money(r['new_tco_usd'])} |"
                  for r in d["ranks"]]
    else:
        lines += [f"#{r['rank']}: {r['old']} {_money(r['old_tco_usd'])} -> "
                  f"{'same' if r['same_option'] else r['new']} {_money(r['new_tco_usd'])}" for r in d["ranks"]]
    for word, items in (("now excluded", d["excluded_added"]), ("no longer excluded", d["excluded_removed"])):
        if items:
            lines += ["", f"{word}:"] + [f"- {x}" for x in items]
    return "\n".join(lines) + "\n"
