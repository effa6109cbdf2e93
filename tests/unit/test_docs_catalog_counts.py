"""docs/catalog.md's table of data files states how many rows each has; the shipped files must agree, so the
table cannot go stale when a file grows (it said 578 offers while 836 shipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from infrafit.catalog import DATA_DIR

DOC = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"


def test_every_row_count_in_the_data_file_table_matches_its_file():
    rows = re.findall(r"^\| `([a-z_]+\.csv)` \| ([\d,]+) \|", DOC.read_text(), flags=re.M)
    assert len(rows) >= 10, "the table of data files was not found in docs/catalog.md"
    for name, count in rows:
        assert len(pd.read_csv(DATA_DIR / name)) == int(count.replace(",", "")), name
