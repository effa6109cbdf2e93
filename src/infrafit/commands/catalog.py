"""``infrafit catalog accelerators|offers|hosts|frameworks|stacks|models|show ID``: browse the data.

Tables on a terminal, ``--json`` for scripts (SI units, unit-named keys). Rows from the user's
overlay (``--catalog-dir`` / ``INFRAFIT_CATALOG``) are marked ``*`` in tables and ``user_row`` in JSON.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

catalog_app = typer.Typer(help="Browse the hardware, host and price catalog.", no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON (SI units) instead of a table.")]
FamilyOpt = Annotated[str | None, typer.Option("--family", help="Accelerator family, e.g. Hopper, TPU.")]


def _catalog():  # noqa: ANN202 - Catalog, imported lazily
    from infrafit.catalog import load_catalog

    return load_catalog()


def _fmt(value: Any, scale: float = 1.0, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value / scale:,.{digits}f}"


def _count(value: Any) -> str:
    """A parameter count for people: 70.6B, 25.6M, 1,200 (``-`` when unknown)."""
    from infrafit.units import BILLION, PER_MILLION

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    for scale, suffix in ((BILLION, "B"), (PER_MILLION, "M")):
        if value >= scale:
            return f"{value / scale:,.1f}{suffix}"
    return f"{value:,.0f}"


def _emit(rows: list[dict[str, Any]], as_json: bool, title: str, columns: list[tuple[str, Any]],
          optional: tuple[str, ...] | None = None) -> None:
    """Rows as JSON, or a table that splits no word or number: columns in ``optional`` (default: from the
    right, the first column kept) are dropped in that order until the rest fit the terminal."""
    from infrafit.commands.output import note, print_json, stdout

    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    from infrafit.report.render import fitting_columns

    cells = [{header: ("*" if row.get("user_row") and i == 0 else "") + str(get(row))
              for i, (header, get) in enumerate(columns)} for row in rows]
    # no word or number split: floors at each column's longest token; the rightmost columns go first
    drop = optional if optional is not None else tuple(h for h, _ in columns[:0:-1])
    shown, widths = fitting_columns(cells, int(stdout.width or 0), optional=drop) if cells else (
        [h for h, _ in columns], {})  # no row: the listing's own headers (fitting_columns defaults to a plan's)
    table = Table(title=f"{title} ({len(rows)})")
    for header in shown:
        table.add_column(header, overflow="fold", width=widths.get(header))
    for cell in cells:
        table.add_row(*[cell[h] for h in shown])
    stdout.print(table)
    if any(r.get("user_row") for r in rows):
        note("* row from your catalog overlay")


def _min_memory(text: str | None) -> float | None:
    if text is None:
        return None
    from infrafit.errors import InputError
    from infrafit.units import UnitParseError, parse_bytes

    try:
        value = parse_bytes(text)
    except UnitParseError as err:
        raise InputError(f"--min-memory: {err}", fix="write a size such as 80GB or 141GiB") from None
    if not value >= 0:
        raise InputError(f"--min-memory {text!r}: must be >= 0", fix="write a size such as 80GB or 141GiB")
    return value


def _non_negative(option: str, value: float | None, example: str) -> None:
    """Reject a negative (or NaN) numeric filter: it would silently match everything or nothing."""
    if value is not None and not value >= 0:
        from infrafit.errors import InputError

        raise InputError(f"{option} {value}: must be >= 0", fix=f"use e.g. {option} {example}")


KINDS = ("gpu", "tpu", "asic", "cpu")


def _check_kind(kind: str | None) -> None:
    if kind is not None and kind not in KINDS:
        from infrafit.errors import InputError, suggest

        raise InputError(f"--kind {kind!r} is not an accelerator kind",
                         fix=f"use one of {', '.join(KINDS)}{suggest(kind, KINDS)}")


def _note_if_empty(rows: list[dict[str, Any]], filters: dict[str, tuple[str | None, list[str]]]) -> None:
    """On stderr, say which filter value matches nothing known, with close matches (the result stays empty)."""
    if rows:
        return
    from infrafit.commands.output import note
    from infrafit.errors import suggest

    for option, (value, known) in filters.items():
        if value is not None and not any(value.lower() in k.lower() for k in known):
            note(f"no rows: {option} {value!r} matches nothing in the catalog{suggest(value, sorted(set(known)))}")


@catalog_app.command("accelerators")
def accelerators(
    vendor: Annotated[str | None, typer.Option("--vendor", help="NVIDIA, AMD, Google, Intel, AWS.")] = None,
    family: FamilyOpt = None,
    kind: Annotated[str | None, typer.Option("--kind", help="gpu, tpu, asic or cpu.")] = None,
    min_memory: Annotated[str | None, typer.Option("--min-memory", help="e.g. 80GB.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Accelerators (dense peak FLOP/s per chip, memory, bandwidth, scale-up)."""
    from infrafit.catalog.browse import accelerator_rows
    from infrafit.units import GB, TB, TFLOPS

    _check_kind(kind)
    cat = _catalog()
    rows = accelerator_rows(cat, vendor=vendor, family=family, kind=kind, min_memory_bytes=_min_memory(min_memory))
    accs = list(cat.accelerators.values())
    _note_if_empty(rows, {"--vendor": (vendor, [a.vendor for a in accs]),
                          "--family": (family, [a.family for a in accs])})
    _emit(rows, as_json, "accelerators", [
        ("id", lambda r: r["id"]), ("family", lambda r: r["family"]), ("kind", lambda r: r["kind"]),
        ("bf16 TFLOP/s", lambda r: _fmt(r["peak_flops_per_s"].get("bf16"), TFLOPS)),
        ("fp8 TFLOP/s", lambda r: _fmt(r["peak_flops_per_s"].get("fp8"), TFLOPS)),
        ("memory GB", lambda r: _fmt(r["memory_bytes"], GB)), ("TB/s", lambda r: _fmt(r["memory_bytes_per_s"], TB, 2)),
        ("scale-up", lambda r: r["scaleup_domain_size"]), ("TDP W", lambda r: _fmt(r["tdp_w"])),
    ])


@catalog_app.command("offers")
def offers(
    provider: Annotated[str | None, typer.Option("--provider", help="AWS, GCP, Lambda, dedicated, ...")] = None,
    region: Annotated[str | None, typer.Option(
        "--region", help="Region slug or city (tokyo, us-east-1; a city's other name: bombay).")] = None,
    country: Annotated[str | None, typer.Option("--country", help="ISO 3166 alpha-2 (US, JP, HK).")] = None,
    mode: Annotated[str | None, typer.Option("--mode",
                                             help="cloud_on_demand, cloud_spot, dedicated_monthly, ...")] = None,
    accelerator: Annotated[str | None, typer.Option("--accelerator", help="Id or alias (h100, v5e).")] = None,
    family: FamilyOpt = None,
    max_usd_per_hour: Annotated[float | None, typer.Option("--max-usd-per-hour", help="Per accelerator.")] = None,
    stale_days: Annotated[int | None, typer.Option("--stale-days", help="Only prices older than N days.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Prices: cloud (on-demand, spot, reserved), dedicated monthly, on-prem purchase."""
    from infrafit.catalog.browse import offer_rows
    from infrafit.catalog.tables import MODES
    from infrafit.errors import InputError, suggest

    if mode is not None and mode not in MODES:
        raise InputError(f"--mode {mode!r} is not a deployment mode",
                         fix=f"use one of {', '.join(MODES)}{suggest(mode, MODES)}")
    _non_negative("--max-usd-per-hour", max_usd_per_hour, "4.0")
    _non_negative("--stale-days", stale_days, "180")
    rows = offer_rows(_catalog(), provider=provider, region=region, country=country, mode=mode, accelerator=accelerator,
                      family=family, max_usd_per_hour=max_usd_per_hour, stale_days=stale_days)
    _emit(rows, as_json, "offers" if stale_days is None else f"offers older than {stale_days} days", [
        ("id", lambda r: r["id"]), ("provider", lambda r: r["provider"]),
        ("where", lambda r: f"{r['city'] or r['region']} {r['country']}".strip() or "-"), ("mode", lambda r: r["mode"]),
        ("accelerator", lambda r: f"{r['accelerator_count']}x {r['accelerator_id']}"),
        ("$/accel-h", lambda r: _fmt(r["usd_per_accelerator_hour"], 1, 2)),
        ("price", lambda r: _price(r)), ("retrieved", lambda r: r["retrieved_on"]),
        ("conf", lambda r: r["confidence"] + ("/derived" if r["derived"] else "")),
    ], optional=("conf", "retrieved", "where", "price", "mode", "id"))


def _price(row: dict[str, Any]) -> str:
    if row["mode"] == "dedicated_monthly":
        return f"${row['usd_per_month']:,.0f}/month ({row['contract_months']:.0f} mo)"
    if row["mode"] == "on_prem":
        return f"${row['purchase_usd']:,.0f}"
    return f"${row['usd_per_hour']:,.2f}/h"


@catalog_app.command("hosts")
def hosts(
    provider: Annotated[str | None, typer.Option("--provider", help="AWS, GCP, Lambda, dedicated, ...")] = None,
    accelerator: Annotated[str | None, typer.Option("--accelerator", help="Id or alias (h100, v5e).")] = None,
    family: FamilyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Cloud instance types and server builds."""
    from infrafit.catalog.browse import host_rows
    from infrafit.units import GB, GBIT

    rows = host_rows(_catalog(), provider=provider, accelerator=accelerator, family=family)
    _emit(rows, as_json, "hosts", [
        ("id", lambda r: r["id"]), ("provider", lambda r: r["provider"]),
        ("accelerators", lambda r: f"{r['accelerator_count']}x {r['accelerator_id']}"),
        ("vCPU", lambda r: _fmt(r["vcpu_count"])), ("RAM GB", lambda r: _fmt(r["ram_bytes"], GB)),
        ("NVMe GB", lambda r: _fmt(r["nvme_bytes"], GB)), ("net Gb/s", lambda r: _fmt(r["network_bits_per_s"], GBIT)),
    ])


@catalog_app.command("frameworks")
def frameworks(
    framework: Annotated[str | None, typer.Option("--framework", help="pytorch, jax, tensorflow, ...")] = None,
    family: FamilyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Framework support per accelerator family, runtime, caveats and porting effort."""
    from infrafit.catalog.browse import framework_rows

    rows = framework_rows(_catalog(), framework=framework, family=family)
    _emit(rows, as_json, "frameworks", [
        ("framework", lambda r: r["framework"]), ("family", lambda r: r["family"]), ("support", lambda r: r["support"]),
        ("runtime", lambda r: r["runtime"]), ("port wk", lambda r: _fmt(r["porting_effort_engineer_weeks"], 1, 1)),
        ("caveats", lambda r: r["caveats"]),
    ])


@catalog_app.command("providers")
def providers(
    require: Annotated[str | None, typer.Option("--require", help="only providers known to meet one quality "
                                                 "(soc2, hipaa, c5, support_24x7, ...)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Providers' attestations, support, network and customisation, as sourced in providers.csv (blank = not
    known, which `deployment.require` treats as not met)."""
    from infrafit.catalog.browse import provider_rows

    rows = provider_rows(_catalog(), require=require)
    _emit(rows, as_json, "providers", [
        ("provider", lambda r: r["provider"]), ("offers", lambda r: r["offer_count"]),
        ("known to meet", lambda r: ", ".join(r["known_to_meet"]) or "-"),
        ("confidential VMs", lambda r: (r.get("confidential_computing_hosts") or "-").replace(";", ", ")),
        ("confidence", lambda r: r.get("confidence") or "-"), ("as of", lambda r: r.get("retrieved_on") or "-"),
    ])


@catalog_app.command("stacks")
def stacks(family: FamilyOpt = None, as_json: JsonOpt = False) -> None:
    """Serving and training software stacks and the families they support."""
    from infrafit.catalog.browse import stack_rows

    rows = stack_rows(_catalog(), family=family)
    _emit(rows, as_json, "stacks", [
        ("id", lambda r: r["id"]), ("name", lambda r: r["name"]), ("tasks", lambda r: r["tasks"]),
        ("families", lambda r: r["families"].replace(";", ", ")),
    ])


@catalog_app.command("models")
def models(as_json: JsonOpt = False) -> None:
    """The model library (architectures the estimators know), then the shipped Hugging Face configs."""
    from infrafit.workload.models import model_table

    rows = model_table()
    if not as_json:  # the curated library, then the shipped configs it lacks (long Hugging Face ids)
        shipped = [r for r in rows if str(r.get("source", "")).startswith("shipped config.json")]
        _emit([r for r in rows if r not in shipped], False, "models", _MODEL_COLUMNS)
        _emit(shipped, False, "shipped Hugging Face configs", [_MODEL_COLUMNS[0], *_MODEL_COLUMNS[2:]])
        return
    _emit(rows, as_json, "models", _MODEL_COLUMNS)


def _kv_kb(key: str) -> Any:
    from infrafit.units import KB

    return lambda r: _fmt(r[key] or None, KB, 1)


_MODEL_COLUMNS: list[tuple[str, Any]] = [
    ("id", lambda r: r["id"]), ("name", lambda r: r["name"]), ("kind", lambda r: r["kind"]),
    ("params", lambda r: _count(r["params_total"])), ("active", lambda r: _count(r["params_active"])),
    ("KV kB/token bf16", _kv_kb("kv_bytes_per_token_bf16")), ("KV kB/token fp8", _kv_kb("kv_bytes_per_token_fp8")),
    ("precision", lambda r: r["default_precision"] or "-"),
]


@catalog_app.command("show")
def show(name: Annotated[str, typer.Argument(help="An id or alias from any catalog table.")],
         as_json: JsonOpt = False) -> None:
    """Every field of one entry (accelerator, host, offer, stack or framework row)."""
    from infrafit.catalog.browse import show as lookup
    from infrafit.commands.output import print_json

    found = lookup(_catalog(), name)
    if as_json:
        print_json(found)
        return
    typer.echo(f"[{found['table']}]")
    for key, value in found["row"].items():
        blank = value is None or (isinstance(value, float) and math.isnan(value)) or value == ""
        typer.echo(f"  {key}: {'- (not stated)' if blank else value}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the app."""
    from infrafit.commands import catalog_market  # noqa: F401 - registers refresh, diff, gaps on catalog_app

    app.add_typer(catalog_app, name="catalog")
