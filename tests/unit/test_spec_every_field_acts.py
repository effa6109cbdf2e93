"""Every spec field acts, or is refused (issue 13 point 4).

``EFFECTS`` names, for every leaf field of the workload spec, a base spec and a change to it; the test
plans both and asserts the plan differs (options, their costs, their why lines, or what was excluded),
or, for ``refused`` entries, that ``check`` refuses the change with exit 2 and a "To fix". A field added
to the spec without an entry here fails ``test_every_field_has_an_effect_listed``.
"""

from __future__ import annotations

import copy
import json
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from infrafit.catalog import load_catalog
from infrafit.errors import InfrafitError
from infrafit.search.planner import plan
from infrafit.workload.spec import Workload, parse_spec

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "tests" / "fixtures" / "model_configs" / "meta-llama--Llama-2-7b-hf.json")

CHAT = {"name": "chat", "task": "inference", "model": "llama3.1-8b", "precision": ["fp8", "bf16"],
        "inference": {"mode": "realtime",
                      "traffic": {"requests_per_s": 20, "input_tokens": {"mean": 800, "p99": 2000},
                                  "output_tokens": {"mean": 200, "p99": 600}},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
        "usage": {"pattern": "continuous"}, "placement": {"countries": ["US"]},
        "deployment": {"allowed": ["cloud", "on_prem"]}, "horizon_months": 12}
SHARED = copy.deepcopy(CHAT)
SHARED["inference"]["traffic"]["prefix"] = {"shared_tokens": 600, "hit_rate": 0.9}
SPECULATIVE = copy.deepcopy(CHAT)
SPECULATIVE["inference"]["speculative"] = {"method": "eagle", "tokens": 3, "acceptance_rate": 0.7}
USERS = copy.deepcopy(CHAT) | {"placement": {"countries": ["JP", "KR", "US"], "users_in": ["seoul", "tokyo"]}}
BATCH = {"name": "batch", "task": "inference", "model": "llama3.1-8b",
         "inference": {"mode": "batch", "traffic": {"items": {"per_day": 2_000_000, "window_hours": 6},
                                                    "input_tokens": 500, "output_tokens": 100}},
         "usage": {"pattern": "periodic"}, "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]},
         "horizon_months": 12}
TRAIN = {"name": "tune", "task": "fine-tuning", "model": "llama3.1-8b", "framework": "pytorch",
         "training": {"method": "lora", "tokens": 200_000_000, "seq_len": 4096, "global_batch": 64,
                      "deadline_days": 3, "checkpoint_every_minutes": 30},
         "usage": {"pattern": "periodic", "runs_per_year": 12}, "placement": {"countries": ["US"]},
         "deployment": {"allowed": ["cloud"]}, "horizon_months": 12}
VISION = {"name": "vision", "task": "inference", "model": "resnet50", "framework": "pytorch",
          "inference": {"mode": "realtime", "traffic": {"requests_per_s": 200}, "slo": {"latency_p99_s": 0.05}},
          "usage": {"pattern": "continuous"}, "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]},
          "horizon_months": 12}
INLINE = {"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8192}

TODAY = {"accelerator": "h100", "count": 8, "provider": "AWS", "mode": "cloud_on_demand", "monthly_usd": 60000}
CURRENT = copy.deepcopy(CHAT) | {"current": TODAY}
EVOLVING = copy.deepcopy(CHAT) | {"workflow": {"maturity": "evolving"}, "deployment": {"allowed": ["on_prem"]}}
CURRENT_USERS = copy.deepcopy(USERS) | {"current": TODAY | {"region": "us-east-1"}}
CURRENT_SMALL = copy.deepcopy(CHAT) | {"current": {"accelerator": "l40s", "count": 1, "provider": "AWS",
                                                   "monthly_usd": 1500}}

#: field -> (base, {dotted path: new value}, "plan" | "refused")
EFFECTS: dict[str, tuple[dict, dict, str]] = {
    "name": (CHAT, {"name": "other-name"}, "name"),
    "task": (TRAIN, {"task": "training", "training.method": "full"}, "plan"),
    "model.preset": (CHAT, {"model": "qwen2.5-7b"}, "plan"),
    "model.config": (CHAT, {"model": {"config": CONFIG}}, "plan"),
    "model.architecture": (CHAT, {"model": {"architecture": INLINE}}, "plan"),
    "framework": (TRAIN, {"framework": "jax"}, "plan"),
    "custom_ops": (TRAIN, {"custom_ops": ["my_cuda_ext"]}, "plan"),
    "dynamic_shapes": (VISION, {"dynamic_shapes": True, "framework": "onnx"}, "plan"),
    "precision": (CHAT, {"precision": ["bf16"]}, "plan"),
    "inference.mode": (CHAT, {"inference.mode": "batch"}, "plan"),
    "inference.traffic.requests_per_s": (CHAT, {"inference.traffic.requests_per_s": 80}, "plan"),
    "inference.traffic.peak_requests_per_s": (CHAT, {"inference.traffic.peak_requests_per_s": 90}, "plan"),
    "inference.traffic.daily_profile": (CHAT, {"inference.traffic.daily_profile": "diurnal"}, "plan"),
    "inference.traffic.input_tokens": (CHAT, {"inference.traffic.input_tokens": 4000}, "plan"),
    "inference.traffic.output_tokens": (CHAT, {"inference.traffic.output_tokens": 1000}, "plan"),
    "inference.traffic.items.per_day": (BATCH, {"inference.traffic.items.per_day": 20_000_000}, "plan"),
    "inference.traffic.items.window_hours": (BATCH, {"inference.traffic.items.window_hours": 1}, "plan"),
    "inference.traffic.new_connection_per_request": (USERS, {"inference.traffic.new_connection_per_request": True},
                                                     "plan"),
    "inference.slo.ttft_p99_s": (CHAT, {"inference.slo.ttft_p99_s": 0.3}, "plan"),
    "inference.slo.tpot_p99_s": (CHAT, {"inference.slo.tpot_p99_s": 0.02}, "plan"),
    "inference.slo.e2e_p99_s": (CHAT, {"inference.slo.e2e_p99_s": 12.0}, "plan"),
    "inference.slo.latency_p99_s": (VISION, {"inference.slo.latency_p99_s": 0.005}, "plan"),
    "inference.slo.measured_at": (USERS, {"inference.slo.measured_at": "server"}, "plan"),
    "inference.slo.risk": (CHAT, {"inference.slo.risk": "p50"}, "plan"),  # p90 is the default
    "inference.traffic.prefix.shared_tokens": (CHAT, {"inference.traffic.prefix": {"shared_tokens": 600}}, "plan"),
    "inference.traffic.prefix.hit_rate": (SHARED, {"inference.traffic.prefix.hit_rate": 0.2}, "plan"),
    "inference.speculative.method": (CHAT, {"inference.speculative": {"method": "eagle"}}, "plan"),
    "inference.speculative.tokens": (SPECULATIVE, {"inference.speculative.tokens": 6}, "plan"),
    "inference.speculative.acceptance_rate": (SPECULATIVE, {"inference.speculative.acceptance_rate": 0.4}, "plan"),
    "inference.speculative.draft_model": (SPECULATIVE, {"inference.speculative": {
        "method": "draft_model", "draft_model": "gemma3-1b"}}, "plan"),
    "training.tokens": (TRAIN, {"training.tokens": 2_000_000_000}, "plan"),
    "training.samples": (TRAIN, {"training.tokens": None, "training.samples": 500_000}, "plan"),
    "training.epochs": (TRAIN, {"training.tokens": None, "training.epochs": 3, "training.dataset": {"samples": 50_000}},
                        "plan"),
    "training.seq_len": (TRAIN, {"training.seq_len": 8192}, "plan"),
    "training.global_batch": (TRAIN, {"training.global_batch": 512}, "plan"),
    "training.deadline_days": (TRAIN, {"training.deadline_days": 0.25}, "plan"),
    "training.checkpoint_every_minutes": (TRAIN, {"training.checkpoint_every_minutes": 600,
                                                  "deployment.allowed": ["cloud"]}, "plan_spot"),
    "training.dataset.size_bytes": (TRAIN, {"training.dataset": {"size_bytes": 5e12}}, "plan"),
    "training.dataset.location": (TRAIN, {"training.dataset": {"size_bytes": 5e12, "location": "nvme"}}, "plan_vs",
                                  ),
    "training.dataset.samples": (TRAIN, {"training.tokens": None, "training.epochs": 1,
                                         "training.dataset": {"samples": 500_000}}, "plan"),
    "training.method": (TRAIN, {"training.method": "full"}, "plan"),
    "training.lora_rank": (TRAIN, {"training.lora_rank": 512}, "plan"),
    "training.risk": (TRAIN, {"training.risk": "p50"}, "plan"),  # p90 is the default
    "usage.pattern": (CHAT, {"usage": {"pattern": "business-hours"}}, "plan"),
    "usage.active_hours_per_month": (CHAT, {"usage": {"pattern": "periodic", "active_hours_per_month": 100}}, "plan"),
    "usage.runs_per_year": (TRAIN, {"usage": {"pattern": "periodic", "runs_per_year": 52}}, "plan"),
    "growth.traffic_per_month": (CHAT, {"growth": {"traffic_per_month": 0.2}}, "plan"),
    "growth.data_per_month": (TRAIN, {"growth": {"data_per_month": 0.3}, "training.dataset": {"size_bytes": 5e12}},
                              "plan"),
    "placement.regions": (CHAT, {"placement": {"regions": ["us-west-2"], "countries": ["US"]}}, "plan"),
    "placement.countries": (CHAT, {"placement": {"countries": ["DE"]}}, "plan"),
    "placement.users_in": (CHAT, {"placement": {"countries": ["US"], "users_in": ["sao-paulo"]}}, "plan"),
    "placement.users_share": (USERS, {"placement": {"countries": ["JP", "KR", "US"], "users_in": ["seoul", "tokyo"],
                                                    "users_share": [0.005, 0.995]}}, "plan"),
    "placement.training_regions": (CHAT, {"placement": {"countries": ["US"], "training_regions": ["us-east-1"]}},
                                   "refused"),
    "deployment.allowed": (CHAT, {"deployment.allowed": ["on_prem"]}, "plan"),
    "deployment.exclude_providers": (CHAT, {"deployment.exclude_providers": ["Hyperbolic", "Prime Intellect",
                                                                             "Lambda", "RunPod"]}, "plan"),
    "deployment.billing": (CHAT, {"deployment.billing": "prefer_fixed_monthly"}, "plan"),
    "deployment.portability_required": (CHAT, {"deployment.portability_required": True}, "plan"),
    "deployment.managed_preferred": (CHAT, {"deployment.managed_preferred": True}, "plan"),
    "deployment.require": (CHAT, {"deployment.require": ["hipaa"]}, "plan"),
    "deployment.own_facility_meets": (CHAT, {"deployment.require": ["soc2"], "deployment.allowed": ["on_prem"],
                                             "deployment.own_facility_meets": ["soc2"]}, "plan"),
    "deployment.owned.accelerator": (CHAT, {"deployment.owned": [{"accelerator": "h100", "count": 8}]}, "plan"),
    "deployment.owned.count": (CHAT, {"deployment.owned": [{"accelerator": "l40s", "count": 4}]}, "refused"),
    "deployment.owned.host": (CHAT, {"deployment.owned": [{"accelerator": "h100", "count": 8, "host": "nope"}]},
                              "refused"),
    "deployment.owned.place": (CHAT, {"deployment.owned": [{"accelerator": "h100", "count": 8, "place": "dallas"}],
                                      "placement": {"countries": ["US"], "users_in": ["new-york-city"]}}, "plan"),
    "hardware.vendors": (CHAT, {"hardware": {"vendors": ["AMD"]}}, "plan"),
    "hardware.families": (CHAT, {"hardware": {"families": ["NVIDIA Ada"]}}, "plan"),
    "hardware.accelerators": (CHAT, {"hardware": {"accelerators": ["l4"]}}, "plan"),
    "hardware.exclude": (CHAT, {"hardware": {"exclude": ["NVIDIA Hopper"]}}, "plan"),
    "availability.min_replicas": (CHAT, {"availability": {"min_replicas": 3}}, "plan"),
    "availability.zones": (CHAT, {"availability": {"zones": 2}}, "plan"),
    "budget.monthly_usd": (CHAT, {"budget": {"monthly_usd": 1500}}, "plan"),
    "budget.total_usd": (CHAT, {"budget": {"total_usd": 20000}}, "plan"),
    "budget.include_labour": (CHAT, {"budget": {"monthly_usd": 3000, "include_labour": True}}, "plan_vs_budget"),
    "budget.capital_rate_per_year": (EVOLVING, {"budget.capital_rate_per_year": 0.08}, "plan"),
    "horizon_months": (CHAT, {"horizon_months": 36}, "plan"),
    "ops.engineer_usd_per_hour": (CHAT, {"ops": {"engineer_usd_per_hour": 250}}, "plan"),
    "ops.familiar_stacks": (CHAT, {"ops": {"familiar_stacks": ["tensorrt-llm"]}}, "plan"),
    "workflow.maturity": (CHAT, {"workflow": {"maturity": "exploring"}}, "plan"),
    "workflow.model_changes_per_year": (EVOLVING, {"workflow.model_changes_per_year": 12}, "plan"),
    "workflow.new_hardware_share": (EVOLVING, {"workflow.new_hardware_share": 1.0}, "plan"),
    "current.accelerator": (CURRENT, {"current.accelerator": "a100-80gb"}, "plan"),
    "current.count": (CURRENT, {"current.count": 16}, "plan"),
    "current.monthly_usd": (CURRENT, {"current.monthly_usd": 30000}, "plan"),
    "current.mode": (CURRENT, {"current.mode": "cloud_reserved_1y"}, "plan"),
    "current.provider": (CURRENT, {"current.provider": "Lambda"}, "plan"),
    "current.host": (CURRENT, {"current.host": "gcp_a3_highgpu_8g"}, "plan"),
    "current.region": (CURRENT_USERS, {"current.region": "tokyo"}, "plan"),
    "current.framework": (CURRENT, {"current.framework": "tensorflow"}, "plan"),
    "current.contract_months_left": (CURRENT, {"current.contract_months_left": 6}, "plan"),
    # one L40S: the model sizes it below today's load at the band's p90; the team says it serves it
    "current.meets_slos": (CURRENT_SMALL, {"current.meets_slos": True}, "plan"),
}
#: the base a ``plan_vs*`` entry is compared with, instead of its plain base
VS = {
    "training.dataset.location": {"training.dataset": {"size_bytes": 5e12, "location": "object-storage"}},
    "budget.include_labour": {"budget": {"monthly_usd": 3000}},
}


def _leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, f in model.model_fields.items():
        args = typing.get_args(f.annotation) or (f.annotation,)
        nested = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        out += _leaves(nested[0], f"{prefix}{name}.") if nested else [prefix + name]
    return out


def _apply(base: dict, changes: dict) -> dict:
    data = copy.deepcopy(base)
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return data


def _digest(data: dict, catalog) -> str:
    result = plan(parse_spec(yaml.safe_dump(data, sort_keys=False), catalog=catalog), catalog, top=5)
    d = result.to_dict()
    return json.dumps({"options": [(o["offer_id"], o["count"], o["precision"], o["stack"],
                                    round(o["cost"]["tco_usd"], 2), o["why"], o["risks"],
                                    o["performance"].get("network"), o["server"], o["performance"].get("server"))
                                   for o in d["options"]],
                       "excluded": d["excluded"]}, sort_keys=True, default=str)


def test_every_field_has_an_effect_listed():
    assert sorted(EFFECTS) == sorted(_leaves(Workload))


@pytest.mark.parametrize("field", sorted(EFFECTS))
def test_the_field_changes_the_plan_or_is_refused(field):
    catalog = load_catalog()
    base, changes, kind = EFFECTS[field]
    changed = _apply(base, changes)
    if kind == "refused":
        with pytest.raises(InfrafitError) as info:
            parse_spec(yaml.safe_dump(changed, sort_keys=False), catalog=catalog)
        assert "To fix" in str(info.value)
        return
    if kind == "name":
        assert parse_spec(yaml.safe_dump(changed), catalog=catalog).name == "other-name"
        return
    reference = _apply(base, VS[field]) if field in VS else base
    if kind == "plan_spot":  # the checkpoint interval acts through spot's lost work
        reference = _apply(base, {"deployment.allowed": ["cloud"]})
    try:
        before = _digest(reference, catalog)
    except InfrafitError as exc:  # the reference itself is infeasible: the change must make it plan
        before = f"error: {exc}"
    try:
        after = _digest(changed, catalog)
    except InfrafitError as exc:
        after = f"error: {exc}"
    assert before != after, f"{field}: {changes} changed nothing in the plan"
