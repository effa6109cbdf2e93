"""The two things a forwarded report must say first: the recommendation in one line, and the workload it
is for (model, task, traffic, lengths, SLOs, residency, horizon, budget)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infrafit.search.explain import SLO_LABEL
from infrafit.search.offers import OWNED_PROVIDER
from infrafit.units import fmt_duration, fmt_usd

_SLO_NAMES = {k: v for k, v in SLO_LABEL.items() if not k.startswith("time_to_train")}  # the latency SLOs
#: Short deployment names for tables, legends and charts.
MODE_SHORT = {"cloud_on_demand": "on-demand", "cloud_spot": "spot", "cloud_reserved_1y": "reserved 1y",
              "cloud_reserved_3y": "reserved 3y", "cloud_capacity_block": "capacity block",
              "dedicated_monthly": "dedicated", "on_prem": "on-prem", "hybrid": "hybrid"}
_MODE_WORDS = {"cloud_on_demand": "on demand", "cloud_spot": "on spot", "cloud_reserved_1y": "reserved for 1 year",
               "cloud_reserved_3y": "reserved for 3 years", "cloud_capacity_block": "in a prepaid capacity block",
               "dedicated_monthly": "as dedicated servers",
               "on_prem": "bought on-prem", "hybrid": "hybrid"}


def _slo_line(option, slo: Mapping[str, Any]) -> str:
    """The option's latency against the SLO that binds it most."""
    lat = option.performance.get("latency") or {}
    figures = {"ttft_p99_s": (lat.get("ttft_s") or {}).get("p99"), "tpot_p99_s": (lat.get("tpot_s") or {}).get("p99"),
               "e2e_p99_s": (lat.get("e2e_s") or {}).get("p99"), "latency_p99_s": (lat.get("e2e_s") or {}).get("p99")}
    pairs = [(k, float(figures[k] or 0.0), float(v)) for k, v in slo.items() if v and figures.get(k)]
    if not pairs:
        ttt = option.performance.get("time_to_train_s")
        return f"trains in {fmt_duration(float(ttt))}" if ttt else ""
    k, value, limit = max(pairs, key=lambda t: t[1] / t[2])
    return f"{_SLO_NAMES[k]} {fmt_duration(value)} within the {fmt_duration(limit)} SLO"


def headline(plan) -> str:
    """'Recommended: 1x B200 (lambda_gpu_1x_b200) on demand at Lambda, lambda-asia-northeast-1: $10.4k/month
    now, $23k at peak; TTFT p99 0.76 s within the 1 s SLO; because ...'."""
    if not plan.options:
        return "No option meets the hard constraints: see Excluded."
    o = plan.options[0]
    host = (o.server or {}).get("host_id")
    n = int((o.server or {}).get("instances_per_replica") or 1)
    where = f"{o.provider}, {o.region}" if o.region else o.provider
    cost = o.cost
    first, peak = float(cost.get("monthly_usd") or 0.0), float(cost.get("peak_monthly_usd") or 0.0)
    money = f"{fmt_usd(first)}/month now" + (f", {fmt_usd(peak)} at peak" if peak > first * 1.01 else "")
    slo = (plan.workload.get("inference") or {}).get("slo") or {}
    perf = _slo_line(o, slo)
    because = o.why[0].split(":")[0] if o.why else ""
    what = f"{o.count}x {o.accelerator} {o.precision}" + (f" ({n} x {host})" if host and n > 1 else
                                                         f" ({host})" if host else "")
    how = _MODE_WORDS.get(o.deployment, o.deployment)
    if o.provider == OWNED_PROVIDER:  # servers the team has (deployment.owned): nothing is bought
        how, where = "on servers you own, on-prem", o.region or "the on-prem site"
    parts = [f"Recommended: {what} {how} at {where}",
             f"{money}; TCO {fmt_usd(float(cost.get('tco_usd') or 0.0))} over {cost.get('horizon_months')} months"]
    if perf:
        parts.append(perf)
    if because:
        parts.append(f"because it is the {because}")
    return "; ".join(parts) + "."


def _tokens(t: Any) -> str:
    if isinstance(t, Mapping):
        p99 = t.get("p99")
        return f"{t.get('mean'):g} mean" + (f", {p99:g} p99" if p99 else "")
    return f"{t:g}" if isinstance(t, int | float) else str(t)


def workload_lines(w: Mapping[str, Any]) -> list[str]:
    """The workload as short Markdown bullets, every figure with its unit."""
    prec = w.get("precision")
    prec = ", ".join(prec) if isinstance(prec, list | tuple) else prec
    out = [f"**Model** {w.get('model')} ({w.get('task')}, {w.get('framework')}, precision {prec})"]
    inf = w.get("inference") or {}
    if inf:
        t = inf.get("traffic") or {}
        items = t.get("items") or {}
        rate = (f"{t['requests_per_s']:g} requests/s" + (f", {t['peak_requests_per_s']:g} at peak"
                                                        if t.get("peak_requests_per_s") else "")
                if t.get("requests_per_s") else
                f"{items.get('per_day', 0):,.0f} items a day in {items.get('window_hours')} h")
        out.append(f"**Traffic** {inf.get('mode')}, {rate}, profile {t.get('daily_profile')}")
        if t.get("input_tokens") or t.get("output_tokens"):
            out.append(f"**Lengths** input {_tokens(t.get('input_tokens'))} tokens, output "
                       f"{_tokens(t.get('output_tokens'))} tokens")
        slo = {k: v for k, v in (inf.get("slo") or {}).items() if v and k in _SLO_NAMES}
        if slo:
            out.append("**SLOs** " + ", ".join(f"{_SLO_NAMES[k]} {fmt_duration(float(v))}" for k, v in slo.items()))
    tr = w.get("training") or {}
    if tr:
        size = f"{tr['tokens']:,.0f} tokens" if tr.get("tokens") else f"{tr.get('samples') or 0:,.0f} samples"
        dl = f", deadline {tr['deadline_days']:g} days" if tr.get("deadline_days") else ""
        out.append(f"**Training** {tr.get('method')}, {size}, sequence {tr.get('seq_len')}{dl}")
    pl = w.get("placement") or {}
    where = ", ".join(list(pl.get("regions") or []) + list(pl.get("countries") or [])) or "anywhere"
    users = f"; users in {', '.join(pl['users_in'])}" if pl.get("users_in") else ""
    out.append(f"**Residency** {where}{users}")
    b = w.get("budget") or {}
    budget = ", ".join(x for x in (f"{fmt_usd(b['monthly_usd'])}/month" if b.get("monthly_usd") else "",
                                   f"{fmt_usd(b['total_usd'])} in all" if b.get("total_usd") else "") if x)
    out.append(f"**Horizon** {w.get('horizon_months')} months" + (f"; **budget** {budget}" if budget else ""))
    dep = w.get("deployment") or {}
    out.append(f"**Deployments allowed** {', '.join(dep.get('allowed') or [])}"
               + (f"; must meet {', '.join(dep['require'])}" if dep.get("require") else ""))
    return out
