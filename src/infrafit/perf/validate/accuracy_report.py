"""Write docs/accuracy.md: ``python -m infrafit.perf.validate.accuracy_report`` (``make accuracy``).

Runs ``validate`` on every ``benchmarks/data/*.csv`` (with ``tests/fixtures/model_configs`` as the
model-config folder) and tabulates the median absolute percentage error by accelerator family, task
and metric kind; adds the cross-validation of the LLM profile fit (``benchmarks/llm_profile_fit.json``,
written by ``scripts/fit_profiles_llm.py --cv``) and lists every skipped row with its reason.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
TARGETS = ("MdAPE <= 15% overall, <= 25% per family with >= 5 rows; latency set TTFT <= 25%, TPOT <= 15%; "
           ">= 90% predicted")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _table(title: str, groups: dict[str, dict]) -> list[str]:
    lines = [f"| {title} | rows | MdAPE | band coverage |", "|---|---:|---:|---:|"]
    lines += [f"| {k} | {g['rows']} | {_pct(g['mdape'])} | {_pct(g.get('band_coverage'))} |"
              for k, g in groups.items()]
    return lines + [""]


def section(name: str, result: dict) -> list[str]:
    share = result["predicted"] / max(result["rows"], 1)
    out = [f"## {name}", "",
           f"Rows {result['rows']}, predicted {result['predicted']} ({100 * share:.1f}%), "
           f"skipped {len(result['skipped'])}; overall MdAPE **{_pct(result['mdape'])}**; band coverage "
           f"{_pct(result.get('band_coverage'))} (measurements inside their prediction's p10-p90 band).", ""]
    for key, title in (("accelerator_family", "accelerator family"), ("task", "task"),
                       ("metric_kind", "metric kind")):
        out += _table(title, result["by"][key])
    return out


def skipped(name: str, result: dict) -> list[str]:
    if not result["skipped"]:
        return [f"{name}: none skipped.", ""]
    lines = [f"| {name} row | reason |", "|---|---|"]
    lines += [f"| {s['row_id']} | {s['reason']} |" for s in result["skipped"]]
    return lines + [""]


def cross_validation() -> list[str]:
    path = ROOT / "benchmarks" / "llm_profile_fit.json"
    if not path.is_file():
        return ["Cross-validation: not run (run `scripts/fit_profiles_llm.py --cv`).", ""]
    fit = json.loads(path.read_text())
    lines = ["## Cross-validation of the LLM efficiency fit", "",
             f"Fitted on {fit['cases']} LLM rows (both sets) on {fit.get('fitted_on', '?')}; in-sample MdAPE "
             f"{_pct(fit['mdape'])}. Rows repeating another configuration's measurement (`exact_duplicate_of`) "
             "are left out. Each held-out group (a model architecture, so names of one network such as "
             "DeepSeek-R1 and -V3 leave together, or an accelerator, with >= 50 rows) is "
             "predicted by profiles fitted without it (which keys get their own row is also decided on the "
             "training rows, so it is treated as an unseen model or chip):", "", "| scheme | rows | MdAPE |",
             "|---|---:|---:|"]
    lines += [f"| {k} | {v['rows']} | {_pct(v['mdape'])} |" for k, v in fit.get("cv", {}).items()]
    return lines + [""] + cv_breakdown(fit)


#: Leave-one-out targets of issue 15 by metric class (what a user sees on a model or chip not in the fit).
LOO_TARGETS = {"throughput": 0.15, "ttft": 0.25, "tpot": 0.12}


def cv_breakdown(fit: dict) -> list[str]:
    """In-sample and held-out MdAPE per metric class, accelerator family and model (rows in brackets),
    with the leave-one-out target of each metric class and whether both schemes meet it."""
    if "by" not in fit:
        return []
    schemes = list(fit.get("cv", {}))
    head = "| | in-sample | " + " | ".join(schemes) + " |"
    out: list[str] = []
    for by, title in (("metric", "metric"), ("family", "accelerator family"), ("model", "model (>= 50 rows)")):
        cols = head + (" target (leave-one-out) |" if by == "metric" else "")
        out += [f"Per {title}:", "", cols.replace("| |", f"| {title} |", 1),
                "|---|" + "---:|" * (1 + len(schemes) + (by == "metric"))]
        for g, v in fit["by"].get(by, {}).items():
            if by == "model" and v["rows"] < 50:
                continue
            cells = [f"{_pct(v['mdape'])} ({v['rows']})"]
            held = [fit["cv"][k].get("by", {}).get(by, {}).get(g) for k in schemes]
            cells += [f"{_pct(h['mdape'])} ({h['rows']})" if h else "-" for h in held]
            if by == "metric" and g in LOO_TARGETS:
                met = all(h and h["mdape"] <= LOO_TARGETS[g] for h in held)
                cells.append(f"<= {LOO_TARGETS[g]:.0%}: {'met' if met else 'not met'}")
            elif by == "metric":
                cells.append("-")
            out.append(f"| {g} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def bands_section() -> list[str]:
    """The bands in force and their out-of-sample coverage (``benchmarks/bands_fit.json``, written by
    ``scripts/fit_bands.py``)."""
    path = ROOT / "benchmarks" / "bands_fit.json"
    if not path.is_file():
        return ["Uncertainty bands: not fitted (run `scripts/fit_bands.py`).", ""]
    fit = json.loads(path.read_text())
    lines = ["## Uncertainty bands", "",
             "Each prediction carries an 80 % band: the 10th-90th percentile of measured / predicted in its regime "
             "(`perf.bands`; `unseen` = the model or chip was not in the fit, from held-out predictions). The "
             "coverage in the tables above is in-sample for `in_fit` rows; the out-of-sample check is the LLM "
             "band fitted on one cross-validation scheme's held-out residuals and counted on the other's:", "",
             "| check | coverage |", "|---|---:|"]
    lines += [f"| {k} | {_pct(v)} |" for k, v in fit["coverage"].items()]
    lines += ["", "| task kind | metric | regime | p10 | p50 | p90 | rows |", "|---|---|---|---:|---:|---:|---:|"]
    lines += [f"| {b['task_kind']} | {b['metric']} | {b['regime']} | {b['p10_ratio']} | {b['p50_ratio']} | "
              f"{b['p90_ratio']} | {b['rows_count']} |" for b in fit["bands"]]
    return lines + [""]


def build(data_dir: Path, configs: Path) -> str:
    from infrafit.perf.validate.run import validate_csv

    results = {p.name: validate_csv(p, configs) for p in sorted(data_dir.glob("*.csv"))}
    lines = ["# Accuracy", "", f"Generated by `python -m infrafit.perf.validate.accuracy_report` on "
             f"{dt.date.today().isoformat()}. Targets (issue 4 §7): {TARGETS}.", "",
             "MdAPE = median of |predicted - measured| / measured. Every row is predicted from first "
             "principles and efficiency profiles keyed only by physical quantities; see "
             "docs/performance.md.", ""]
    for name, r in results.items():
        lines += section(name, r)
    lines += cross_validation()
    lines += bands_section()
    lines += ["## Skipped rows", ""]
    for name, r in results.items():
        lines += skipped(name, r)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write docs/accuracy.md")
    ap.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data")
    ap.add_argument("--model-configs", type=Path, default=ROOT / "tests" / "fixtures" / "model_configs")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "accuracy.md")
    args = ap.parse_args(argv)
    args.out.write_text(build(args.data, args.model_configs))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
