"""Model parameters of the cost model: every assumption that is not a market price, with its source.

Market prices (instance prices, electricity, egress tiers, colocation, maintenance shares) live in
the catalog's CSV files and reach the cost core as arrays (``OfferArrays``). What lives here are the
*modelling* choices a finance or platform team would want to see and override: headroom on fixed
capacity, depreciation life and residual value, the spot interruption model, the bytes a token
takes on the wire. ``docs/cost.md`` lists each with its source.
"""

from __future__ import annotations

from dataclasses import dataclass

from infrafit.errors import InputError
from infrafit.units import SECONDS_PER_HOUR, SECONDS_PER_MINUTE

#: Every breakdown carries exactly these keys (``*_usd``); their sum is the total.
BREAKDOWN_KEYS: tuple[str, ...] = (
    "compute_usd",
    "idle_usd",
    "storage_usd",
    "egress_usd",
    "power_usd",
    "colocation_usd",
    "maintenance_usd",
    "ops_labour_usd",
    "platform_usd",
    "migration_usd",
    "setup_usd",
    "bridge_usd",
    "interruption_overhead_usd",
    "resale_loss_usd",
    "model_change_usd",
    "stranded_commitment_usd",
    "capital_usd",
)

#: Breakdown lines that are modelled engineer time, not metered by an invoice: within a near tie they are
#: the noise, so the last tie-break compares what the invoices would say (``CostResult.metered_usd``).
MODELLED_COST_KEYS: tuple[str, ...] = ("ops_labour_usd", "migration_usd", "model_change_usd")

MODES: tuple[str, ...] = (
    "cloud_on_demand",
    "cloud_spot",
    "cloud_reserved_1y",
    "cloud_reserved_3y",
    "cloud_capacity_block",
    "dedicated_monthly",
    "on_prem",
)
#: Modes whose capacity is bought in advance and sized for peak x (1 + headroom).
FIXED_MODES: tuple[str, ...] = ("cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly", "on_prem")
#: Modes that scale with the load each hour (pay for the replica-hours actually needed).
ELASTIC_MODES: tuple[str, ...] = ("cloud_on_demand", "cloud_spot")
#: Modes bought per run, as sold: elastic capacity and prepaid blocks (AWS EC2 Capacity Blocks for ML).
PER_START_MODES: tuple[str, ...] = ("cloud_on_demand", "cloud_spot", "cloud_capacity_block")


@dataclass(frozen=True)
class CostParams:
    """Modelling assumptions (defaults documented in docs/cost.md, section "Assumptions").

    headroom_fraction: fixed capacity is sized for peak x (1 + headroom). 20 % is the usual
        planning margin for latency SLOs under bursty load (queueing delay grows as 1/(1 - rho);
        at rho = 1/1.2 = 0.83 an M/M/1 queue waits ~5x the service time, the edge of acceptable).
    spot_checkpoint_interval_s / spot_restart_s: expected lost work per interruption is
        interval/2 + restart (work since the last checkpoint is lost uniformly on average, then
        the job waits for a new instance and reloads). 30 min interval and 10 min restart are
        common defaults of training launchers (e.g. SkyPilot managed spot jobs checkpoint-resume).
    spot_interruptions_per_hour_default: used when the catalog has no rate for the offer: one
        interruption per 24 h, GCP's hard upper bound on a preemptible VM's run time
        (cloud.google.com/compute/docs/instances/preemptible, "run for at most 24 hours").
    spot_realtime_floor_replicas: realtime serving on spot keeps this many replicas on on-demand
        at all active hours (the fallback that answers while spot capacity is re-acquired).
    accel_idle_power_fraction: an idle accelerator still draws power; 10 % of TDP (an H100 SXM
        idles near 70 W of 700 W in nvidia-smi readings) is an assumption, not a catalog fact.
    bytes_per_output_token: ~4 characters of English per token (OpenAI tokenizer guidance) at
        1 byte per UTF-8 character, doubled for streaming/JSON framing -> 8 bytes on the wire.
    hours_per_engineer_week: 40 h, the standard full-time week used to cost engineer-weeks.
    storage_retained_checkpoints: checkpoints kept on hot storage at any time.
    onprem_life_years: straight-line depreciation life of owned accelerator servers. 4 years is
        the conservative end of practice: hyperscalers depreciate servers over 5-6 years (Microsoft
        and Alphabet 10-K filings, 2022-2023), GPU generations turn over every ~2 years.
    onprem_residual_fraction: resale value at the end of the life, 10 % of purchase (assumption;
        four-year-old data-centre GPUs resell for a small fraction of list).
    onprem_resale_haircut_fraction: owned servers are sold at the horizon's end for their book value
        less 20 % (assumption: a used-hardware broker's margin plus de-installation, transport and
        testing; brokers buy at roughly 60-80 % of their own resale price). It makes a horizon shorter
        than the payback pay for the early sale instead of three months of depreciation.
    image_bytes / image_pull_bytes_per_s: every start of elastic capacity pulls the serving or
        training image: CUDA images (vllm/vllm-openai, nvcr.io pytorch, tritonserver) are 8-12 GB
        compressed on their registries, 10 GB used; layers are decompressed on one core, ~200 MB/s
        (assumption), so ~50 s.
    model_load_bytes_per_s_default: weights are read from object storage at the host's network rate
        (hosts.csv network_bits_per_s / 8); 10 Gbit/s = 1.25 GB/s where the host row has no figure.
        The host's figure often counts a training fabric (EFA, InfiniBand) that does not reach object
        storage, so the rate is capped at ``object_store_bytes_per_s_max`` = 100 Gbit/s, the
        single-instance ceiling AWS quotes for S3 (S3 performance guidelines, "up to 100 Gb/s").
    capital_rate_per_year: cost of capital (the spec's ``budget.capital_rate_per_year``, default 0): owned
        servers pay ``rate / 12`` a month on the cash still tied up in them (their book value), as a
        company's weighted cost of capital or a loan's interest would charge (``capital_usd``).
    dual_run_validation_months: switching from today's platform (``current:``), the old platform keeps
        running this long after the port while the new one is validated under real traffic, as the
        rollback path: one monthly billing cycle (assumption, ``search.current``).
    """

    headroom_fraction: float = 0.20
    spot_checkpoint_interval_s: float = 30 * SECONDS_PER_MINUTE
    spot_restart_s: float = 10 * SECONDS_PER_MINUTE
    spot_interruptions_per_hour_default: float = 1.0 / 24.0
    spot_realtime_floor_replicas: int = 1
    accel_idle_power_fraction: float = 0.10
    bytes_per_output_token: float = 8.0
    hours_per_engineer_week: float = 40.0
    storage_retained_checkpoints: int = 3
    onprem_life_years: float = 4.0
    onprem_residual_fraction: float = 0.10
    onprem_resale_haircut_fraction: float = 0.20
    image_bytes: float = 10e9
    image_pull_bytes_per_s: float = 200e6
    model_load_bytes_per_s_default: float = 1.25e9
    object_store_bytes_per_s_max: float = 12.5e9
    dual_run_validation_months: float = 1.0
    capital_rate_per_year: float = 0.0

    def __post_init__(self) -> None:
        checks = {
            "headroom_fraction": self.headroom_fraction >= 0,
            "spot_checkpoint_interval_s": self.spot_checkpoint_interval_s >= 0,
            "spot_restart_s": self.spot_restart_s >= 0,
            "spot_interruptions_per_hour_default": self.spot_interruptions_per_hour_default >= 0,
            "spot_realtime_floor_replicas": self.spot_realtime_floor_replicas >= 0,
            "accel_idle_power_fraction": 0 <= self.accel_idle_power_fraction <= 1,
            "bytes_per_output_token": self.bytes_per_output_token >= 0,
            "hours_per_engineer_week": self.hours_per_engineer_week > 0,
            "storage_retained_checkpoints": self.storage_retained_checkpoints >= 0,
            "onprem_life_years": self.onprem_life_years > 0,
            "onprem_residual_fraction": 0 <= self.onprem_residual_fraction < 1,
            "onprem_resale_haircut_fraction": 0 <= self.onprem_resale_haircut_fraction <= 1,
            "capital_rate_per_year": 0 <= self.capital_rate_per_year <= 1,
            "image_bytes": self.image_bytes >= 0,
            "image_pull_bytes_per_s": self.image_pull_bytes_per_s > 0,
            "model_load_bytes_per_s_default": self.model_load_bytes_per_s_default > 0,
            "object_store_bytes_per_s_max": self.object_store_bytes_per_s_max > 0,
            "dual_run_validation_months": self.dual_run_validation_months >= 0,
        }
        for name, ok in checks.items():
            if not ok:
                raise InputError(
                    f"cost parameter {name} is out of range (got {getattr(self, name)!r})",
                    fix=f"give {name} a non-negative value (fractions between 0 and 1)",
                )

    @property
    def spot_lost_hours_per_interruption(self) -> float:
        """Expected work lost per interruption, hours: checkpoint_interval / 2 + restart."""
        return (self.spot_checkpoint_interval_s / 2 + self.spot_restart_s) / SECONDS_PER_HOUR
