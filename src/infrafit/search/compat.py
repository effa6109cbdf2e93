"""Framework and custom-op compatibility of each accelerator family, read from ``frameworks.csv``.

A family is refused when the user's framework has support ``none`` there. ``experimental`` (and
``supported`` with custom ops off NVIDIA) is allowed but costs a one-time migration: the table's
``porting_effort_engineer_weeks`` plus ``CUSTOM_OP_PORT_WEEKS`` for each custom CUDA op (the op must
be rewritten, e.g. in HIP, Pallas or NKI), priced by the cost model at ``ops.engineer_usd_per_hour``.
Custom CUDA ops run unchanged only on NVIDIA, so they never downgrade an NVIDIA family.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Engineer-weeks to rewrite one custom CUDA op for another backend (write, test, tune one kernel).
#: infrafit engineering judgement, not a measured figure; the same order as the frameworks table's
#: per-family porting efforts (docs/planner.md).
CUSTOM_OP_PORT_WEEKS = 1.0
_RANK = {"first-class": 0, "supported": 1, "experimental": 2, "none": 3}


@dataclass(frozen=True)
class FamilyCompat:
    family: str
    support: str  # first-class | supported | experimental | none (after custom ops)
    table_support: str  # the table's level for the framework alone
    porting_weeks: float  # one-time migration when not first-class for the user's code
    caveats: str
    confidence: str

    @property
    def allowed(self) -> bool:
        return self.support != "none"

    def reason(self, framework: str, custom_ops: tuple[str, ...]) -> str:
        """One line on why the family is refused or what porting it takes (numbers included)."""
        what = f"{_framework_name(framework)}" + (" with custom CUDA ops" if custom_ops else "")
        if self.support == "none":
            extra = f" ({self.caveats})" if self.caveats else ""
            return f"{what} is not supported there{extra}"
        return f"{what} is {self.support} there; about {self.porting_weeks:g} engineer-weeks to port"


def _framework_name(framework: str) -> str:
    return {"pytorch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "onnx": "ONNX",
            "sklearn": "scikit-learn", "xgboost": "XGBoost"}.get(framework, framework)


def family_compat(frameworks, framework: str, families, vendor_of: dict[str, str],
                  custom_ops: tuple[str, ...]) -> dict[str, FamilyCompat]:
    """``{family: FamilyCompat}`` for ``families`` given the frameworks table (a DataFrame)."""
    rows = frameworks[frameworks["framework"] == framework].set_index("family")
    out: dict[str, FamilyCompat] = {}
    for family in families:
        if family in rows.index:
            row = rows.loc[family]
            level, weeks = str(row["support"]), float(row["porting_effort_engineer_weeks"])
            caveats, confidence = str(row.get("caveats") or ""), str(row.get("confidence") or "")
        else:
            level, weeks, caveats, confidence = "none", 0.0, "no entry in the frameworks table", "low"
        level = "none" if caveats == "nan" and level == "none" else level
        caveats = "" if caveats == "nan" else caveats
        support = level
        if level != "first-class":
            weeks = max(weeks, 0.0)
        else:
            weeks = 0.0
        if custom_ops and vendor_of.get(family) != "NVIDIA" and level != "none":
            support = "experimental" if _RANK[level] < _RANK["experimental"] else level
            weeks += CUSTOM_OP_PORT_WEEKS * len(custom_ops)
        out[family] = FamilyCompat(family, support, level, weeks, caveats, confidence)
    return out
