"""Host facts a price list leaves out but another source states are in the shipped catalog (issue 14 point 1:
hosts with CPU, RAM, NVMe and network where a source gives them).

``scripts/import_host_specs.py`` holds each fact with its source; these tests re-derive what it fills from the
shipped ``hosts.csv`` and fail if a row loses a fact, a note still claims it is not stated, or the two
Qubrid AI servers it adds go missing."""

from __future__ import annotations

import pytest

from infrafit.catalog import DATA_DIR, load_catalog


def test_every_sourced_host_fact_is_in_the_shipped_catalog(load_script):
    script = load_script("import_host_specs")
    hosts = load_catalog().hosts.set_index("id")
    for host_id, (facts, _, source) in script.FACTS.items():
        for field, value in facts.items():
            assert hosts.at[host_id, field] == pytest.approx(value), (host_id, field)
        assert source in hosts.at[host_id, "source"], host_id
    assert script.filled_rows(DATA_DIR / "hosts.csv") == []  # nothing left to fill: the import is idempotent


def test_a_filled_row_says_what_it_states_and_what_it_does_not():
    hosts = load_catalog().hosts.set_index("id")
    qubrid = hosts.loc["qubrid_ai_8x_h200_141gb_sxm_bare_metal"]
    assert qubrid["nvme_bytes"] == pytest.approx(8 * 3.8e12) and qubrid["nvme_drive_count"] == 8
    assert qubrid["nvme_read_bytes_per_s"] == pytest.approx(8 * 3.0e9)  # the catalog's drives x 3.0e9 B/s rule
    assert qubrid["ram_bytes"] == pytest.approx(32 * 64 * 2**30)  # 32 DIMMs of 64 GiB
    assert "stated: RAM, NVMe; not stated: vCPUs, network" in qubrid["notes"]
    assert "NVMe and network not stated" not in hosts.at["hetzner_gex63", "notes"]
    hyperstack = hosts.loc["hyperstack_8x_b200"]
    assert (hyperstack["vcpu_count"], hyperstack["ram_bytes"]) == (8 * 31, pytest.approx(8 * 256e9))


def test_qubrid_rents_eight_gpu_h100_and_a100_servers_by_the_year():
    offers = load_catalog().offers
    qubrid = offers[offers["provider"] == "Qubrid AI"].set_index("accelerator_id")
    h100 = qubrid.loc["nvidia_h100_sxm"]
    assert h100["usd_per_month"] == pytest.approx(133414.80 / 12) and h100["contract_months"] == 12
    assert qubrid.loc["nvidia_a100_80gb_sxm", "usd_per_month"] == pytest.approx(89500 / 12)
    assert set(qubrid["mode"]) == {"dedicated_monthly"} and set(qubrid["availability"]) == {"unverified"}
