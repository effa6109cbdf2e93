"""The sections of a workload spec: inference, training, usage, growth, placement, deployment,
budget, ops, and the model reference. Each is a frozen pydantic model that forbids unknown keys.

A field the user did not write keeps its default; defaults that depend on other fields are filled
in by ``model_validator(mode="after")`` with ``object.__setattr__`` so that they stay out of
``model_fields_set``. ``Workload.explain()`` relies on that to mark every default.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from infrafit import units
from infrafit.workload import spec_types as t


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    def _fill(self, name: str, value: Any) -> None:
        """Set a derived default without marking the field as given by the user."""
        object.__setattr__(self, name, value)


# --- model --------------------------------------------------------------------------------------
def _model_ref(value: Any) -> Any:
    return {"preset": value} if isinstance(value, str) else value


class ModelRef(Section):
    """Which model: a library id or Hugging Face id (``preset``), a ``config.json`` path, or an
    inline architecture with Hugging Face ``config.json`` field names."""

    preset: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    config: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    architecture: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ModelRef:
        given = [n for n in ("preset", "config", "architecture") if getattr(self, n) is not None]
        if len(given) != 1:
            got = ", ".join(given) or "none"
            raise t.invalid(f"model needs exactly one of preset, config or architecture (got {got})",
                            "write `model: llama3.1-70b`, `model: {config: path/to/config.json}` or "
                            "`model: {architecture: {...}}`")
        return self

    def display(self) -> Any:
        if self.preset is not None:
            return self.preset
        return {"config": self.config} if self.config is not None else {"architecture": self.architecture}


ModelField = Annotated[ModelRef, BeforeValidator(_model_ref)]


# --- inference ----------------------------------------------------------------------------------
def _token_stats(value: Any) -> Any:
    return value if isinstance(value, dict) else {"mean": value}


class TokenStats(Section):
    """Tokens per request: the mean and the 99th percentile (p99 = mean when only a number is given)."""

    mean: t.TokenCount
    p99: t.TokenCount | None = None

    @model_validator(mode="after")
    def _p99(self) -> TokenStats:
        if self.p99 is None:
            self._fill("p99", self.mean)
        elif self.p99 < self.mean:
            raise t.invalid(f"p99 ({self.p99:g}) is below the mean ({self.mean:g})",
                            "a p99 is at least the mean: raise p99 or lower mean", at="p99")
        return self


TokenField = Annotated[TokenStats, BeforeValidator(_token_stats)]


class Items(Section):
    """Non-LLM or batch work: items per day, processed within a window of hours each day."""

    per_day: t.ItemCount
    window_hours: t.WindowHours = 24.0


class Prefix(Section):
    """Prompt tokens every request shares (a system prompt, few-shot examples, a document many questions
    ask about), kept by the serving stack's prefix cache (vLLM automatic prefix caching, SGLang
    RadixAttention, TensorRT-LLM KV reuse): ``shared_tokens`` of each prompt are the shared part and
    ``hit_rate`` the fraction of requests that find it cached. A hit skips their prefill and stores
    their KV once for all sequences."""

    shared_tokens: t.SharedTokens
    hit_rate: t.Fraction = 1.0


class Traffic(Section):
    requests_per_s: t.RequestRate | None = None
    peak_requests_per_s: t.RequestRate | None = None
    daily_profile: Annotated[str | tuple[float, ...], BeforeValidator(t.parse_daily_profile)] = "flat"
    input_tokens: TokenField | None = None
    output_tokens: TokenField | None = None
    items: Items | None = None
    #: true when each request opens a new connection (no keep-alive or HTTP/2 reuse): the client then
    #: also waits for the TCP handshake and the TLS 1.3 handshake, one round trip each
    new_connection_per_request: bool = False
    prefix: Prefix | None = None

    def daily_factors(self) -> tuple[float, ...]:
        """24 hourly factors of the average rate (their mean is 1): rate(h) = requests_per_s x f[h]."""
        from infrafit.cost.usage import daily_shape  # one definition of the named shapes, shared with cost

        raw = [float(f) for f in daily_shape(self.daily_profile)]
        mean = sum(raw) / len(raw)
        return tuple(f / mean for f in raw)

    @model_validator(mode="after")
    def _peak(self) -> Traffic:
        if self.requests_per_s is None:
            return self
        if self.peak_requests_per_s is None:
            self._fill("peak_requests_per_s", self.requests_per_s * max(self.daily_factors()))
        elif self.peak_requests_per_s < self.requests_per_s:
            raise t.invalid(
                f"peak_requests_per_s ({self.peak_requests_per_s:g}) is below requests_per_s ({self.requests_per_s:g})",
                "the peak is at least the average: raise peak_requests_per_s, "
                "or drop it to derive it from daily_profile",
                at="peak_requests_per_s",
            )
        return self


class Slo(Section):
    """99th-percentile latency targets in seconds; a missing one means no constraint. ``measured_at``:
    ``client`` (the default when ``placement.users_in`` is given) adds the network round trip from
    each user place to TTFT, end-to-end and per-request latency; ``server`` checks them at the server.
    ``risk``: where in the prediction's uncertainty band the limits are checked (``perf.bands``): ``p90``
    (default) passes a configuration only when the band's 90th percentile is within each limit, ``p50``
    when the prediction itself is."""

    ttft_p99_s: t.Seconds | None = None
    tpot_p99_s: t.Seconds | None = None
    e2e_p99_s: t.Seconds | None = None
    latency_p99_s: t.Seconds | None = None
    measured_at: Literal["client", "server"] | None = None
    risk: Literal["p50", "p90"] = "p90"


class Speculative(Section):
    """Speculative decoding: a cheap drafter proposes ``tokens`` tokens per step and the model verifies
    them in one forward pass, each accepted with probability ``acceptance_rate`` (Leviathan et al., ICML
    2023). ``method``: ``draft_model`` (a smaller model of the same tokenizer, ``draft_model`` names it),
    ``mtp`` (multi-token-prediction heads, DeepSeek-V3), ``eagle`` (EAGLE's one-layer draft head), ``ngram``
    (prompt lookup: no model)."""

    method: Literal["draft_model", "mtp", "eagle", "ngram"]
    draft_model: str | None = None
    tokens: Annotated[int, Field(ge=1, le=16)] = 3
    acceptance_rate: Annotated[float, Field(gt=0, lt=1)] = 0.7

    @model_validator(mode="after")
    def _draft(self) -> Speculative:
        if self.method == "draft_model" and not self.draft_model:
            raise t.invalid("method draft_model needs draft_model", "name the draft model "
                            "(e.g. draft_model: llama3.2-1b), or use method mtp, eagle or ngram", at="draft_model")
        if self.method != "draft_model" and self.draft_model:
            raise t.invalid(f"draft_model is read with method draft_model, not {self.method}",
                            "set method: draft_model, or drop draft_model", at="draft_model")
        return self


class Inference(Section):
    mode: Literal["realtime", "batch", "edge", "mixed"] = "realtime"
    traffic: Traffic
    slo: Slo = Slo()
    speculative: Speculative | None = None


# --- training -----------------------------------------------------------------------------------
class Dataset(Section):
    size_bytes: t.Bytes | None = None
    location: Literal["object-storage", "nvme", "network-fs"] = "object-storage"
    samples: t.TrainSamples | None = None


class Training(Section):
    """How much to train (exactly one of tokens, samples, or epochs over dataset.samples) and how."""

    tokens: t.TrainTokens | None = None
    samples: t.TrainSamples | None = None
    epochs: t.Epochs | None = None
    #: the usual sample length; a model with a shorter context trains at its context
    #: (``spec_checks.default_seq_len``)
    seq_len: t.SeqLen = t.TRAINING_SEQ_LEN_DEFAULT
    global_batch: t.GlobalBatch | None = None
    deadline_days: t.Days | None = None
    checkpoint_every_minutes: t.Minutes = 60.0
    dataset: Dataset = Dataset()
    method: Literal["full", "lora", "qlora"] = "full"
    lora_rank: t.LoraRank | None = None
    #: Where in the time-to-train uncertainty band the deadline is checked (``perf.bands``): ``p90``
    #: (default) keeps a configuration only when the band's 90th percentile finishes by the deadline.
    risk: Literal["p50", "p90"] = "p90"

    @model_validator(mode="after")
    def _amount_and_method(self) -> Training:
        given = [n for n in ("tokens", "samples", "epochs") if getattr(self, n) is not None]
        if len(given) != 1:
            got = ", ".join(given) or "none"
            raise t.invalid(f"training needs exactly one of tokens, samples or epochs (got {got})",
                            "keep one, e.g. `tokens: 1e12`, `samples: 1e6`, or `epochs: 3` with dataset.samples")
        if self.epochs is not None and self.dataset.samples is None:
            raise t.invalid("epochs needs dataset.samples (how many samples one epoch is)",
                            "add `dataset: {samples: 100000}` under training", at="epochs")
        if self.lora_rank is not None and self.method == "full":
            raise t.invalid("lora_rank is set but method is full", "set method: lora or qlora, or remove lora_rank",
                            at="lora_rank")
        if self.lora_rank is None and self.method != "full":
            self._fill("lora_rank", 16)
        return self

    @property
    def total_samples(self) -> float:
        """Sequences to process: samples, epochs x dataset.samples, or tokens / seq_len."""
        if self.samples is not None:
            return self.samples
        if self.epochs is not None:
            return self.epochs * (self.dataset.samples or 0.0)
        return (self.tokens or 0.0) / self.seq_len

    @property
    def total_tokens(self) -> float:
        """Tokens to process: tokens, or samples x seq_len (sequences are packed to seq_len)."""
        return self.tokens if self.tokens is not None else self.total_samples * self.seq_len

    @property
    def deadline_s(self) -> float | None:
        return None if self.deadline_days is None else self.deadline_days * units.SECONDS_PER_DAY

    @property
    def checkpoint_every_s(self) -> float:
        return self.checkpoint_every_minutes * units.SECONDS_PER_MINUTE


# --- usage, growth, placement, deployment, budget, ops -------------------------------------------
#: Weekday business hours per month: 10 h x 5 days x 52 weeks / 12 months.
BUSINESS_HOURS_PER_MONTH = 10 * 5 * 52 / units.MONTHS_PER_YEAR
#: The most hours any month has (31 days).
MAX_HOURS_IN_MONTH = 31 * units.HOURS_PER_DAY


class Usage(Section):
    """When the workload runs. ``active_hours_per_month`` is resolved for continuous and
    business-hours use; periodic and occasional work gives it or ``runs_per_year``."""

    pattern: Literal["continuous", "business-hours", "periodic", "occasional"] = "continuous"
    active_hours_per_month: t.MonthHours | None = None
    runs_per_year: t.RunsPerYear | None = None

    @model_validator(mode="after")
    def _hours(self) -> Usage:
        hours = self.active_hours_per_month
        if hours is not None and hours > MAX_HOURS_IN_MONTH:
            raise t.invalid(f"active_hours_per_month {hours:g} is more than a month has ({MAX_HOURS_IN_MONTH:g} h)",
                            "use at most 744; round-the-clock use is about 730 h a month",
                            at="active_hours_per_month")
        if self.pattern == "business-hours" and hours is not None and hours > BUSINESS_HOURS_PER_MONTH * 1.5:
            raise t.invalid(f"business-hours usage with {hours:g} active hours a month is not business hours "
                            f"(about {BUSINESS_HOURS_PER_MONTH:.0f} h)", "use pattern: continuous, or fewer hours",
                            at="active_hours_per_month")
        if hours is None and self.pattern == "continuous":
            self._fill("active_hours_per_month", units.HOURS_PER_MONTH)
        elif hours is None and self.pattern == "business-hours":
            self._fill("active_hours_per_month", BUSINESS_HOURS_PER_MONTH)
        return self


class Growth(Section):
    traffic_per_month: t.MonthlyFraction = 0.0
    data_per_month: t.MonthlyFraction = 0.0


class Placement(Section):
    """Where data and compute may live (empty = anywhere) and where the users are.

    ``regions`` are region ids or metro names as the catalog spells them (``hong-kong``,
    ``us-east-1``); ``countries`` are ISO 3166-1 alpha-2 codes, the robust residency constraint;
    ``users_in`` takes either; ``training_regions`` narrows where a train-then-serve workload trains."""

    regions: t.SlugList = ()
    countries: t.CountryList = ()
    users_in: t.PlaceList = ()
    #: each ``users_in`` place's share of the requests (written as ``users_in: [{place, share}]``;
    #: places given by name alone share what the written shares leave, equally)
    users_share: tuple[Annotated[float, Field(gt=0, le=1)], ...] = ()
    training_regions: t.SlugList = ()

    @model_validator(mode="before")
    @classmethod
    def _user_shares(cls, data: Any) -> Any:
        """``users_in`` entries may be ``{place, share}``: split them into the two fields."""
        if not isinstance(data, dict) or not isinstance(data.get("users_in"), list | tuple):
            return data
        entries = list(data["users_in"])
        if not any(isinstance(e, dict) for e in entries):
            return data
        places, shares = [], []
        for i, e in enumerate(entries):
            if isinstance(e, dict):
                unknown = set(e) - {"place", "share"}
                if unknown or "place" not in e:
                    raise t.invalid(f"users_in[{i}]: write {{place: NAME, share: FRACTION}} (got {sorted(e)})",
                                    "give each entry a place and, optionally, its share of the requests (0-1)")
                places.append(e["place"])
                shares.append(e.get("share"))
            else:
                places.append(e)
                shares.append(None)
        return {**data, "users_in": places, "users_share": _fill_shares(shares)}

    @model_validator(mode="after")
    def _shares_align(self) -> Placement:
        if self.users_share and len(self.users_share) != len(self.users_in):
            raise t.invalid("users_in: a place is listed twice, or users_share does not match users_in",
                            "list each place once, with its share")
        return self

    def user_places(self) -> tuple[tuple[str, float], ...]:
        """(place, share of requests) for every ``users_in`` place; equal shares when none were written."""
        if not self.users_in:
            return ()
        shares = self.users_share or tuple(1.0 / len(self.users_in) for _ in self.users_in)
        return tuple(zip(self.users_in, shares, strict=True))


def _fill_shares(shares: list[Any]) -> list[float]:
    """Written shares kept; the places without one split what is left equally (refused when the
    written shares exceed 1 or leave nothing for them)."""
    given = [float(x) for x in shares if x is not None]
    if any(not 0 < x <= 1 for x in given):
        raise t.invalid("users_in: a share must be a fraction in (0, 1]", "write shares like 0.6 and 0.4")
    left, blanks = 1.0 - sum(given), shares.count(None)
    if left < -1e-9 or (blanks and left <= 1e-9):
        raise t.invalid(f"users_in: the shares add up to {sum(given):g}",
                        "make the written shares add up to at most 1 (exactly 1 when every place has one)")
    return [float(x) if x is not None else left / blanks for x in shares]


DeploymentKind = Literal["cloud", "dedicated", "on_prem", "hybrid"]
#: What ``deployment.require`` may ask of a provider (the catalog's providers.csv answers each;
#: ``confidential_computing`` is answered per accelerator).
Requirement = Literal["soc2", "iso27001", "hipaa", "pci_dss", "gdpr", "c5", "ismap", "mtcs", "support_24x7",
                      "china_optimized_network", "bgp_multihoming", "custom_builds", "confidential_computing"]


class Owned(Section):
    """Hardware the team already has: ``count`` accelerators of ``accelerator`` in servers like
    ``host`` (a hosts.csv id; default: the catalog's server build for that accelerator) at ``place``
    (an on-prem site or region; default the plan's on-prem site). Priced at power, colocation and
    operations only: the purchase is sunk."""

    accelerator: Annotated[str, Field(min_length=1, max_length=100)]
    count: Annotated[int, Field(ge=1, le=1_000_000)]
    host: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    place: t.Place | None = None


class Deployment(Section):
    allowed: Annotated[tuple[DeploymentKind, ...], Field(min_length=1)] = ("cloud", "dedicated", "on_prem")
    exclude_providers: Annotated[tuple[t.Provider, ...], Field(max_length=200)] = ()
    billing: Literal["pay_per_use", "prefer_fixed_monthly"] = "pay_per_use"
    portability_required: bool = False
    managed_preferred: bool = False
    owned: Annotated[tuple[Owned, ...], Field(max_length=50)] = ()
    #: Qualities every option's provider must be known to have (providers.csv); unknown excludes.
    require: Annotated[tuple[Requirement, ...], Field(max_length=13)] = ()
    #: What the team's own facility meets, for on-prem purchases and owned hardware (the catalog cannot know).
    own_facility_meets: Annotated[tuple[Requirement, ...], Field(max_length=13)] = ()


class Workflow(Section):
    """How often the model changes (``cost.workflow``): each change repays the porting of a not-first-class
    accelerator or stack, and a change that needs other hardware strands what is committed. The rates
    default to the maturity's row of ``workflow_maturity.csv``."""

    maturity: Literal["exploring", "evolving", "stable"] = "stable"
    model_changes_per_year: Annotated[float, Field(ge=0, le=52)] | None = None
    new_hardware_share: Annotated[float, Field(ge=0, le=1)] | None = None


CurrentMode = Literal["cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly",
                      "on_prem"]


class Current(Section):
    """What runs the workload today (``search.current``): ``count`` accelerators of ``accelerator`` in
    servers like ``host`` (a hosts.csv id; default the catalog's instance of that accelerator whose size
    divides ``count``) at ``provider``, bought as ``mode``, costing ``monthly_usd`` a month all in
    (compute, storage, network). Adds "stay as is" to the plan and a switch plan to every other option."""

    accelerator: Annotated[str, Field(min_length=1, max_length=100)]
    count: Annotated[int, Field(ge=1, le=1_000_000)]
    monthly_usd: t.Usd
    mode: CurrentMode = "cloud_on_demand"
    provider: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    host: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    region: t.Place | None = None
    framework: Literal["pytorch", "tensorflow", "jax", "onnx", "sklearn", "xgboost"] | None = None
    #: Months still committed on today's platform (a reservation or contract): paid whether you switch or not.
    contract_months_left: Annotated[int, Field(ge=0, le=120)] = 0
    #: Today's fleet serves today's load within the SLOs (a fact the team knows): "stay" is then sized from it,
    #: today's replicas in month 1 and more only as the load grows (``search.current``), not from the model.
    meets_slos: bool = False


_HardwareName = Annotated[str, Field(min_length=1, max_length=100)]


class Hardware(Section):
    """Which accelerators the plan may use. ``vendors``, ``families`` and ``accelerators`` (ids or
    aliases) keep only what they name (each list, when given, must match); ``exclude`` removes
    accelerators or families by name. Names are checked against the catalog."""

    vendors: Annotated[tuple[_HardwareName, ...], Field(max_length=50)] = ()
    families: Annotated[tuple[_HardwareName, ...], Field(max_length=100)] = ()
    accelerators: Annotated[tuple[_HardwareName, ...], Field(max_length=500)] = ()
    exclude: Annotated[tuple[_HardwareName, ...], Field(max_length=500)] = ()


class Availability(Section):
    """How much failure realtime serving must ride through. ``min_replicas``: replicas held whenever the
    service is active, whatever the load (N+1 is ``min_replicas: 2``); ``zones``: replicas spread over
    that many zones, sized so that losing any one zone still carries the peak with headroom
    (``cost.capacity_plan.zone_replicas``)."""

    min_replicas: Annotated[int, Field(ge=1, le=1000)] = 1
    zones: Annotated[int, Field(ge=1, le=6)] = 1


class Budget(Section):
    """Limits on what the plan may cost. By default they hold the infrastructure (compute, storage,
    egress, power, colocation, maintenance, migration and setup); ``include_labour: true`` counts the
    modelled ops labour against them too."""

    monthly_usd: t.Usd | None = None
    total_usd: t.Usd | None = None
    include_labour: bool = False
    #: the company's cost of capital (or a loan's rate): owned servers pay it on the cash still tied up in
    #: them, so buying carries what the money would earn or cost elsewhere (0: not charged)
    capital_rate_per_year: t.Fraction = 0.0


#: Default loaded cost of an engineer-hour: US BLS median pay of software developers, $63.59/h
#: (Occupational Outlook Handbook, May 2023), times ~1.5 for benefits and overhead, rounded.
DEFAULT_ENGINEER_USD_PER_HOUR = 100.0


class Ops(Section):
    engineer_usd_per_hour: t.UsdPerHour = DEFAULT_ENGINEER_USD_PER_HOUR
    familiar_stacks: Annotated[tuple[t.Slug, ...], Field(max_length=100)] = ()
