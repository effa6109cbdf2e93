"""``infrafit catalog refresh|diff|gaps``: keep prices current and see what is missing (docs/catalog.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from infrafit.commands.catalog import JsonOpt, catalog_app

FORMATS = ("skypilot", "azure-retail", "ec2instances")
#: Where ``--fetch`` downloads from (public, unauthenticated).
SKYPILOT_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv"
AZURE_URL = "https://prices.azure.com/api/retail/prices"
EC2INSTANCES_URL = "https://instances.vantage.sh/instances.json"
FETCH_TIMEOUT_S = 30.0
DEFAULT_CLOUDS = "aws,gcp,azure,oci,lambda,runpod,nebius"


@catalog_app.command("refresh")
def refresh(
    fmt: Annotated[str, typer.Option("--format", help="skypilot | azure-retail | ec2instances")],
    source: Annotated[Path, typer.Option("--from", help="Folder of saved price lists (SkyPilot: <cloud>/vms.csv; "
                                                         "Azure: *.json pages; ec2instances: instances.json).")],
    out: Annotated[Path, typer.Option("--out", help="Overlay folder to write (offers.csv; hosts.csv for new "
                                                    "hosts; cost_spot.csv for spot interruption bands).")],
    fetch: Annotated[bool, typer.Option("--fetch", help="Download the price lists into --from first (needs "
                                                        "network and `pip install infrafit[refresh]`).")] = False,
    clouds: Annotated[str, typer.Option("--clouds", help="SkyPilot clouds to fetch, comma-separated.")] = \
        DEFAULT_CLOUDS,
    retrieved_on: Annotated[str | None, typer.Option("--retrieved-on", help="Date of the price lists, YYYY-MM-DD "
                                                                            "(default: today).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Convert saved public price lists into a catalog overlay that `plan --catalog-dir` uses."""
    import datetime as dt

    from infrafit.catalog import load_catalog
    from infrafit.catalog.refresh import convert, read_azure_retail, read_ec2instances, read_skypilot, write_overlay
    from infrafit.commands.output import note, print_json
    from infrafit.errors import InputError, suggest

    if fmt not in FORMATS:
        raise InputError(f"--format {fmt!r} is not a known price-list format",
                         fix=f"use one of {', '.join(FORMATS)}{suggest(fmt, FORMATS)}")
    day = retrieved_on or dt.date.today().isoformat()
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise InputError(f"--retrieved-on {day!r} is not a date", fix="write YYYY-MM-DD") from None
    if fetch:
        _fetch(fmt, source, [c.strip() for c in clouds.split(",") if c.strip()], load_catalog())
    if not source.exists():
        raise InputError(f"--from {source} does not exist", fix="point --from at the saved price lists, or add --fetch")
    reader = {"skypilot": read_skypilot, "azure-retail": read_azure_retail, "ec2instances": read_ec2instances}[fmt]
    listings = reader(source, retrieved_on=day)
    conversion = convert(listings, load_catalog())
    written = write_overlay(conversion, out)
    note(conversion.summary())
    if as_json:
        print_json({"offers": len(conversion.offers), "hosts": len(conversion.hosts),
                    "spot_bands": len(conversion.spot_bands),
                    "written": [str(p) for p in written],
                    "skipped": [{"provider": lst.provider, "instance": lst.instance, "region": lst.region,
                                 "mode": lst.mode, "reason": why} for lst, why in conversion.skipped]})
    else:
        from infrafit.commands.output import stdout

        for path in written:
            stdout.print(str(path), highlight=False)
    note(f"use it with: infrafit plan SPEC --catalog-dir {out}")


def _fetch(fmt: str, folder: Path, clouds: list[str], catalog: Any) -> None:
    """Download SkyPilot vms.csv files or Azure Retail Prices pages into ``folder`` (a clear exit-2 error
    without httpx or without network)."""
    from infrafit.errors import InputError

    try:
        import httpx
    except ImportError:
        raise InputError("--fetch needs the httpx package", fix="pip install 'infrafit[refresh]'") from None
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with httpx.Client(timeout=FETCH_TIMEOUT_S, follow_redirects=True) as client:
            if fmt == "skypilot":
                for cloud in clouds:
                    response = client.get(SKYPILOT_URL.format(cloud=cloud))
                    response.raise_for_status()
                    (folder / cloud).mkdir(exist_ok=True)
                    (folder / cloud / "vms.csv").write_text(response.text, encoding="utf-8")
            elif fmt == "ec2instances":
                response = client.get(EC2INSTANCES_URL)
                response.raise_for_status()
                (folder / "instances.json").write_text(response.text, encoding="utf-8")
            else:
                _fetch_azure(client, folder, catalog)
    except httpx.HTTPError as exc:
        raise InputError(f"--fetch failed: {exc}", fix="check the network (or save the price lists by hand into "
                                                       "--from and drop --fetch)") from None


def _fetch_azure(client: Any, folder: Path, catalog: Any) -> None:
    """One query per Azure host SKU of the catalog, following NextPageLink."""
    import json

    names = sorted(str(n) for n, p in zip(catalog.hosts["name"], catalog.hosts["provider"], strict=True)
                   if p == "Azure")
    for i, sku in enumerate(names):
        url: str | None = f"{AZURE_URL}?$filter=serviceName eq 'Virtual Machines' and armSkuName eq '{sku}'"
        page = 0
        while url:
            data = client.get(url).raise_for_status().json()
            (folder / f"azure-{i:03d}-{page:02d}.json").write_text(json.dumps(data), encoding="utf-8")
            url, page = data.get("NextPageLink"), page + 1


@catalog_app.command("diff")
def diff(
    old: Annotated[Path, typer.Argument(help="Old catalog or overlay folder, or an offers CSV; 'builtin' = the "
                                             "shipped catalog.")],
    new: Annotated[Path, typer.Argument(help="New catalog or overlay folder, or an offers CSV.")],
    all_providers: Annotated[bool, typer.Option("--all-providers", help="Count offers of providers NEW does not "
                                                                        "mention as removed.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Offers added, removed and re-priced between two price lists."""
    from infrafit.catalog import DATA_DIR
    from infrafit.catalog.market import diff_offers, read_offers
    from infrafit.commands.output import print_json, stdout

    def frame(p: Path):  # noqa: ANN202 - DataFrame
        return read_offers(DATA_DIR if str(p) == "builtin" else p)

    result = diff_offers(frame(old), frame(new), only_new_providers=not all_providers)
    if as_json:
        print_json(result)
        return
    for word, rows in (("added", result["added"]), ("removed", result["removed"])):
        for r in rows:
            stdout.print(f"{'+' if word == 'added' else '-'} {r['provider']} {r['host_id']} {r['region']} {r['mode']}: "
                         f"{r['price_usd']:,.4g} ({r['price_column']}, {r['retrieved_on']})", highlight=False)
    for r in result["repriced"]:
        stdout.print(f"~ {r['provider']} {r['host_id']} {r['region']} {r['mode']}: {r['old_price_usd']:,.4g} -> "
                     f"{r['new_price_usd']:,.4g} ({r['change_fraction']:+.1%}; {r['old_retrieved_on']} -> "
                     f"{r['retrieved_on']})", highlight=False)
    stdout.print(f"{len(result['added'])} added, {len(result['removed'])} removed, {len(result['repriced'])} "
                 f"re-priced, {result['unchanged']} unchanged", highlight=False)


@catalog_app.command("gaps")
def gaps_cmd(
    family: Annotated[str | None, typer.Option("--family", help="Only this accelerator family.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Only this deployment mode.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Accelerator families x deployment modes x countries with no complete price in the catalog."""
    from infrafit.catalog import load_catalog
    from infrafit.catalog.market import gaps
    from infrafit.catalog.tables import MODES
    from infrafit.commands.catalog import _emit
    from infrafit.errors import InputError, suggest

    catalog = load_catalog()
    families = sorted({a.family for a in catalog.accelerators.values()})
    if mode is not None and mode not in MODES:
        raise InputError(f"--mode {mode!r} is not a deployment mode",
                         fix=f"use one of {', '.join(MODES)}{suggest(mode, MODES)}")
    if family is not None and family.lower() not in {f.lower() for f in families}:
        raise InputError(f"--family {family!r} is not an accelerator family",
                         fix=f"use one of {', '.join(families)}{suggest(family, families)}")
    rows = [r for r in gaps(catalog)
            if (family is None or r["family"].lower() == family.lower()) and (mode is None or r["mode"] == mode)]
    _emit(rows, as_json, "gaps", [
        ("family", lambda r: r["family"]), ("mode", lambda r: r["mode"]), ("offers", lambda r: r["offer_count"]),
        ("no price in", lambda r: ", ".join(r["missing_countries"]))])
