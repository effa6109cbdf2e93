"""The schemas of the built-in catalog files (one ``Schema`` per ``data/<name>.csv``)."""

from __future__ import annotations

import string

from infrafit.catalog.schema import Column, Schema, num, provenance, text

KINDS = ("gpu", "tpu", "asic", "cpu")
CONFIDENCE = ("high", "medium", "low")
PEAK_COLUMNS: dict[str, str] = {  # precision -> column of its dense peak
    "fp32": "peak_fp32_flops_per_s",
    "tf32": "peak_tf32_flops_per_s",
    "bf16": "peak_bf16_flops_per_s",
    "fp16": "peak_fp16_flops_per_s",
    "fp8": "peak_fp8_flops_per_s",
    "int8": "peak_int8_ops_per_s",
    "fp4": "peak_fp4_flops_per_s",
    "int4": "peak_int4_ops_per_s",
}

#: Floors far below any real chip (a Jetson Nano is ~5e11 FLOP/s, 8 GB, 6.8e10 bytes/s): a value under
#: them is a typo or a unit slip (GB for bytes), and a zero would divide the performance model by zero.
MIN_FLOPS_PER_S = 1e9
MIN_MEMORY_BYTES = 1e8
MIN_BYTES_PER_S = 1e8

ACCELERATORS = Schema(
    "accelerators",
    (
        text("id", "stable id (matches accelerator_id in the calibration sets)"),
        text("name", "product name"),
        text("vendor", "NVIDIA, AMD, Google, Intel, AWS"),
        text("family", "family string as used in accelerator_family of the calibration sets"),
        text("generation", "architecture generation (hopper, cdna3, tpu-v5e, gaudi3, sapphire-rapids, ...)"),
        text("kind", "gpu | tpu | asic | cpu", choices=KINDS),
        text("form_factor", "SXM, PCIe, OAM, CPU socket, ...", required=False),
        *(
            num(col, f"dense peak {prec} per chip, FLOP/s (ops/s for integers); empty = no native support",
                required=False, minimum=MIN_FLOPS_PER_S)
            for prec, col in PEAK_COLUMNS.items()
        ),
        num("memory_bytes", "device memory per chip, bytes (CPUs: a typical one-DIMM-per-channel build)",
            minimum=MIN_MEMORY_BYTES),
        text("memory_type", "HBM3, GDDR6, DDR5-4800 x8 channels, ...", required=False),
        num("memory_bytes_per_s", "peak device memory bandwidth per chip, bytes/s", minimum=MIN_BYTES_PER_S),
        text("scaleup_link", "scale-up interconnect (NVLink 4, Infinity Fabric, ICI, PCIe only)"),
        num("scaleup_bytes_per_s", "scale-up bandwidth per chip, one direction, bytes/s; 0 when PCIe only"),
        num("scaleup_domain_chips", "chips in one scale-up domain (8 HGX, 72 NVL72, TPU pod size)", kind="int"),
        text("scaleup_topology", "switch (NVSwitch: every chip one hop from every other) | full_mesh (direct "
             "links between every pair: 8-OAM Infinity Fabric, Gaudi RoCE) | torus (TPU ICI) | bridge (NVLink "
             "pairs) | none; empty = not known (collectives are then costed as a ring)", required=False,
             choices=("switch", "full_mesh", "torus", "bridge", "none")),
        num("scaleout_bytes_per_s", "scale-out network per chip in the typical deployment, one direction, bytes/s; "
            "empty = not known", required=False, minimum=MIN_BYTES_PER_S),
        text("host_interface", "link to the host CPU", required=False),
        num("host_bytes_per_s", "host link bandwidth per direction, bytes/s; empty = not known", required=False,
            minimum=MIN_BYTES_PER_S),
        num("tdp_w", "board/module power, watts; empty = not published", required=False, minimum=1.0),
        Column("release_date", "partial_date", required=False,
               doc="launch or announcement: YYYY, YYYY-MM or YYYY-MM-DD"),
        num("core_count", "CPU cores per socket (CPUs only)", required=False, kind="int"),
        num("clock_hz", "clock assumed for a derived peak (CPUs: base clock), Hz", required=False),
        text("confidence", "high | medium | low (see the source's notes)", choices=CONFIDENCE),
        Column("derived", "bool", doc="true when a figure is arithmetic on sourced numbers (see notes)"),
        text("notes", "caveats, derivations and conflicts between sources", required=False),
        *provenance(),
    ),
    doc="One row per chip (TPU: per chip, not per core; CPU: per socket).",
)

ALIASES = Schema(
    "aliases",
    (
        text("alias", "another name for an accelerator (case-insensitive; spaces, _ and - are equivalent)"),
        text("accelerator_id", "the id in accelerators.csv it resolves to"),
        Column("remaps_builtin", "bool", required=False,
               doc="overlay rows only: true lets this row point a built-in alias at another accelerator"),
        *provenance(),
    ),
    key=("alias",),
    references={"accelerator_id": "accelerators"},
    doc="Names that resolve to accelerator ids.",
)

HOST_KINDS = ("cloud_instance", "server", "edge_device")
#: AWS Spot Instance Advisor's bands of "the rate at which Spot has reclaimed capacity during the trailing month".
#: Sequential read of one local NVMe drive where a host row counts drives but states no rate (docs/catalog.md,
#: "Derivation rules" 7: a data-centre PCIe Gen4 NVMe drive); ``catalog refresh`` applies it to new hosts.
NVME_DRIVE_READ_BYTES_PER_S = 3.0e9
NVME_RULE = f"{NVME_DRIVE_READ_BYTES_PER_S:.1e}".replace("e+0", "e")  # "3.0e9", as notes and docs write it
SPOT_BANDS = ("<5%", "5-10%", "10-15%", "15-20%", ">20%", "5-15%/day")
MODES = ("cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "cloud_capacity_block",
         "dedicated_monthly", "on_prem")

SCALEOUT_FABRICS = ("efa", "infiniband", "rdma")

HOSTS = Schema(
    "hosts",
    (
        text("id", "stable host id"),
        text("name", "instance type or server build name"),
        text("provider", "cloud provider, or generic for a server build"),
        text("host_kind", "cloud_instance | server (a dedicated or on-prem build) | edge_device",
             choices=HOST_KINDS),
        text("accelerator_id", "accelerator in the box (accelerators.csv id)"),
        num("accelerator_count", "accelerators per box", kind="int", minimum=1),
        num("vcpu_count", "hardware threads (cloud vCPUs; servers: cores x 2); empty = not stated", required=False),
        num("ram_bytes", "host RAM, bytes; empty = not stated", required=False),
        num("nvme_bytes", "local NVMe capacity, bytes (0 = network storage only)", required=False),
        num("nvme_drive_count", "local NVMe drives", required=False, kind="int"),
        num("nvme_read_bytes_per_s", f"local NVMe sequential read, bytes/s (drives x {NVME_RULE} rule)",
            required=False),
        num("network_bits_per_s", "host network bandwidth, bits/s (EFA/InfiniBand/RoCE total)", required=False,
            minimum=MIN_BYTES_PER_S),
        Column("fabric_spans_instances", "bool", required=False,
               doc="true when the accelerators' scale-up fabric joins instances of this host (TPU hosts of a "
                   "multi-host slice on ICI): a TP group may then span instances up to the chip's scale-up domain"),
        text("scaleout_fabric", "the RDMA fabric that joins instances of this host for GPU collectives, "
             "at network_bits_per_s: efa | infiniband | rdma (RoCE); empty = none declared (a replica's "
             "expert-parallel group then stays inside one instance)", required=False, choices=SCALEOUT_FABRICS),
        num("power_w", "server power at full load, watts (servers only)", required=False),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        Column("derived", "bool", doc="true when a figure is derived by a documented rule (see notes)"),
        text("notes", "caveats and derivations", required=False),
        *provenance(),
    ),
    references={"accelerator_id": "accelerators"},
    doc="Cloud instance types and typical dedicated/on-prem server builds.",
)

OFFERS = Schema(
    "offers",
    (
        text("id", "stable offer id"),
        text("provider", "AWS, GCP, Azure, Oracle, Lambda, RunPod, dedicated (market rate), purchase, ..."),
        text("region", "provider region or city slug; empty for purchases", required=False),
        text("city", "city of the region", required=False),
        text("country", "ISO 3166 alpha-2 code of the region (required when region is set)", required=False),
        text("mode", "deployment mode", choices=MODES),
        text("host_id", "the host (hosts.csv id) the price buys"),
        text("accelerator_id", "accelerator of the host (accelerators.csv id)"),
        num("accelerator_count", "accelerators the price buys", kind="int", minimum=1),
        num("usd_per_hour", "price per hour of the whole host (cloud modes)", required=False),
        num("usd_per_month", "price per month (dedicated_monthly)", required=False),
        num("contract_months", "minimum contract length (dedicated_monthly)", required=False, kind="int"),
        num("purchase_usd", "purchase price (on_prem)", required=False),
        text("includes", "what the price includes", required=False),
        Column("host_included", "bool",
               doc="false when the price covers only the accelerators (GCP GPU part, baseboards)"),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        Column("derived", "bool", doc="true when the price is derived by a documented rule (see notes)"),
        text("availability", "verified (the source lists this SKU in this region) | unverified (copied from "
             "another region by a price rule, or a listing that names no location; the SKU may not be sold "
             "here); empty = verified", required=False,
             choices=("verified", "unverified")),
        text("notes", "how the price was derived, ranges, caveats", required=False),
        *provenance(),
    ),
    references={"host_id": "hosts", "accelerator_id": "accelerators"},
    doc="Prices: one row per provider x region x mode x host.",
)

_PRICE_BY_MODE = {
    "cloud_on_demand": "usd_per_hour", "cloud_spot": "usd_per_hour", "cloud_reserved_1y": "usd_per_hour",
    "cloud_reserved_3y": "usd_per_hour", "cloud_capacity_block": "usd_per_hour", "dedicated_monthly": "usd_per_month",
    "on_prem": "purchase_usd",
}


def offer_row_issues(rec: dict[str, object]) -> list[tuple[str, str]]:
    """An offer's price sits in the column of its mode (and only there); dedicated needs contract months."""
    want = _PRICE_BY_MODE[str(rec["mode"])]
    out = []
    if rec[want] != rec[want]:  # nan
        out.append((f"mode {rec['mode']} needs a price in {want}", f"fill {want}"))
    for other in set(_PRICE_BY_MODE.values()) - {want}:
        if rec[other] == rec[other]:
            out.append((f"{other} is set but mode is {rec['mode']}", f"move the price to {want} or change mode"))
    if rec["mode"] == "dedicated_monthly" and rec["contract_months"] != rec["contract_months"]:
        out.append(("dedicated_monthly needs contract_months", "fill contract_months (1 for month-to-month)"))
    return out


SUPPORT = ("first-class", "supported", "experimental", "none")
FRAMEWORKS_SCHEMA = Schema(
    "frameworks",
    (
        text("id", "framework:family"),
        text("framework", "pytorch | tensorflow | jax | onnx | sklearn | xgboost",
             choices=("pytorch", "tensorflow", "jax", "onnx", "sklearn", "xgboost")),
        text("family", "accelerator family (as in accelerators.csv)"),
        text("support", "first-class | supported | experimental | none", choices=SUPPORT),
        text("runtime", "the runtime the framework goes through (CUDA, ROCm, PyTorch/XLA, Neuron SDK, ...)"),
        text("caveats", "custom CUDA ops, dynamic shapes and recompilation, operator coverage", required=False),
        num("porting_effort_engineer_weeks",
            "typical effort to move a working CUDA/PyTorch workload here, engineer-weeks"),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        text("notes", "caveats and how the effort was judged", required=False),
        *provenance(),
    ),
    doc="Framework support per accelerator family.",
)
STACKS = Schema(
    "stacks",
    (
        text("id", "stack id, as software_stack_family in the calibration sets"),
        text("name", "display name"),
        text("aliases", "other names, ';'-separated", required=False),
        text("families", "accelerator families the stack supports, ';'-separated"),
        text("tasks", "training;inference"),
        text("phases", "training;prefill;decode"),
        num("recurrent_state_element_bytes",
            "width the stack keeps linear-attention/SSM recurrent state at by default, bytes per element; "
            "empty = the model's 16-bit dtype", required=False),
        Column("prefill_pass_graphed", "bool", required=False,
               doc="true when the stack runs a scheduler pass that carries prompt tokens as a captured or compiled "
                   "graph by default (vLLM V1's piecewise CUDA graphs; XLA, Neuron, OpenVINO and ONNX Runtime "
                   "graphs; ggml's graph on CPU); false or empty when it launches each layer's kernels from the "
                   "host one by one (TensorRT-LLM's PyTorch backend and SGLang by default, PyTorch eager): such "
                   "a pass pays the fitted prefill ``layer_overhead``"),
        text("notes", "caveats", required=False),
        *provenance(),
    ),
    doc="Serving and training software stacks (their efficiencies live in perf_profiles*.csv).",
)


def _cost(name: str, columns: tuple[Column, ...], doc: str) -> Schema:
    return Schema(name, (text("id", "row id"), *columns, text("confidence", "high | medium | low", choices=CONFIDENCE),
                         text("notes", "caveats and rules", required=False), *provenance()), doc=doc)


COST_TABLES = (
    _cost("cost_egress", (
        text("provider", "provider (as in offers.csv)"),
        num("tier_start_bytes", "tier starts after this monthly volume, bytes"),
        num("tier_end_bytes", "tier ends at this monthly volume, bytes; empty = unbounded", required=False),
        num("usd_per_gb", "internet egress price in the tier, USD per GB (1e9 bytes)"),
        num("free_bytes_per_month", "free monthly allowance, bytes"),
    ), "Internet egress price tiers per provider."),
    _cost("cost_interregion", (
        text("provider", "provider (as in offers.csv)"),
        num("usd_per_gb", "price of data sent from one of the provider's regions to another, USD per GB (1e9 bytes)"),
    ), "Inter-region data transfer per provider (same provider, different region): what a hybrid option's "
       "artifact transfer pays instead of internet egress."),
    _cost("cost_storage", (
        text("provider", "provider, or any"),
        text("storage_class", "object | block | local_nvme", choices=("object", "block", "local_nvme")),
        num("usd_per_gb_month", "USD per GB (1e9 bytes) stored per month"),
    ), "Storage prices."),
    _cost("cost_electricity", (
        text("region", "region slug (us-virginia, ...) or default"),
        text("country", "ISO 3166 alpha-2"),
        text("sector", "commercial | industrial", choices=("commercial", "industrial")),
        num("usd_per_kwh", "retail electricity price, USD per kWh"),
    ), "Electricity prices by region."),
    _cost("cost_pue", (
        text("facility", "facility type"),
        num("pue_ratio", "power usage effectiveness (facility power / IT power)", minimum=1.0),
    ), "Power usage effectiveness."),
    _cost("cost_colocation", (
        text("region", "region slug"),
        text("country", "ISO 3166 alpha-2"),
        num("usd_per_kw_month", "colocation rent per kW of IT capacity per month"),
    ), "Colocation rent."),
    _cost("cost_maintenance", (
        text("item", "what the share covers"),
        num("annual_fraction", "yearly cost as a fraction of the hardware purchase price"),
    ), "Hardware maintenance and support shares."),
    _cost("cost_discounts", (
        text("provider", "provider"),
        text("commitment", "cloud_reserved_1y | cloud_reserved_3y | sustained_use"),
        num("typical_fraction", "typical discount off on-demand seen in paired prices (fraction)"),
        num("max_fraction", "published maximum discount (fraction)"),
    ), "Commitment discounts."),
    _cost("cost_billing", (
        text("provider", "provider (as in offers.csv), or any"),
        text("mode", "cloud_on_demand | cloud_spot | cloud_capacity_block | any",
             choices=("cloud_on_demand", "cloud_spot", "cloud_capacity_block", "any")),
        num("increment_s", "billing increment: run time is rounded up to a multiple of it, seconds", minimum=1.0),
        num("minimum_s", "least run time billed per instance start, seconds"),
        num("boot_s", "launch to ready for work, before the image pull and model load, seconds"),
        num("long_after_s", "runs longer than this are rounded up to long_increment_s instead, seconds",
            required=False),
        num("long_increment_s", "billing increment of runs longer than long_after_s, seconds", required=False),
        num("maximum_s", "longest run one purchase covers; empty = no limit, seconds", required=False),
        num("end_margin_s", "paid time at the end of a purchase the instances cannot run, seconds",
            required=False),
        num("max_instances_count", "most instances one purchase holds; empty = no limit", required=False),
    ), "How elastic capacity is billed per instance start: increment, minimum, boot time, and for "
       "prepaid blocks their length rule and size limit."),
    _cost("cost_managed", (
        text("provider", "provider (as in offers.csv)"),
        text("platform", "the managed platform that runs the provider's GPU instances for you (control plane, "
             "node images, scaling)"),
        text("work", "any | batch: batch rows are the managed batch service scheduled batch inference runs on "
             "(ops_labour.csv work: batch); any = every other work", choices=("any", "batch")),
        num("usd_per_cluster_hour", "the platform's own fee per cluster, USD per hour (the instances are billed "
            "as usual)"),
    ), "Managed platforms per provider and work: what ``deployment.managed_preferred`` runs the provider's "
       "instances on, and the fee it adds."),
    _cost("cost_managed_instances", (
        text("provider", "provider (as in offers.csv)"),
        text("platform", "the managed platform (as in cost_managed.csv) that sells its own instance rate"),
        text("host_id", "the host (hosts.csv) the platform's instance runs on (ml.g5.xlarge -> g5.xlarge)"),
        text("region", "region slug of the rate (as in offers.csv)"),
        num("usd_per_hour", "the platform's on-demand rate for one instance, USD per hour; it replaces the "
            "offer's own rate"),
    ), "Per-instance rates of managed platforms that sell instances at their own price (SageMaker AI's ml.* "
       "instances): a platform with rows here runs only the on-demand offers of those hosts in those regions."),
    _cost("cost_lead_time", (
        text("host_kind", "any | edge_device: a row for one kind of host overrides the any row",
             choices=("any", "edge_device")),
        num("lead_weeks", "order to delivery of bought hardware, weeks"),
    ), "Lead time of bought hardware: the weeks from order to serving that on-prem options bridge with "
       "cloud capacity."),
    _cost("cost_spot", (
        text("provider", "provider (as in offers.csv)"),
        text("host_id", "instance type (hosts.csv id), or any"),
        text("region", "region (as in offers.csv), or any"),
        text("frequency_band", "the provider's published band of capacity reclaimed in the trailing month "
             "(AWS Spot Instance Advisor), or of VMs preempted a day (/day: GCP's seven-day average)",
             choices=SPOT_BANDS),
    ), "Published spot interruption frequencies per instance type (or any) and region (or any): AWS Spot "
       "Instance Advisor bands, GCP's published daily preemption rate."),
)

def egress_row_issues(rec: dict[str, object]) -> list[tuple[str, str]]:
    """A bounded egress tier ends after it starts."""
    start, end = float(str(rec["tier_start_bytes"])), float(str(rec["tier_end_bytes"]))
    if end == end and end <= start:
        return [(f"tier_end_bytes {end:g} is not after tier_start_bytes {start:g}",
                 "write a tier end above its start, or leave tier_end_bytes empty for the last, unbounded tier")]
    return []


def accelerator_row_issues(rec: dict[str, object]) -> list[tuple[str, str]]:
    """Scale-up bandwidth is 0 (PCIe only) or a real link rate, never a vanishing one."""
    link = float(str(rec["scaleup_bytes_per_s"]))
    if 0 < link < MIN_BYTES_PER_S:
        return [(f"scaleup_bytes_per_s {link:g} is neither 0 (PCIe only) nor a link rate",
                 f"write 0 for PCIe-only chips, or the link's bytes/s (>= {MIN_BYTES_PER_S:g})")]
    return []


#: What ``deployment.require`` can ask of a provider, and the providers column that answers it
#: (``confidential_computing`` is answered per instance type by ``confidential_computing_hosts``).
PROVIDER_QUALITIES: dict[str, str] = {
    "soc2": "SOC 2 Type II report",
    "iso27001": "ISO/IEC 27001 certification",
    "hipaa": "HIPAA: a business associate agreement is signed",
    "pci_dss": "PCI DSS attestation",
    "gdpr": "GDPR data processing agreement",
    "c5": "BSI C5 attestation (Germany)",
    "ismap": "ISMAP registration (Japan)",
    "mtcs": "MTCS SS 584 certification (Singapore)",
    "support_24x7": "24x7 support (possibly on a paid plan, see notes)",
    "china_optimized_network": "premium routes to mainland China (CN2 GIA or similar)",
    "bgp_multihoming": "BGP multi-homed network",
    "custom_builds": "custom server builds",
}
YES_NO = ("yes", "no")
PROVIDERS = Schema(
    "providers",
    (
        text("provider", "provider, exactly as in offers.csv"),
        *(text(q, f"{what}: yes | no | empty = not known (never assumed)", required=False, choices=YES_NO)
          for q, what in PROVIDER_QUALITIES.items()),
        text("confidential_computing_hosts", "host ids (hosts.csv) sold as confidential-computing VMs "
             "(CPU and GPU TEE with attestation), ';'-separated; empty = none known", required=False),
        text("facility", "facility type in cost_pue.csv for the provider's data centres; empty = not published",
             required=False),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        text("notes", "what the attestations cover, plans needed, what is unknown", required=False),
        *provenance(),
    ),
    key=("provider",),
    doc="Provider qualities: attestations, support, network and customisation, with sources. "
        "``deployment.require`` keeps only offers whose provider is known to meet each item.",
)


GRID_CARBON = Schema(
    "grid_carbon",
    (
        text("id", "row id"),
        text("country", "ISO 3166 alpha-2"),
        text("city", "city of the data centre; empty = every data centre in the country (one national grid)",
             required=False),
        num("co2e_g_per_kwh", "grid carbon intensity, grams CO2-equivalent per kWh (location-based, yearly mean)"),
        text("period", "the period the mean covers"),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        text("notes", "city or country row and why", required=False),
        *provenance(),
    ),
    doc="Grid carbon intensity where a source publishes it; a place with no row has no emissions figure "
        "(never guessed).",
)

PLACE_BORDERS = Schema(
    "place_borders",
    (
        text("id", "row id"),
        text("users_countries", "ISO 3166 alpha-2 codes of the user countries the condition is about, "
             "space-separated"),
        text("served_in", "the condition holds when the serving country is one of these codes (space-separated); "
             "empty = see served_outside", required=False),
        text("served_outside", "the condition holds when the serving country is none of these codes "
             "(space-separated); empty = see served_in", required=False),
        text("condition", "short name of the condition (GDPR transfer, cross-border network, ...)"),
        text("risk", "the risk line an option gets; {users} = the user places in those countries, {country} = "
             "the serving country, {provider} = the option's provider"),
        text("confidence", "high | medium | low", choices=CONFIDENCE),
        text("notes", "scope and caveats", required=False),
        *provenance(),
    ),
    doc="Known conditions on serving users in one country from another (data-transfer law, cross-border "
        "networks), each with its source: a plan states them as risks, never as a price or a delay it "
        "has no figure for.",
)


BORDER_FIELDS = ("users", "country", "provider")


def border_row_issues(rec: dict[str, object]) -> list[tuple[str, str]]:
    """A border condition names its countries as ISO codes, says exactly one of where it holds, and its
    risk text uses only the fields a plan fills in."""
    out: list[tuple[str, str]] = []
    lists = {k: str(rec.get(k) or "").split() for k in ("users_countries", "served_in", "served_outside")}
    bad = sorted({c for codes in lists.values() for c in codes if len(c) != 2 or not c.isalpha() or not c.isupper()})
    if bad:
        out.append((f"not ISO 3166 alpha-2 codes: {', '.join(bad)}", "write upper-case two-letter codes (DE, CN)"))
    if not lists["users_countries"]:
        out.append(("users_countries is empty", "name the user countries the condition is about"))
    if bool(lists["served_in"]) == bool(lists["served_outside"]):
        out.append(("give exactly one of served_in and served_outside",
                    "served_in: the condition holds inside those countries; served_outside: outside them"))
    fields = {f for _, f, _, _ in string.Formatter().parse(str(rec.get("risk") or "")) if f is not None}
    if fields - set(BORDER_FIELDS):
        out.append((f"risk uses unknown fields {sorted(fields - set(BORDER_FIELDS))}",
                    f"use only {{{'}, {'.join(BORDER_FIELDS)}}}"))
    return out


ROW_CHECKS = {"offers": offer_row_issues, "cost_egress": egress_row_issues, "accelerators": accelerator_row_issues,
              "place_borders": border_row_issues}

#: Every built-in table, in load order (a table named in ``references`` loads before its users).
TABLES: dict[str, Schema] = {
    s.name: s for s in (ACCELERATORS, ALIASES, HOSTS, OFFERS, FRAMEWORKS_SCHEMA, STACKS, PROVIDERS, GRID_CARBON,
                          PLACE_BORDERS, *COST_TABLES)
}
