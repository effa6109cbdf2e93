"""Mark measurements that appear more than once in ``benchmarks/data/latency_calibration.csv`` under
different labels, by filling their ``exact_duplicate_of`` (which the fits and the bands already drop).

AIConfigurator's silicon sample lists one run several times: as DeepSeek-R1 and as DeepSeek-V3 (one
architecture, ``model_arch_group``), and with its parallel fields multiplied by the expert-parallel degree
(``count_check = id_suggests_N``: the id says ``tp8_ep8``, the fields say TP 64 on 64 GPUs). Two
configurations are one measurement when chip, stack, precision, lengths, client concurrency and
architecture are the same and both their TTFT and their TPOT agree to every printed digit; two
different runs do not agree on both to six significant figures. Of each set the row kept is the first
whose GPU count the source does not question (``count_check`` ok, then one re-read from its id, then
one without a hint), so a measurement counts once, at the layout it ran. Idempotent; rows the source
already marked keep their mark.

Run from a checkout: ``python scripts/mark_twin_measurements.py`` (rewrites the file in place).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "latency_calibration.csv"
SAME = ("accelerator_id", "software_stack_family", "precision", "input_tokens", "output_tokens", "concurrency",
        "model_arch_group")
#: which row of a twin set is kept: the source's own count is trusted first
def trust(row: dict[str, str]) -> int:
    flag = (row.get("count_check") or "").strip()
    return 1 if flag.startswith("id_suggests") else {"ok": 0, "no_id_hint": 2}.get(flag, 3)


def twins(rows: list[dict[str, str]]) -> dict[str, str]:
    """``{row_id: kept row_id}`` for every row that repeats another configuration's measurement."""
    configs: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for r in rows:
        if (r.get("exact_duplicate_of") or "").strip():
            continue
        config, _, metric = r["row_id"].rpartition(":")
        configs[config][metric] = r
    sets: dict[tuple, list[str]] = defaultdict(list)
    for config, by_metric in configs.items():
        if set(by_metric) != {"ttft_s", "tpot_s"}:
            continue
        first = by_metric["ttft_s"]
        key = (*(first.get(c, "").strip() for c in SAME), by_metric["ttft_s"]["metric_value"].strip(),
               by_metric["tpot_s"]["metric_value"].strip())
        sets[key].append(config)
    out: dict[str, str] = {}
    for members in sets.values():
        if len(members) < 2:
            continue
        ranked = sorted(members, key=lambda c: trust(configs[c]["ttft_s"]))  # stable: file order breaks ties
        for config in ranked[1:]:
            for metric in ("ttft_s", "tpot_s"):
                out[f"{config}:{metric}"] = f"{ranked[0]}:{metric}"
    return out


def main() -> None:
    with PATH.open(newline="") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    marks = twins(rows)
    for r in rows:
        if r["row_id"] in marks:
            r["exact_duplicate_of"] = marks[r["row_id"]]
    with PATH.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\r\n")
        w.writeheader()
        w.writerows(rows)
    print(f"marked {len(marks)} rows as repeats of another configuration's measurement; "
          f"{sum(1 for r in rows if r['exact_duplicate_of'])} of {len(rows)} rows now carry exact_duplicate_of")


if __name__ == "__main__":
    main()
