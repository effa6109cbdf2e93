"""Read load-test results of the serving tools into one shape (``infrafit bench import``).

Formats (their field names from the tools' own code):

- ``vllm-bench``: ``vllm bench serve --save-result`` (vllm/benchmarks/serve.py): a JSON object with
  ``completed``, ``duration``, ``request_throughput``, ``output_throughput``, ``total_input_tokens``,
  ``total_output_tokens``, ``max_concurrency``, ``request_rate`` and per metric ``mean_/median_/p99_``
  ``ttft_ms``, ``tpot_ms``, ``itl_ms``, ``e2el_ms`` (other percentiles as ``p90_ttft_ms`` ...).
- ``guidellm``: ``guidellm benchmark --output-path report.json``: ``benchmarks[]``, each with
  ``config.strategy`` (``type_``, ``rate``), ``duration`` and ``metrics.<name>.successful`` distributions
  (``mean``, ``median``, ``percentiles.p50``/``p90``/``p99``) for ``time_to_first_token_ms``,
  ``time_per_output_token_ms``, ``request_latency`` (s), ``requests_per_second``,
  ``output_tokens_per_second``, ``request_concurrency``, ``prompt_token_count``, ``output_token_count``.
  One result per benchmark (a guidellm sweep holds several).
- ``aiperf``: ``aiperf profile`` / genai-perf JSON export: metrics keyed by name, each ``{unit, avg,
  p50, p90, p99, ...}``: ``time_to_first_token``, ``inter_token_latency``, ``request_latency``,
  ``request_throughput``, ``output_token_throughput``, ``output_sequence_length``,
  ``input_sequence_length`` (under ``records`` in aiperf, at the top level in genai-perf).

Everything is converted to SI here (seconds, per second); a field a file lacks is None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from infrafit.errors import InputError
from infrafit.units import MS

FORMATS = ("vllm-bench", "guidellm", "aiperf")
PERCENTILES = ("mean", "p50", "p90", "p99")


@dataclass(frozen=True)
class ServingResult:
    """One measured operating point of a serving endpoint."""

    tool: str
    ttft_s: dict[str, float | None] = field(default_factory=dict)
    tpot_s: dict[str, float | None] = field(default_factory=dict)
    e2e_s: dict[str, float | None] = field(default_factory=dict)
    requests_per_s: float | None = None
    output_tokens_per_s: float | None = None
    concurrency: float | None = None
    target_rate_per_s: float | None = None
    input_tokens_mean: float | None = None
    output_tokens_mean: float | None = None
    completed: int | None = None
    label: str = ""
    model: str = ""  # the model the endpoint served, as the tool names it ("" when the file does not say)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _num(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out and abs(out) != float("inf") else None


def _scaled(value: Any, factor: float) -> float | None:
    v = _num(value)
    return None if v is None else v * factor


def detect(data: Any) -> str:
    """The format of parsed JSON ``data``, or an InputError saying what was expected."""
    if isinstance(data, dict):
        if isinstance(data.get("benchmarks"), list):
            return "guidellm"
        if "mean_ttft_ms" in data or "ttfts" in data or "request_throughput" in data and "duration" in data:
            return "vllm-bench"
        if "time_to_first_token" in data or isinstance(data.get("records"), dict | list):
            return "aiperf"
    raise InputError("the file is not a vllm bench, guidellm or aiperf result",
                     fix="pass the JSON the tool saved (vllm bench serve --save-result, guidellm --output-path "
                         "*.json, aiperf's profile_export_aiperf.json), or name it with --format")


def vllm_bench(data: dict) -> list[ServingResult]:
    def metric(name: str) -> dict[str, float | None]:
        return {"mean": _scaled(data.get(f"mean_{name}_ms"), MS), "p50": _scaled(data.get(f"median_{name}_ms"), MS),
                "p90": _scaled(data.get(f"p90_{name}_ms"), MS), "p99": _scaled(data.get(f"p99_{name}_ms"), MS)}

    done = _num(data.get("completed"))
    rate = data.get("request_rate")

    def per_request(key: str) -> float | None:
        total = _num(data.get(key))
        return total / done if done and total is not None else None

    return [ServingResult(
        "vllm-bench", metric("ttft"), metric("tpot"), metric("e2el"), _num(data.get("request_throughput")),
        _num(data.get("output_throughput")), _num(data.get("max_concurrency")),
        None if rate in (None, "inf", float("inf")) else _num(rate),
        per_request("total_input_tokens"), per_request("total_output_tokens"),
        int(done) if done is not None else None, str(data.get("model_id") or ""), str(data.get("model_id") or ""))]


def _dist(metrics: dict, name: str, factor: float = 1.0) -> dict[str, float | None]:
    d = ((metrics.get(name) or {}).get("successful") or {})
    pct = d.get("percentiles") or {}
    return {"mean": _scaled(d.get("mean"), factor), "p50": _scaled(pct.get("p50", d.get("median")), factor),
            "p90": _scaled(pct.get("p90"), factor), "p99": _scaled(pct.get("p99"), factor)}


def guidellm(data: dict) -> list[ServingResult]:
    out = []
    for i, b in enumerate(data["benchmarks"]):
        m = b.get("metrics") or {}
        strategy = ((b.get("config") or b.get("args") or {}).get("strategy") or {})
        out.append(ServingResult(
            "guidellm", _dist(m, "time_to_first_token_ms", MS), _dist(m, "time_per_output_token_ms", MS),
            _dist(m, "request_latency"), _dist(m, "requests_per_second")["mean"],
            _dist(m, "output_tokens_per_second")["mean"], _dist(m, "request_concurrency")["mean"],
            _num(strategy.get("rate")), _dist(m, "prompt_token_count")["mean"],
            _dist(m, "output_token_count")["mean"], None, f"benchmark {i} ({strategy.get('type_', '?')})"))
    return out


def aiperf(data: dict) -> list[ServingResult]:
    records = data.get("records", data)
    if isinstance(records, list):  # a list of {tag, ...} records
        records = {str(r.get("tag") or r.get("name")): r for r in records if isinstance(r, dict)}

    def metric(name: str) -> dict[str, float | None]:
        r = records.get(name) or {}
        factor = MS if str(r.get("unit", "ms")).lower() in ("ms", "milliseconds") else 1.0
        return {"mean": _scaled(r.get("avg"), factor), "p50": _scaled(r.get("p50"), factor),
                "p90": _scaled(r.get("p90"), factor), "p99": _scaled(r.get("p99"), factor)}

    def avg(name: str) -> float | None:
        return _num((records.get(name) or {}).get("avg"))

    names = ((data.get("input_config") or {}).get("endpoint") or {}).get("model_names") or [""]
    return [ServingResult("aiperf", metric("time_to_first_token"), metric("inter_token_latency"),
                          metric("request_latency"), avg("request_throughput"), avg("output_token_throughput"),
                          avg("concurrency"), None, avg("input_sequence_length"), avg("output_sequence_length"),
                          None, "aiperf", str(names[0] or ""))]


READERS = {"vllm-bench": vllm_bench, "guidellm": guidellm, "aiperf": aiperf}


def read_results(data: Any, fmt: str | None = None) -> list[ServingResult]:
    """Every result in a tool's parsed JSON (``fmt`` detected when None)."""
    fmt = fmt or detect(data)
    if fmt not in READERS:
        raise InputError(f"unknown format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}")
    if not isinstance(data, dict):
        raise InputError(f"a {fmt} result is a JSON object", fix="pass the JSON file the tool saved")
    try:
        results = READERS[fmt](data)
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"the file does not read as {fmt}: missing or malformed {exc}",
                         fix="pass the JSON the tool saved, or the right --format") from None
    if not results or all(r.ttft_s.get("p50") is None and r.requests_per_s is None for r in results):
        raise InputError(f"no measurement found in the {fmt} file", fix="pass a finished run's result JSON")
    return results
