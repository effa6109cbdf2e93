"""``infrafit bench import``: store measured serving results beside the plan option they test.

Each result becomes measurements in the results store (``bench.results``): ``serving_ttft_s`` and
``serving_tpot_s`` at p50/p90/p99, ``serving_e2e_s`` at p99, ``serving_requests_per_s`` and
``serving_output_tokens_per_s``. With ``--option-from PLAN.json --rank N`` the option is re-estimated at
the load each result measured (its achieved requests/s; the plan's own workload, or ``--spec``) and the p99
TTFT and TPOT carry that prediction and the error (predicted - measured) / measured, so ``bench history``
shows them side by side. Latency depends on load: the plan's figures at its own operating point are kept
in ``prediction`` for reference, never compared with a test at another load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infrafit import safe_io
from infrafit.bench.importers import ServingResult, read_results
from infrafit.bench.results import Measurement, record, start_run
from infrafit.errors import InputError


def read_json(path: Path, what: str) -> Any:
    text = safe_io.read_text_capped(path, safe_io.IMPORT_MAX_BYTES, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})", fix=f"pass the {what} as saved") from None


def planned_option(plan: dict, rank: int) -> dict:
    """The option of ``rank`` in a ``plan --json`` output."""
    options = plan.get("options") if isinstance(plan, dict) else None
    if not options:
        raise InputError("the plan JSON has no options", fix="pass the output of `infrafit plan SPEC --json`")
    found = next((o for o in options if o.get("rank") == rank), None)
    if found is None:
        raise InputError(f"the plan has no option of rank {rank}",
                         fix=f"use --rank between 1 and {len(options)}")
    return found


def option_prediction(found: dict) -> dict[str, Any]:
    """The option's planned figures (at its own operating point)."""
    perf = found.get("performance") or {}
    lat = perf.get("latency") or {}
    point = perf.get("operating_point") or {}
    return {"rank": found.get("rank"), "accelerator": found.get("accelerator"), "count": found.get("count"),
            "precision": found.get("precision"), "stack": found.get("stack"), "offer_id": found.get("offer_id"),
            "ttft_p99_s": (lat.get("ttft_s") or {}).get("p99"), "tpot_p99_s": (lat.get("tpot_s") or {}).get("p99"),
            "requests_per_s": point.get("requests_per_s"), "concurrency": point.get("concurrency"),
            "at": "the plan's operating point"}


def at_test_lengths(workload, result: ServingResult):
    """``workload`` with the prompt and output lengths the test sent (its per-request means, as fixed lengths),
    where the file states them: a test of 800-token prompts is compared with the option serving 800-token prompts,
    not the spec's traffic (a chat spec's 6,000-token p99 prompt made the predicted TTFT p99 2.8x a measured
    one that never sent such a prompt)."""
    traffic = workload.inference.traffic if workload.inference is not None else None
    if traffic is None:
        return workload
    update = {name: {"mean": float(v), "p99": float(v)} for name, v in
              (("input_tokens", result.input_tokens_mean), ("output_tokens", result.output_tokens_mean)) if v}
    if not update:
        return workload
    from infrafit.workload.spec import workload_from_data

    data = workload.resolved()
    data["inference"]["traffic"] = {**data["inference"]["traffic"], **update}
    return workload_from_data(data)


def predict_at(option: dict, workload, catalog, result: ServingResult) -> dict[str, Any]:
    """The option re-estimated at the load the test measured (its achieved requests/s) and with the lengths it
    sent (``at_test_lengths``): the figures to compare, since latency depends on both
    (``commands.estimate.estimate_workload``)."""
    from infrafit.commands.estimate import estimate_workload

    lay = (option.get("performance") or {}).get("parallelism") or {}
    args: dict[str, Any] = {
        "offer": option.get("offer_id"), "count": option.get("count"), "precision": option.get("precision"),
        "stack": option.get("stack"), "tp": lay.get("tp"), "pp": int(lay.get("pp", 1)),
        "ep": int(lay.get("ep", 1)), "requests_per_s": result.requests_per_s}
    tested = at_test_lengths(workload, result)
    est = estimate_workload(tested, catalog, **args).to_json()
    lat = est.get("latency") or {}
    replay = {"workload": tested.resolved(), "estimate": args,
              "resolved": {k: est.get(k) for k in ("accelerator", "precision", "stack")}}
    figures = {f"{key}_{q}_s": (lat.get(f"{key}_s") or {}).get(q) for key in ("ttft", "tpot", "e2e")
               for q in ("p50", "p99")}
    lengths = "" if tested is workload else (f" and lengths ({result.input_tokens_mean:,.0f} prompt, "
                                              f"{result.output_tokens_mean or 0:,.0f} output tokens a request)")
    return {**option_prediction(option), **figures, "requests_per_s": None,
            "at": f"the measured load, {result.requests_per_s:.4g} requests/s{lengths}", "replay": replay}


def check_model(result: ServingResult, workload, rank: int) -> None:
    """Refuse a load test of another model than the option's: the file names the model it served (vLLM bench's
    ``model_id``, aiperf's endpoint ``model_names``); when that name resolves in the model library to another
    architecture than the plan's, the comparison would measure the wrong model. A name the library does not
    know (a private fine-tune) is not checked."""
    from infrafit.errors import InfrafitError
    from infrafit.workload.models import resolve_model

    if not result.model:
        return
    try:
        tested = resolve_model(result.model).id
    except InfrafitError:
        return
    planned = workload.model_arch().id
    if tested != planned:
        raise InputError(f"the load test served {result.model} ({tested}); option #{rank} of the plan serves "
                         f"{planned}", fix="import it against a plan of the model it tested (--option-from, --rank), "
                                           "or load-test the planned model")


def measurements(result: ServingResult, predicted: dict[str, Any] | None,
                 planned: dict[str, Any] | None = None) -> list[Measurement]:
    """The store rows of one result: ``predicted`` (the option at the measured load) is compared,
    ``planned`` (the option at its own operating point) only recorded."""
    p = predicted or {}
    params = {"tool": result.tool, "label": result.label, "concurrency": result.concurrency,
              "target_rate_per_s": result.target_rate_per_s, "input_tokens_mean": result.input_tokens_mean,
              "output_tokens_mean": result.output_tokens_mean, "completed": result.completed,
              **({"option": planned} if planned else {})}
    rows: list[tuple[str, float | None, str, float | None, str]] = []
    for q in ("p50", "p90", "p99"):
        rows.append(("serving_ttft_s", result.ttft_s.get(q), q, p.get(f"ttft_{q}_s"), "s"))
        rows.append(("serving_tpot_s", result.tpot_s.get(q), q, p.get(f"tpot_{q}_s"), "s"))
    rows.append(("serving_e2e_s", result.e2e_s.get("p99"), "p99", p.get("e2e_p99_s"), "s"))
    rows.append(("serving_requests_per_s", result.requests_per_s, "mean", p.get("requests_per_s"), "requests_per_s"))
    rows.append(("serving_output_tokens_per_s", result.output_tokens_per_s, "mean", None, "tokens_per_s"))
    slim = {k: v for k, v in p.items() if k != "replay"}  # the replay context only where a prediction is compared
    return [Measurement(kind, {**params, "statistic": stat}, float(value), unit, {}, predicted_value,
                        {"at_measured_load": p if predicted_value is not None else slim, "planned": planned}
                        if (p or planned) else {})
            for kind, value, stat, predicted_value, unit in rows if value is not None]


def _workload(plan: dict, spec: Path | None):
    """The workload the plan was made for: ``spec`` when given, else the plan's own resolved workload
    (``plan --json`` carries it whole)."""
    from infrafit.catalog import load_catalog
    from infrafit.workload.spec import load_spec, workload_from_data

    catalog = load_catalog()
    if spec is not None:
        return load_spec(spec, catalog), catalog
    if not isinstance(plan.get("workload"), dict):
        raise InputError("the plan JSON has no workload", fix="pass `infrafit plan SPEC --json` output, or --spec")
    return workload_from_data(plan["workload"], catalog=catalog), catalog


def import_file(conn, path: Path, fmt: str | None, plan_path: Path | None, rank: int,
                spec: Path | None = None) -> dict[str, Any]:
    """Read ``path``, store every result (one run per file), return what was stored. With the plan and its
    spec, each result is compared with the option re-estimated at the load it measured; with the plan
    alone, with the option's planned figures (stated as such: latency at another load is not comparable)."""
    results = read_results(read_json(path, "load-test result"), fmt)
    plan = read_json(plan_path, "plan JSON") if plan_path is not None else None
    option = planned_option(plan, rank) if plan is not None else None
    if spec is not None and option is None:
        raise InputError("--spec predicts an option at the measured load; it needs --option-from",
                         fix="add --option-from PLAN.json (and --rank N)")
    workload = catalog = None
    if option is not None and isinstance(plan, dict):
        workload, catalog = _workload(plan, spec)
    planned = option_prediction(option) if option is not None else None
    for r in results if workload is not None else ():  # before anything is stored
        check_model(r, workload, rank)
    run_id = start_run(conn, {"source": "bench import", "file": str(path), "tool": results[0].tool,
                              **({"option": planned} if planned else {})}, f"bench import {path.name}")
    stored = []
    for r in results:
        predicted = None  # a result without its achieved load cannot be compared with a prediction
        if workload is not None and option is not None and r.requests_per_s:
            predicted = predict_at(option, workload, catalog, r)
        for m in measurements(r, predicted, planned):
            record(conn, run_id, m)
            stored.append(m.to_json())
    return {"run_id": run_id, "tool": results[0].tool, "results": [r.to_json() for r in results],
            "measurements": stored, "option": planned}
