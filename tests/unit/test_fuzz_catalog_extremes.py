"""Every numeric column of every built-in table, set to an extreme on many rows, either is refused
with file:line and 'To fix' or plans to finite numbers: never a traceback, never NaN or inf in JSON.

This is the deterministic companion of the hypothesis overlay fuzzer: it found 1e308 GPU counts
(OverflowError), zero bandwidths (ZeroDivisionError) and empty egress tiers (IndexError).
"""

from __future__ import annotations

import copy
import csv
import json
import re
from pathlib import Path

import pytest
import yaml
from test_fuzz_plan_overlay import _numbers  # the numeric paths of a spec (one walker for both fuzzers)

from infrafit.catalog import DATA_DIR, load_catalog
from infrafit.catalog.schema import NUMERIC_KINDS
from infrafit.catalog.tables import TABLES
from infrafit.errors import CatalogError, InfrafitError
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / name for name in ("chatbot-asia.yaml", "lora-finetune-70b.yaml")]
EXTREMES = ("0", "1e-300", "1e29")


def _overlay(folder: Path, table: str, column: str, value: str) -> None:
    with (DATA_DIR / f"{table}.csv").open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    for row in rows[:50]:
        row[column] = value
    with (folder / f"{table}.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_extreme_numbers_are_refused_or_plan_finitely(tmp_path: Path, table: str) -> None:
    columns = [c.name for c in TABLES[table].columns if c.kind in NUMERIC_KINDS]
    planned = refused = 0
    for column in columns:
        for value in EXTREMES:
            folder = tmp_path / f"{column}-{value}"
            folder.mkdir()
            _overlay(folder, table, column, value)
            try:
                catalog = load_catalog(folder)
            except CatalogError as exc:
                assert "To fix" in str(exc) and f"{table}.csv:" in str(exc)
                refused += 1
                continue
            for example in EXAMPLES:
                try:
                    result = plan(parse_spec(example.read_text(), catalog=catalog), catalog, top=3)
                except InfrafitError as exc:
                    assert "To fix" in str(exc)
                    continue
                json.dumps([o.to_dict() for o in result.options], allow_nan=False)
                planned += 1
    assert planned + refused > 0 or not columns


@pytest.mark.parametrize("example", [p for p in sorted((ROOT / "examples").glob("*.yaml"))
                                     if "\nworkloads:" not in p.read_text()], ids=lambda p: p.stem)
def test_extreme_spec_numbers_are_refused_or_plan_finitely(example: Path) -> None:
    """Every number of every example set to 0, -1, 1e-300 or 1e308: refused with 'To fix' or finite JSON."""
    base = yaml.safe_load(example.read_text())
    catalog = load_catalog()
    for path in list(_numbers(base)):
        for value in (0, -1, 1e-300, 1e308):
            spec = copy.deepcopy(base)
            node = spec
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = value
            try:
                result = plan(parse_spec(yaml.safe_dump(spec), catalog=catalog), catalog, top=3)
            except InfrafitError as exc:
                assert "To fix" in str(exc), (path, value, str(exc))
                continue
            json.dumps([o.to_dict() for o in result.options], allow_nan=False)


@pytest.mark.parametrize(("field", "value"), [("checkpoint_every_minutes", "1e-300"),
                                              ("checkpoint_every_minutes", "0.5")])
def test_vanishing_durations_are_refused(field: str, value: str) -> None:
    text = (ROOT / "examples" / "jax-pretraining.yaml").read_text()
    text, n = re.subn(rf"{field}: [^\n]+", f"{field}: {value}", text)
    assert n == 1
    with pytest.raises(InfrafitError) as info:
        parse_spec(text, catalog=load_catalog())
    assert field in str(info.value) and "To fix" in str(info.value)
