"""Workload spec fields: unit parsing, defaults (and their markers), contradictions, the model."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from infrafit import units
from infrafit.errors import ProblemsError
from infrafit.workload.spec import Workload, load_spec, parse_spec

FIXTURES = Path(__file__).parent.parent / "fixtures" / "specs"

BASE = {
    "name": "t",
    "task": "inference",
    "model": "llama3.1-8b",
    "inference": {"traffic": {"requests_per_s": 5, "input_tokens": 1000, "output_tokens": 200}},
}


def _spec(**changes) -> dict:
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        if value is _DROP:
            node.pop(last, None)
        else:
            node[last] = value
    return data


_DROP = object()


def _parse(data: dict) -> Workload:
    return parse_spec(yaml.safe_dump(data, sort_keys=False), "s.yaml")


def _problems(data: dict) -> list:
    with pytest.raises(ProblemsError) as info:
        _parse(data)
    for p in info.value.problems:
        assert p.file == "s.yaml" and p.fix and str(p).count("To fix:") == 1
    return info.value.problems


def _paths(data: dict) -> set[str]:
    return {p.path for p in _problems(data)}


# --- units at the edges ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "text", "attr", "expected"),
    [
        ("inference__traffic__requests_per_s", "4k", ("inference", "traffic", "requests_per_s"), 4000.0),
        ("inference__slo__ttft_p99_s", "300ms", ("inference", "slo", "ttft_p99_s"), 0.3),
        ("budget__monthly_usd", "$40,000", ("budget", "monthly_usd"), 40000.0),
        ("growth__traffic_per_month", "8%", ("growth", "traffic_per_month"), 0.08),
        ("ops__engineer_usd_per_hour", "$95", ("ops", "engineer_usd_per_hour"), 95.0),
    ],
)
def test_human_units_become_si(field, text, attr, expected):
    w = _parse(_spec(**{field: text}))
    value = w
    for a in attr:
        value = getattr(value, a)
    assert value == pytest.approx(expected)


def test_training_units():
    data = _spec(task="training", inference=_DROP, training={
        "tokens": "1.2e12", "deadline_days": "2w", "checkpoint_every_minutes": "2h",
        "dataset": {"size_bytes": "1.5TiB"}})
    tr = _parse(data).training
    assert tr.tokens == 1.2e12
    assert tr.deadline_days == pytest.approx(14)
    assert tr.deadline_s == pytest.approx(14 * units.SECONDS_PER_DAY)
    assert tr.checkpoint_every_minutes == pytest.approx(120)
    assert tr.dataset.size_bytes == 1.5 * units.TiB


def test_token_number_and_mean_p99():
    w = _parse(_spec(inference__traffic__input_tokens={"mean": "1.5k", "p99": 6000}))
    assert (w.inference.traffic.input_tokens.mean, w.inference.traffic.input_tokens.p99) == (1500, 6000)
    out = w.inference.traffic.output_tokens
    assert out.mean == out.p99 == 200  # a bare number: fixed length


# --- defaults and the explain markers ---------------------------------------------------------------
def test_defaults_are_marked_in_explain():
    w = _parse(_spec())
    tree = w.explain()
    assert tree["framework"] == {"value": "pytorch", "default": True}
    assert tree["model"] == {"value": "llama3.1-8b", "default": False}
    assert tree["inference"]["traffic"]["requests_per_s"] == {"value": 5.0, "default": False}
    # a derived default is marked too
    assert tree["inference"]["traffic"]["peak_requests_per_s"]["default"] is True
    assert tree["usage"]["active_hours_per_month"] == {"value": pytest.approx(units.HOURS_PER_MONTH),
                                                       "default": True}
    assert tree["training"] == {"value": None, "default": True}


def test_peak_default_follows_daily_profile():
    flat = _parse(_spec()).inference.traffic
    assert flat.peak_requests_per_s == pytest.approx(5.0)
    diurnal = _parse(_spec(inference__traffic__daily_profile="diurnal")).inference.traffic
    assert diurnal.peak_requests_per_s > 5.0
    assert sum(diurnal.daily_factors()) == pytest.approx(24.0)
    assert diurnal.peak_requests_per_s == pytest.approx(5.0 * max(diurnal.daily_factors()))


def test_usage_defaults_by_task():
    batch = _parse(_spec(model="bert-large", inference={
        "mode": "batch", "traffic": {"items": {"per_day": "1M", "window_hours": 6}, "input_tokens": 128}}))
    assert batch.usage.pattern == "periodic"
    assert batch.usage.active_hours_per_month == pytest.approx(6 * 365 / 12)
    train = _parse(_spec(task="training", inference=_DROP, training={"tokens": 1e9}))
    assert (train.usage.pattern, train.usage.runs_per_year) == ("occasional", 1.0)


def test_lora_rank_defaults_when_method_is_lora():
    w = _parse(_spec(task="fine-tuning", inference=_DROP, training={"tokens": 1e8, "method": "lora"}))
    assert w.training.lora_rank == 16
    assert w.explain()["training"]["lora_rank"]["default"] is True


def test_name_defaults_to_file_stem(tmp_path):
    path = tmp_path / "my spec.yaml"
    data = _spec(name=_DROP)
    path.write_text(yaml.safe_dump(data))
    w = load_spec(path)
    assert w.name == "my-spec"
    assert w.explain()["name"]["default"] is True


def test_custom_ops_false_means_none_and_true_is_refused():
    assert _parse(_spec(custom_ops=False)).custom_ops == ()
    assert _parse(_spec(custom_ops=["flash-attn"])).custom_ops == ("flash-attn",)
    assert _paths(_spec(custom_ops=True)) == {"custom_ops"}


def test_precision_auto_and_lists():
    assert _parse(_spec()).allowed_precisions == ("fp32", "bf16", "fp16", "fp8", "fp4", "int8", "int4")
    assert _parse(_spec(precision="FP8")).precision == ("fp8",)
    problems = _problems(_spec(precision=["bf61"]))
    assert "did you mean 'bf16'" in problems[0].what


def test_resolved_is_json_ready():
    import json

    data = _parse(_spec(placement={"regions": ["Hong-Kong", "tokyo"], "countries": ["jp", "UK"]})).resolved()
    assert json.loads(json.dumps(data)) == data
    assert data["placement"]["regions"] == ["hong-kong", "tokyo"]
    assert data["placement"]["countries"] == ["JP", "GB"]


# --- contradictions -------------------------------------------------------------------------------
CONTRADICTIONS = [
    ({"inference__traffic__peak_requests_per_s": 2}, "inference.traffic.peak_requests_per_s"),
    ({"inference__traffic__input_tokens": {"mean": 1000, "p99": 10}}, "inference.traffic.input_tokens.p99"),
    ({"deadline_days": 3}, "deadline_days"),
    ({"training": {"tokens": 1e9}}, "training"),
    ({"usage": {"pattern": "business-hours", "active_hours_per_month": 800}}, "usage.active_hours_per_month"),
    ({"usage": {"pattern": "business-hours", "active_hours_per_month": 600}}, "usage.active_hours_per_month"),
    ({"budget": {"monthly_usd": 1000, "total_usd": 500}, "horizon_months": 3}, "budget.total_usd"),
    ({"budget": {"horizon_months": 3}}, "budget.horizon_months"),
    ({"inference": _DROP}, "inference"),
    ({"inference__traffic__requests_per_s": _DROP}, "inference.traffic.requests_per_s"),
    ({"usage": {"pattern": "periodic"}}, "usage"),
    ({"model": "lama3.1-8b"}, "model"),
    ({"framework": "xgboost"}, "framework"),
    ({"inference__slo__latency_p99_s": 0.1}, "inference.slo.latency_p99_s"),
    ({"inference__traffic__input_tokens": 200000}, "inference.traffic.input_tokens"),
    ({"inference__traffic__output_tokens": _DROP}, "inference.traffic.output_tokens"),
    ({"placement": {"training_regions": ["tokyo"]}}, "placement.training_regions"),
]


@pytest.mark.parametrize(("changes", "path"), CONTRADICTIONS)
def test_contradictions_are_rejected_at_their_field(changes, path):
    assert path in _paths(_spec(**changes))


def test_training_contradictions():
    base = {"task": "fine-tuning", "inference": _DROP}
    assert "training.lora_rank" in _paths(_spec(**base, training={"tokens": 1e8, "lora_rank": 8}))
    assert "training.method" in _paths(_spec(**{**base, "task": "training"}, training={"tokens": 1, "method": "lora"}))
    assert "training.epochs" in _paths(_spec(**base, training={"epochs": 3}))
    assert "training" in _paths(_spec(**base, training={"tokens": 1e9, "samples": 10}))
    assert "training" in _paths(_spec(**base))
    # an inference block on a training task needs hybrid deployment
    both = _spec(**{**base, "inference": BASE["inference"]}, training={"tokens": 1e8})
    assert "inference" in _paths(both)
    both["deployment"] = {"allowed": ["cloud", "hybrid"]}
    assert _parse(both).inference is not None


def test_training_seq_len_beyond_context():
    data = _spec(task="training", inference=_DROP, model="llama2-7b", training={"tokens": 1e9, "seq_len": 8192})
    assert "training.seq_len" in _paths(data)


def test_unknown_keys_get_suggestions():
    problems = _problems(_spec(inference={"mode": "realtime", "trafic": {"requests_per_s": 1}}))
    unknown = next(p for p in problems if p.path == "inference.trafic")
    assert "did you mean 'traffic'" in unknown.what


def test_all_problems_listed_at_once_with_lines():
    with pytest.raises(ProblemsError) as info:
        load_spec(FIXTURES / "many-problems.yaml")
    by_path = {p.path: p for p in info.value.problems}
    assert {"modle", "framework", "deadline_days", "inference.mode", "inference.traffic.peak_requests_per_s",
            "inference.slo.ttft_p99_s", "training", "budget.horizon_months"} <= set(by_path)
    assert by_path["framework"].line == 4
    assert by_path["inference.slo.ttft_p99_s"].line == 11
    assert "did you mean 'pytorch'" in by_path["framework"].what


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"inference__traffic__requests_per_s": 1e300}, "inference.traffic.requests_per_s"),
        ({"inference__traffic__requests_per_s": "1e999"}, "inference.traffic.requests_per_s"),
        ({"inference__traffic__requests_per_s": True}, "inference.traffic.requests_per_s"),
        ({"inference__traffic__requests_per_s": -3}, "inference.traffic.requests_per_s"),
        ({"horizon_months": 2.5}, "horizon_months"),
        ({"horizon_months": 10**9}, "horizon_months"),
        ({"training": {"tokens": "lots"}, "task": "training", "inference": _DROP}, "training.tokens"),
        ({"inference__traffic__daily_profile": [1, 2, 3]}, "inference.traffic.daily_profile"),
        ({"placement": {"countries": ["XX"]}}, "placement.countries[0]"),
        ({"name": "bad/name"}, "name"),
    ],
)
def test_bad_values_are_problems_not_crashes(changes, path):
    assert path in _paths(_spec(**changes))


# --- the model ------------------------------------------------------------------------------------
def test_model_from_config_path_relative_to_spec():
    w = load_spec(FIXTURES / "config-model.yaml")
    arch = w.model_arch()
    assert arch.kind == "decoder" and arch.num_layers == 28  # Qwen2.5-7B
    assert Path(w.model.config).is_absolute()


def test_model_inline_architecture():
    w = load_spec(FIXTURES / "inline-model.yaml")
    arch = w.model_arch()
    assert arch.hidden_size == 2048 and arch.num_layers == 16
    assert 1e9 < arch.params_total() < 2e9


def test_missing_config_file_is_a_problem(tmp_path):
    data = _spec(model={"config": "nope/config.json"})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ProblemsError) as info:
        load_spec(path)
    assert info.value.problems[0].path == "model.config"


def test_model_needs_exactly_one_form():
    assert "model" in _paths(_spec(model={"config": "a.json", "preset": "llama3.1-8b"}))
