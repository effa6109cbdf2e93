"""Why each option ranks where it does, its risks, and one line per excluded family.

Every sentence is built from numbers the earlier stages computed (SLO values against their
limits, roofline terms of the estimate, the cost breakdown, offer metadata); nothing here decides
what is good. Thresholds that turn a number into a risk are named constants with their reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date
from typing import Any

import numpy as np

from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH, HOURS_PER_WEEK, SECONDS_PER_HOUR, fmt_duration, fmt_usd

#: A price older than this is flagged: cloud GPU list prices moved by 10-45 % within 2024-2025
#: (AWS P4/P5 cuts of June 2025), so half a year is the horizon over which a quote is still current.
STALE_PRICE_DAYS = 180
SLO_LABEL = {"ttft_p99_s": "TTFT p99", "tpot_p99_s": "TPOT p99", "e2e_p99_s": "end-to-end p99",
             "latency_p99_s": "latency p99", "time_to_train_s": "time to train",
             "time_to_train_p90_s": "time to train at the p90 of its band"}
_TERM_LABEL = {"weights_read_s": "weights read", "kv_read_s": "KV-cache read", "gemm_compute_s": "GEMM compute",
               "attention_compute_s": "attention compute", "collectives_s": "collectives",
               "overhead_s": "step overhead"}


def fmt_value(name: str, value: float) -> str:
    return fmt_duration(value) if name.endswith("_s") else f"{value:,.3g}"


def binding_constraint(slo: dict, i: int, checked: dict[str, float] | None = None) -> str | None:
    """The SLO (or deadline) closest to its limit for row ``i``: 'TTFT p99 0.62 s of 1 s (62 %)'. ``checked``
    holds the figures at the band's p90 where the planner checked the SLOs there (``--risk p90``): the binding
    one is then the one closest to its limit at that risk, and the line says both figures."""
    best = None
    for name, (values, limit) in slo.items():
        if not limit or not np.isfinite(limit):
            continue
        at_risk = (checked or {}).get(name)
        ratio = (float(values[i]) if at_risk is None else at_risk) / limit
        if best is None or ratio > best[0]:
            best = (ratio, name, float(values[i]), limit, at_risk)
    if best is None:
        return None
    ratio, name, value, limit, at_risk = best
    limit_word = "deadline" if name.startswith("time_to_train") else "SLO"
    figure = (fmt_value(name, value) if at_risk is None else
              f"{fmt_value(name, at_risk)} at the p90 of its band ({fmt_value(name, value)} predicted)")
    return (f"binding constraint: {SLO_LABEL.get(name, name)} {figure} against the "
            f"{fmt_value(name, limit)} {limit_word} ({ratio:.0%} of it)")


def risk_line(uncertainty: dict | None, limits: dict[str, float | None], risk: str, added_s: float = 0.0) -> str | None:
    """How much room the SLOs leave at the p90 of the uncertainty band, whatever risk the planner checked
    at: 'SLOs checked at p50 of the band; at its p90 (model and chip in the fit) TTFT p99 reaches 1.6 s
    against the 1 s SLO, -60 % headroom'. The tightest SLO is named."""
    figures = (uncertainty or {}).get("figures") or {}
    best = None
    for name, limit in limits.items():
        f = figures.get(name)
        if not limit or not f:
            continue
        value = float(f["p90"]) + (0.0 if name == "tpot_p99_s" else added_s)  # network delays requests, not tokens
        headroom = 1.0 - value / float(limit)
        if best is None or headroom < best[0]:
            best = (headroom, name, value, float(limit))
    if best is None:
        return None
    headroom, name, value, limit = best
    regime = ("model and chip in the fit" if (uncertainty or {}).get("regime") == "in_fit"
              else "model or chip not in the fit: wider band")
    return (f"SLOs checked at {risk} of the uncertainty band; at its p90 ({regime}) {SLO_LABEL.get(name, name)} "
            f"reaches {fmt_value(name, value)} against the {fmt_value(name, limit)} SLO, {headroom:.0%} headroom"
            + ("" if headroom >= 0 or risk == "p90" else " (plan --risk p90 to size for it)"))


def _mfu_text(terms: dict[str, float]) -> str:
    """MFU is counted against the dense bf16 peak (perf.training's convention), so an fp8 or int8 run
    reads 'MFU 91%' while it uses 45% of its own peak: say both when they differ."""
    mfu, own = terms.get("mfu_fraction"), terms.get("peak_fraction")
    if mfu is None:
        return ""
    if own is not None and abs(own - mfu) > 0.01:
        return f"; MFU {mfu:.0%} of the dense bf16 peak ({own:.0%} of the peak at its own precision)"
    return f"; MFU {mfu:.0%}"


def roofline_line(terms: dict[str, float], bottleneck: str | None = None) -> str | None:
    """The largest terms of one step, e.g. 'decode step: weights read 8.1 ms, KV-cache read 3.2 ms'."""
    if "concurrency" in terms:
        parts = sorted(((v, k) for k, v in terms.items() if k in _TERM_LABEL and v > 0), reverse=True)[:3]
        total = sum(v for v, _ in parts) or 1.0
        text = ", ".join(f"{_TERM_LABEL[k]} {fmt_duration(v)} ({v / total:.0%})" for v, k in parts)
        return (f"decode step at {terms['concurrency']:.0f} requests in flight (KV cache holds "
                f"{terms['kv_max_concurrency']:,.0f}): {text}")
    shares = {k.removesuffix("_share"): v for k, v in terms.items() if k.endswith("_share") and v > 0}
    if shares:
        top = sorted(shares.items(), key=lambda kv: -kv[1])[:3]
        return "training step: " + ", ".join(f"{k.replace('_', ' ')} {v:.0%}" for k, v in top) + _mfu_text(terms)
    return f"bottleneck: {bottleneck}" if bottleneck else None


def cost_drivers(breakdown: dict[str, float], tco: float) -> str:
    items = sorted(((v, k) for k, v in breakdown.items() if v > 0), reverse=True)[:3]
    return "cost drivers: " + ", ".join(f"{k.removesuffix('_usd').replace('_', ' ')} {fmt_usd(v)} "
                                        f"({v / tco:.0%})" for v, k in items) if tco > 0 and items else ""


def versus_line(tco: float, mode: str, alternatives: dict[str, float]) -> str | None:
    """Compare with the cheapest feasible option of every other deployment mode."""
    others = {m: v for m, v in alternatives.items() if m != mode and np.isfinite(v)}
    if not others:
        return None
    parts = []
    for m, v in sorted(others.items(), key=lambda kv: kv[1])[:3]:
        delta = (v - tco) / tco if tco > 0 else 0.0
        word = "cheaper" if delta < 0 else "more"
        parts.append(f"best {m} {fmt_usd(v)} ({abs(delta):.0%} {word})")
    return "against other modes: " + ", ".join(parts)


def price_age_days(retrieved_on: object, today: date) -> int | None:
    try:
        return (today - date.fromisoformat(str(retrieved_on)[:10])).days
    except ValueError:
        return None


def price_age(options: list[dict], dates: list[str], today: date) -> dict[str, Any]:
    """The plan's price dates, said once: the range behind the candidates and which shown options rest on
    a price older than ``STALE_PRICE_DAYS`` (parts of a hybrid option count for it)."""
    stale = []
    for o in options:
        for row in [o, *o.get("parts", [])]:
            age = price_age_days(row.get("price_retrieved_on"), today)
            if age is not None and age > STALE_PRICE_DAYS:
                stale.append({"rank": o.get("rank"), "retrieved_on": row.get("price_retrieved_on"), "age_days": age})
                break
    return {"oldest_retrieved_on": min(dates) if dates else None, "newest_retrieved_on": max(dates) if dates else None,
            "stale_after_days": STALE_PRICE_DAYS, "stale_options": stale}


def price_age_line(age: Mapping[str, Any]) -> str | None:
    """One sentence for the terminal and reports, or None when every shown price is fresh."""
    stale = age.get("stale_options") or []
    if not stale:
        return None
    ranks = ", ".join(f"#{s['rank']} ({s['retrieved_on']}, {s['age_days']} days)" for s in stale)
    return (f"stale prices (older than {age.get('stale_after_days')} days) behind option(s) {ranks}: refresh them "
            "(`infrafit catalog refresh`) or drop old prices with --max-price-age-days")


def price_risks(offer: dict, today: date) -> list[str]:
    """Per-option price caveats (staleness is said once per plan: ``price_age``)."""
    out = []
    if str(offer.get("derived")).lower() == "true" or str(offer.get("confidence")) == "low":
        out.append(f"price is derived or low-confidence ({offer.get('confidence')}): "
                   f"{str(offer.get('notes') or '').split(';')[0][:120]}")
    return out


#: Spot instances held at once from which a capacity risk is stated: a provider may not have that
#: many spare (AWS: "Spot capacity ... can be interrupted ... when EC2 needs the capacity back";
#: a large request is more likely to be partly unfilled). An assumption, documented in docs/cost.md.
SPOT_CAPACITY_RISK_INSTANCES = 8


def _rate(per_day: float) -> str:
    """A daily rate for a sentence: one decimal from 0.1 a day up, two significant digits below."""
    return f"{per_day:.1f}" if per_day >= 0.1 else f"{per_day:.2g}"


def mode_risks(mode: str, cost_json: dict, term_months: float, horizon: int, interruptions_per_hour: float,
               realtime: bool, instances: float = 1.0, rate_source: str = "",
               block_end_margin_h: float = 0.0, lead_months: float = 0.0,
               preempted_units: float | None = None) -> list[str]:
    """Risk lines of the deployment mode. ``rate_source``: where a published spot rate comes from
    ("" = the assumed default); ``block_end_margin_h``: the paid end of a prepaid block the instances
    cannot run (cost_billing.csv ``end_margin_s``); ``lead_months``: a purchase's order to delivery
    (cost_lead_time.csv); ``preempted_units``: what is reclaimed independently, as the cost prices it
    (``instances``, or 1 for a multi-host TPU slice, preempted as one unit)."""
    out = []
    if mode == "cloud_spot":
        units = instances if preempted_units is None else preempted_units
        extra = "; realtime serving keeps an on-demand fallback (priced)" if realtime else ""
        per_day = interruptions_per_hour * HOURS_PER_DAY * units
        per_job = "" if realtime or instances <= 1 else (
            f"; a synchronous job over {instances:.0f} instances stops about {_rate(per_day)} times a day (priced)"
            if units > 1 else f"; its {instances:.0f} hosts form one slice, reclaimed as one unit (priced so)")
        how = f"({rate_source})" if rate_source else "assumed"
        out.append(f"spot interruption: about {_rate(interruptions_per_hour * HOURS_PER_DAY)} per instance per day "
                   f"{how}, each losing work since the last checkpoint{extra}{per_job}")
        held = max(cost_json.get("replicas") or [1.0]) * instances
        if held >= SPOT_CAPACITY_RISK_INSTANCES:
            out.append(f"spot capacity: {held:.0f} spot instances at once may not all be available; "
                       "keep an on-demand or reserved fallback ready")
    if term_months > 1:
        beyond = sum(v for k, v in cost_json.get("beyond", {}).items()) if cost_json.get("beyond") else 0.0
        tail = f"; {fmt_usd(beyond)} falls after the {horizon}-month horizon" if beyond > 0 else ""
        out.append(f"commitment: {term_months:.0f}-month term paid whether used or not{tail}")
    if mode == "on_prem" and lead_months > 0:
        weeks = lead_months * HOURS_PER_MONTH / HOURS_PER_WEEK
        bridge = float((cost_json.get("breakdown") or {}).get("bridge_usd") or 0.0)
        how = (f"bridged by on-demand cloud for {fmt_usd(bridge)} (priced)" if bridge > 0
               else "no allowed cloud offer of the same accelerator bridges it: the service starts at delivery")
        out.append(f"on-prem: capital outlay up front and ~{weeks:.0f} weeks from order to delivery "
                   f"(cost_lead_time.csv), {how}; racking and burn-in come on top")
    elif mode == "on_prem":
        out.append("on-prem: capital outlay up front and lead time to buy, rack and power the servers")
    if mode == "cloud_capacity_block":
        days = float(cost_json.get("commitment_months") or 0.0) * HOURS_PER_MONTH / HOURS_PER_DAY
        stop = (f"; the instances stop {fmt_duration(block_end_margin_h * SECONDS_PER_HOUR)} before it ends"
                if block_end_margin_h > 0 else "")
        out.append(f"capacity block: a {days:.0f}-day block per run, bought ahead and paid upfront (not cancellable"
                   f"{stop}); book it before the run")
    return out


def family_fail_line(kind: str, name: str, value: float, limit: float, where: str,
                     checked: float | None = None) -> str:
    """Why a family has no feasible option: its best configuration's figure against the limit. ``checked``:
    the figure the check used when it is not the prediction (the band's p90 at ``risk: p90``), which is then
    the one compared: "TTFT p99 1.42 s predicted, 2.13 s at the p90 of its band > 2.00 s SLO"."""
    if name == "capacity":  # no limit was checked: nothing that fits serves a request (batch work, no SLOs)
        rate = "no rate could be computed" if not math.isfinite(value) else f"{value:g} requests/s"
        return f"serves no load: {rate} at every configuration that fits (best: {where})"
    label = SLO_LABEL.get(name, name)
    word = "deadline" if name.startswith("time_to_train") else "SLO"
    if math.isnan(value):  # nothing computed it (no layout of the family had a figure): say so, not "∞"
        return f"{label} could not be computed for any configuration that fits (best: {where})"
    if checked is not None:
        return (f"{label} {fmt_value(name, value)} predicted, {fmt_value(name, checked)} at the p90 of its band > "
                f"{fmt_value(name, limit)} {word} (best: {where})")
    return f"{label} {fmt_value(name, value)} > {fmt_value(name, limit)} {word} (best: {where})"


__all__ = ["STALE_PRICE_DAYS", "price_age", "price_age_days", "price_age_line", "binding_constraint", "risk_line",
           "cost_drivers", "family_fail_line", "mode_risks", "price_risks", "roofline_line", "versus_line"]
