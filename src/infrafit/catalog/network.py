"""Measured network round-trip times between cloud regions (``catalog/data/network_rtt.csv``).

Two sources, never mixed in one figure: Azure's backbone P95 matrix (30 days to 2026-07-30, 54
regions, directional: row = source) and IBM Cloud VPC's average latency table (Jul-Aug 2024, 10
regions; RTT vs one-way not stated, magnitudes match RTT). The place issue (users far from a region)
reads it through ``rtt_table``; the rows keep each source's statistic in ``statistic``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from infrafit.catalog.loader import read_table
from infrafit.catalog.schema import Column, Schema, num, provenance, text

NETWORK_RTT = Schema(
    "network_rtt",
    (
        text("network", "whose network measured it", choices=("azure_backbone", "ibm_cloud_vpc")),
        text("from_region", "the provider's region name at the source end"),
        text("from_city", "its city (added by the reference's curator, not part of the source table)",
             required=False),
        text("to_region", "region at the destination end"),
        text("to_city", "its city", required=False),
        num("rtt_s", "round-trip time, seconds (the source gives milliseconds)", minimum=1e-4),
        text("statistic", "P95 (Azure) | average (IBM)", choices=("P95", "average")),
        text("measurement_window", "the days the statistic covers"),
        Column("as_of_date", "date", doc="the last day of the measurement window"),
        text("notes", "direction, caveats", required=False),
        *provenance(),
    ),
    key=("network", "from_region", "to_region"),
    doc="Region-to-region network round-trip times (measured; see the notes per source).",
)
RTT_PATH = Path(__file__).parent / "data" / "network_rtt.csv"


@lru_cache(maxsize=2)
def rtt_table(path: str | None = None) -> pd.DataFrame:
    """The validated round-trip table (cached)."""
    return read_table(Path(path) if path else RTT_PATH, NETWORK_RTT)
