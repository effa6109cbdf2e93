"""The hardware, host and price catalog: versioned CSV data, validated at load, with a user overlay.

``load_catalog(overlay_dir=None, base_dir=None) -> Catalog`` (cached). ``overlay_dir=None`` reads
``INFRAFIT_CATALOG`` (the CLI's ``--catalog-dir`` sets it). ``base_dir`` replaces the built-in data
folder (tests use ``tests/fixtures/catalog``). See docs/catalog.md.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from infrafit.catalog.loader import merge_overlay, read_table
from infrafit.catalog.model import Accelerator, Catalog, build_aliases, normalize_name
from infrafit.catalog.tables import TABLES
from infrafit.errors import CatalogError, suggest
from infrafit.settings import ACTIVE_OVERLAY, overlay_dir

__all__ = [
    "Accelerator", "Catalog", "CatalogError", "DATA_DIR", "clear_cache", "load_catalog", "normalize_name",
    "read_table", "overlay_dir", "ACTIVE_OVERLAY",
]

DATA_DIR = Path(__file__).parent / "data"
ENV_VAR = "INFRAFIT_CATALOG"
#: Files in an overlay folder that other packages own and read themselves (never an error here).
FOREIGN_PREFIXES = ("perf_profiles",)
COST_PREFIX = "cost_"


def _overlay_in_force(explicit: str | Path | None) -> str | None:
    return overlay_dir(explicit)


def load_catalog(overlay_dir: str | Path | None = None, base_dir: str | Path | None = None) -> Catalog:
    """The whole catalog, validated; overlay rows added or replacing built-in rows by id (cached)."""
    overlay_dir = _overlay_in_force(overlay_dir)
    base = str(Path(base_dir).resolve()) if base_dir is not None else str(DATA_DIR)
    overlay = str(Path(overlay_dir).resolve()) if overlay_dir else None
    return _load(base, overlay, _signature(base) + (_signature(overlay) if overlay else ()))


def _signature(folder: str) -> tuple[tuple[str, int, int], ...]:
    """(name, mtime, size) of each CSV: an edited file invalidates the cache."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return ()
    return tuple((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in entries if e.name.endswith(".csv"))


def clear_cache() -> None:
    """Forget cached catalogs (after editing a data file in the same process)."""
    _load.cache_clear()


@lru_cache(maxsize=16)
def _load(base: str, overlay: str | None, signature: tuple = ()) -> Catalog:  # noqa: ARG001 - cache key
    overlay_files = _overlay_files(overlay) if overlay else {}
    tables, builtin = {}, {}
    for name, schema in TABLES.items():
        frame = read_table(Path(base) / f"{name}.csv", schema)
        builtin[name] = frame
        if name in overlay_files:
            user = read_table(overlay_files[name], schema, partial=True, user=True)
            frame = merge_overlay(frame, user, schema.key)
        tables[name] = frame
    _check_references(tables)
    if overlay_files:
        from infrafit.catalog.overlay_checks import check_overlay

        check_overlay(builtin, tables)
    accelerators = {
        row["id"]: Accelerator.from_row(row) for row in tables["accelerators"].to_dict(orient="records")
    }
    return Catalog(
        accelerators=accelerators,
        tables=tables,
        aliases=build_aliases(accelerators, tables["aliases"]),
        cost_factors={n[len(COST_PREFIX):]: f for n, f in tables.items() if n.startswith(COST_PREFIX)},
        overlay_dir=overlay,
    )


def _overlay_files(folder: str) -> dict[str, Path]:
    path = Path(folder)
    if not path.is_dir():
        raise CatalogError(f"catalog overlay folder {folder} does not exist",
                           fix="point --catalog-dir / INFRAFIT_CATALOG at a folder of catalog CSVs")
    out: dict[str, Path] = {}
    for file in sorted(path.glob("*.csv")):
        name = file.stem
        if name.startswith(FOREIGN_PREFIXES) or (name not in TABLES and (DATA_DIR / file.name).exists()):
            continue  # a data file another package owns and overlays itself
        if name not in TABLES:
            raise CatalogError(
                f"{file}: no catalog table is called {name!r}",
                fix=f"name overlay files after a built-in table ({', '.join(TABLES)}){suggest(name, TABLES)}",
            )
        out[name] = file
    return out


def _check_references(tables: dict) -> None:
    """Every column that names another table's id must name an existing one."""
    for name, schema in TABLES.items():
        frame = tables[name]
        for column, target in schema.references.items():
            ids = set(tables[target]["id"])
            for value, file, line in zip(frame[column], frame["origin_file"], frame["origin_line"], strict=True):
                if value and value not in ids:
                    raise CatalogError(
                        f"{column} {value!r} is not an id in {target}.csv",
                        fix=f"use an existing {target} id{suggest(str(value), ids)} or add that row",
                        where=f"{file}:{line}",
                    )
