"""The schemas of the built-in catalog files (one ``Schema`` per ``data/<name>.csv``)."""

from __future__ import annotations

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
                required=False)
            for prec, col in PEAK_COLUMNS.items()
        ),
        num("memory_bytes", "device memory per chip, bytes (CPUs: a typical one-DIMM-per-channel build)"),
        text("memory_type", "HBM3, GDDR6, DDR5-4800 x8 channels, ...", required=False),
        num("memory_bytes_per_s", "peak device memory bandwidth per chip, bytes/s"),
        text("scaleup_link", "scale-up interconnect (NVLink 4, Infinity Fabric, ICI, PCIe only)"),
        num("scaleup_bytes_per_s", "scale-up bandwidth per chip, one direction, bytes/s; 0 when PCIe only"),
        num("scaleup_domain_chips", "chips in one scale-up domain (8 HGX, 72 NVL72, TPU pod size)", kind="int"),
        num("scaleout_bytes_per_s", "scale-out network per chip in the typical deployment, one direction, bytes/s; "
            "empty = not known", required=False),
        text("host_interface", "link to the host CPU", required=False),
        num("host_bytes_per_s", "host link bandwidth per direction, bytes/s; empty = not known", required=False),
        num("tdp_w", "board/module power, watts; empty = not published", required=False),
        Column("release_date", "partial_date", required=False, doc="launch or announcement: YYYY, YYYY-MM or YYYY-MM-DD"),
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
        *provenance(),
    ),
    key=("alias",),
    references={"accelerator_id": "accelerators"},
    doc="Names that resolve to accelerator ids.",
)

#: Every built-in table, in load order (a table named in ``references`` loads before its users).
TABLES: dict[str, Schema] = {s.name: s for s in (ACCELERATORS, ALIASES)}
