"""``plan`` and ``estimate`` are one performance engine: for every example and every option a plan
shows, ``infrafit estimate`` with the option's configuration, offer and operating point returns
exactly the option's latency, throughput and time to train, and the figure the ranking used (the
Pareto front's metric, from ``perf.evaluate``'s arrays) is the one the option shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infrafit.cli import main

EXAMPLES = [p for p in sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))
            if "\nworkloads:" not in p.read_text()]  # fleet specs: tests/unit/test_fleet.py


def _plan(capsys, spec: Path, objective: str) -> dict:
    code = main(["plan", str(spec), "--json", "--top", "3", "--objective", objective])
    out = capsys.readouterr().out
    assert code in (0, 3)
    return json.loads(out)


def _parts(option: dict) -> list[dict]:
    return option.get("parts") or [option]


def _estimate_args(spec: Path, part: dict) -> list[str]:
    perf = part["performance"]
    lay = perf["parallelism"]
    args = ["estimate", str(spec), "--offer", part["offer_id"], "--count", str(part["count"]),
            "--precision", part["precision"], "--tp", str(lay["tp"]), "--pp", str(lay["pp"]), "--ep", str(lay["ep"]),
            "--json"]
    if part["stack"] not in (None, "default"):
        args += ["--stack", part["stack"]]
    point = perf.get("operating_point") or {}
    if point.get("concurrency") is not None:
        args += ["--concurrency", repr(point["concurrency"])]
    elif point.get("batch") is not None:
        args += ["--batch", repr(point["batch"])]
    if perf.get("time_to_train_s") is not None:
        args += ["--dp", str(lay["dp"]), "--cp", str(lay.get("cp", 1))]
    return args


def _numbers(perf: dict) -> dict:
    return {"throughput": perf["throughput"], "latency": perf["latency"], "time_to_train_s": perf["time_to_train_s"]}


@pytest.mark.parametrize("objective", ["cost", "latency"])
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_estimate_at_the_options_point_reproduces_it(capsys, spec, objective):
    plan = _plan(capsys, spec, objective)
    checked = 0
    for option in plan["options"]:
        for part in _parts(option):
            if part.get("part") == "serve":
                # A pair's serving part is estimated with the spec's inference view; the CLI estimates the
                # spec's own task, so this part is checked through the Python API below.
                _check_serving_part(spec, part)
                continue
            assert main(_estimate_args(spec, part)) == 0
            est = json.loads(capsys.readouterr().out)
            assert _numbers(est) == _numbers(part["performance"]), part["offer_id"]
            assert est["operating_point"] is None or \
                est["operating_point"]["requests_per_s"] == part["performance"]["operating_point"]["requests_per_s"]
            checked += 1
    assert checked == sum(1 for o in plan["options"] for p in _parts(o) if p.get("part") != "serve")


def _check_serving_part(spec: Path, part: dict) -> None:
    from infrafit.catalog import load_catalog
    from infrafit.perf import Config, OperatingPoint, estimate
    from infrafit.search.option import host_spec
    from infrafit.workload.spec import load_spec

    cat = load_catalog()
    view = load_spec(spec).model_copy(update={"task": "inference"})
    perf, lay = part["performance"], part["performance"]["parallelism"]
    cfg = Config(part["accelerator"], part["count"], part["precision"],
                 None if part["stack"] == "default" else part["stack"], lay["tp"], lay["pp"], lay["dp"], lay["ep"])
    point = OperatingPoint(concurrency=perf["operating_point"].get("concurrency"),
                           batch=perf["operating_point"].get("batch"))
    row = cat.offers[cat.offers["id"] == part["offer_id"]].iloc[0].to_dict()
    host = host_spec(cat, {**row, "instances_per_replica": part["server"]["instances_per_replica"]})
    assert _numbers(estimate(view, cfg, cat, point=point, host=host).to_json()) == _numbers(perf)


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_the_ranked_figure_is_the_shown_figure(capsys, spec):
    plan = _plan(capsys, spec, "cost")
    for option in plan["options"]:
        if "parts" in option:
            continue
        perf, metric = option["performance"], option["front_point"]["metric_value"]
        shown = perf["time_to_train_s"]
        if shown is None:
            lat = perf["latency"]
            shown = (lat["ttft_s"] or lat["e2e_s"])["p99"]
        assert shown == pytest.approx(metric, rel=1e-12), option["offer_id"]
        assert perf["fits"] is True
