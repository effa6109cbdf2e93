"""Network to the users (issue 13 point 1): measured or estimated round trips from each users_in place,
latency SLOs checked at the users, and the plans that change because of it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app, main
from infrafit.perf import network_fit, round_trip
from infrafit.workload.names import locate
from infrafit.workload.spec import parse_spec

FIBRE_M_PER_S = 2.998e8 / 1.47

SPEC = """\
name: far-users
task: inference
model: llama3.1-8b
precision: [fp8, bf16]
inference:
  mode: realtime
  traffic:
    requests_per_s: 20
    input_tokens: {{mean: 800, p99: 2000}}
    output_tokens: {{mean: 200, p99: 600}}
    {conn}
  slo: {{ttft_p99_s: 0.5, tpot_p99_s: 0.05{at}}}
placement: {{regions: [tokyo], users_in: {users}}}
deployment: {{allowed: [cloud]}}
horizon_months: 12
"""


def _point(name: str) -> tuple[float, float]:
    found = locate(name)
    assert found is not None
    return found[0], found[1]


def _plan(tmp_path, users: str, at: str = "", conn: str = "", top: int = 3) -> dict:
    spec = tmp_path / "far.yaml"
    spec.write_text(SPEC.format(users=users, at=at, conn=conn))
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", str(top)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_measured_path_uses_the_azure_p95():
    rt = round_trip(_point("tokyo"), _point("singapore"))
    assert rt.rtt_s == pytest.approx(0.074) and rt.source.startswith("measured: Azure backbone P95")


def test_an_unmeasured_path_is_estimated_above_the_fibre_floor():
    rt = round_trip(_point("london"), _point("new-york-city"))
    floor = 2 * rt.distance_m / FIBRE_M_PER_S  # a straight fibre, no routers
    assert rt.source.startswith("estimate:") and floor < rt.rtt_s < 2.5 * floor


def test_azure_regions_labelled_by_state_sit_in_that_state_not_in_a_namesake_city():
    """West US 2 is "Washington (Quincy)": Quincy, WA, not Washington DC (which put a Seattle-area region
    beside Ashburn and gave Virginia users a 71 ms "measured" trip to a server 277 km away); East US is
    "Virginia"; a label's town in parentheses is the most specific name."""
    from infrafit.perf.network import great_circle_m, measured_sites

    sites = measured_sites()
    assert great_circle_m(*sites["West US 2"], *_point("quincy")) < 1_000
    assert great_circle_m(*sites["West US 2"], *_point("washington")) > 3_000_000
    assert great_circle_m(*sites["West US"], *_point("san-francisco")) < 1_000
    assert great_circle_m(*sites["East US"], *_point("virginia-beach")) < 1_000  # the state's largest place
    assert great_circle_m(*sites["North Central US"], *_point("chicago")) < 1_000  # "Illinois"
    rt = round_trip(_point("virginia"), _point("ashburn"))
    assert rt.source.startswith("estimate:") and rt.rtt_s < 0.02
    # labelled by a country: at its most populous place (North Europe "Ireland", West Europe "Netherlands")
    assert great_circle_m(*sites["North Europe"], *_point("dublin")) < 1_000
    assert great_circle_m(*sites["West Europe"], *_point("NL")) < 1_000


def test_the_distance_fit_is_physical_and_its_leave_one_out_error_is_reported():
    f = network_fit()
    # 2,070 pairs over 46 placed regions (regions placed by state and country labels; 1,892 before)
    assert f.pairs >= 2000 and 1.2 < f.route_factor < 2.5  # paths are longer than great circles
    assert 0 < f.intercept_s < 0.02 and f.loo_mdape < 0.25  # 13.3 % on the 2026-07-30 matrix


def test_users_far_from_the_only_region_see_the_network_and_it_changes_the_plan(tmp_path):
    near = _plan(tmp_path, "[tokyo]", top=10)
    far = _plan(tmp_path, "[sao-paulo]", top=10)
    net = far["options"][0]["performance"]["network"]["sao-paulo"]
    assert net["rtt_s"] == pytest.approx(0.265) and net["source"].startswith("measured")
    ttft_server = far["options"][0]["performance"]["latency"]["ttft_s"]["p99"]
    assert net["ttft_p99_s_at_user"] == pytest.approx(ttft_server + 0.265)
    assert net["ttft_p99_s_at_user"] <= 0.5  # the SLO holds where the users are
    # less server time: the same configuration (offer, chips, precision, stack) sustains less within the SLO
    # (the 265 ms come off the TTFT budget), and the plan can only get dearer (2026-12-03: 1x B200 carries the
    # 20 req/s either way, at bf16 for Tokyo and fp8 for Sao Paulo; 1x H100 PCIe fp8 21.5 -> 8.2 req/s, so Sao
    # Paulo needs more of them; the ten best of each plan share such configurations)
    def key(o: dict) -> tuple:  # one configuration: the same offer, chips, precision and stack
        return o["offer_id"], o["count"], o["precision"], o["stack"]

    def rate(plan: dict, k: tuple) -> float:
        return next(o["performance"]["throughput"]["requests_per_s"] for o in plan["options"] if key(o) == k)

    shared = {key(o) for o in far["options"]} & {key(o) for o in near["options"]}
    assert shared and all(rate(far, k) < rate(near, k) for k in shared)
    assert far["options"][0]["cost"]["tco_usd"] >= near["options"][0]["cost"]["tco_usd"]
    assert any("network: latency SLOs checked at the users" in w for w in far["options"][0]["why"])
    server = _plan(tmp_path, "[sao-paulo]", at=", measured_at: server")
    assert server["options"][0]["cost"]["tco_usd"] == pytest.approx(near["options"][0]["cost"]["tco_usd"])


def test_a_new_connection_per_request_pays_the_handshakes(tmp_path):
    d = _plan(tmp_path, "[seoul]", conn="new_connection_per_request: true")
    net = d["options"][0]["performance"]["network"]["seoul"]
    assert net["round_trips_per_request"] == 3  # request + TCP + TLS 1.3
    ttft = d["options"][0]["performance"]["latency"]["ttft_s"]["p99"]
    assert net["ttft_p99_s_at_user"] == pytest.approx(ttft + 3 * net["rtt_s"])


def test_when_the_network_alone_breaks_the_slo_the_plan_says_so(tmp_path, capsys):
    spec = tmp_path / "far.yaml"
    spec.write_text(SPEC.format(users="[sao-paulo]", at="", conn="").replace("ttft_p99_s: 0.5", "ttft_p99_s: 0.2"))
    assert main(["plan", str(spec)]) == 3
    assert "the network alone: users in sao-paulo" in capsys.readouterr().err


def test_users_in_takes_shares():
    cat = load_catalog()
    w = parse_spec(SPEC.format(users="[{place: tokyo, share: 0.7}, seoul, taipei]", at="", conn=""), catalog=cat)
    assert w.placement.user_places() == (("tokyo", 0.7), ("seoul", pytest.approx(0.15)),
                                         ("taipei", pytest.approx(0.15)))


@pytest.mark.parametrize(("users", "at", "expect"), [
    ("[{place: tokyo, share: 0.8}, {place: seoul, share: 0.5}]", "", "add up to 1.3"),
    ("[{place: tokyo, weight: 1}]", "", "users_in[0]"),
    ("[]", ", measured_at: client", "measured_at: client needs"),
])
def test_bad_network_fields_are_refused(tmp_path, capsys, users, at, expect):
    spec = tmp_path / "bad.yaml"
    spec.write_text(SPEC.format(users=users, at=at, conn=""))
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert expect in err and "To fix" in err


def test_brazilian_residency_is_served_from_sao_paulo(tmp_path):
    """Data kept in Brazil (LGPD) used to end in exit 3: no GPU was sold in Brazil in the catalog. AWS
    sa-east-1 lists GPU instances, so the plan serves the Sao Paulo users from Sao Paulo, a short round
    trip away (a same-city path: the distance fit's 8 ms intercept, marked as an estimate)."""
    spec = tmp_path / "br.yaml"
    spec.write_text(SPEC.format(users="[sao-paulo]", at="", conn="").replace(
        "regions: [tokyo]", "countries: [BR]"))
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "5"])
    assert result.exit_code == 0, result.output
    options = json.loads(result.stdout)["options"]
    assert options and all(o["region"] == "sa-east-1" for o in options)
    net = options[0]["performance"]["network"]["sao-paulo"]
    assert net["rtt_s"] < 0.02 and net["ttft_p99_s_at_user"] <= 0.5
