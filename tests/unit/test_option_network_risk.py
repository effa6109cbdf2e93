"""A replica over several instances whose host states no network carries a risk saying how its
traffic was modelled; a host with a stated network (AWS p6's EFA) does not."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from infrafit.cli import app

ROOT = Path(__file__).resolve().parents[2]


def _options(spec: str) -> list[dict]:
    result = CliRunner().invoke(app, ["plan", str(ROOT / "examples" / spec), "--json", "--all", "--top", "40"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["options"]


def test_unstated_networks_between_instances_are_a_risk():
    options = _options("custom-ops-training.yaml") + _options("jax-pretraining.yaml")
    spanning = [o for o in options if o["server"]["instances_per_replica"] > 1]
    unstated = [o for o in spanning if o["server"]["network_bytes_per_s"] is None]
    stated = [o for o in spanning if o["server"]["network_bytes_per_s"] is not None]
    assert unstated and stated  # both kinds are in these plans
    assert all(any(r.startswith("network not stated") for r in o["risks"]) for o in unstated)
    assert not any(r.startswith("network not stated") for o in stated for r in o["risks"])
