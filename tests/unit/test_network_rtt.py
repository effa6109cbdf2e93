"""The measured region-to-region round-trip table (issue 14 point 1; used by the place issue)."""

from __future__ import annotations

import pytest

from infrafit.catalog.network import rtt_table


def test_the_table_loads_sourced_and_dated_with_one_statistic_per_network():
    table = rtt_table()
    assert len(table) == 2952
    assert table["source"].str.len().gt(10).all() and table["retrieved_on"].notna().all()
    assert set(table.groupby("network")["statistic"].unique().map(tuple)) == {("P95",), ("average",)}
    assert table["rtt_s"].between(1e-3, 0.5).all()  # 5 ms to 349 ms in the sources


@pytest.mark.parametrize(("src", "dst", "low_s", "high_s"), [
    ("East US", "West Europe", 0.06, 0.11),  # a transatlantic backbone path, P95
    ("Japan East", "Southeast Asia", 0.05, 0.10),  # Tokyo to Singapore
])
def test_known_paths_have_physical_round_trips(src, dst, low_s, high_s):
    table = rtt_table()
    row = table[(table["network"] == "azure_backbone") & (table["from_region"] == src) & (table["to_region"] == dst)]
    assert len(row) == 1
    assert low_s <= float(row["rtt_s"].iloc[0]) <= high_s
