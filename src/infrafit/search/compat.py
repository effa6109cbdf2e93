"""Framework and custom-op compatibility of each accelerator family, read from ``frameworks.csv``.

A family is refused when the user's framework has support ``none`` there. Anything else is allowed
at a one-time migration whose level and engineer-weeks come from ``cost.migration.migration_weeks``
(the one rule: table effort + ``CUSTOM_OP_PORT_WEEKS`` per custom CUDA op off NVIDIA + a dynamic-shape
allowance on per-shape compilers), priced by the cost model at ``ops.engineer_usd_per_hour``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FamilyCompat:
    family: str
    support: str  # first-class | supported | experimental | none (after custom ops)
    table_support: str  # the table's level for the framework alone
    porting_weeks: float  # one-time migration when not first-class for the user's code
    caveats: str
    confidence: str
    detail: str = ""  # cost.migration's reason, with its numbers

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


def family_compat(catalog, framework: str, families, custom_ops: tuple[str, ...],
                  dynamic_shapes: bool = False) -> dict[str, FamilyCompat]:
    """``{family: FamilyCompat}`` for ``families``: level and weeks from ``cost.migration.migration_weeks``
    (framework x family x custom ops x dynamic shapes), caveats and confidence from the table."""
    from infrafit.cost.migration import migration_weeks

    table = catalog.frameworks
    rows = table[table["framework"] == framework].set_index("family")
    out: dict[str, FamilyCompat] = {}
    for family in families:
        weeks, level, why = migration_weeks(catalog, framework, family, list(custom_ops), dynamic_shapes)
        if family in rows.index:
            row = rows.loc[family]
            table_level = str(row["support"])
            caveats = "" if str(row.get("caveats")) == "nan" else str(row.get("caveats") or "")
            confidence = str(row.get("confidence") or "")
        else:
            table_level, caveats, confidence = "none", "no entry in the frameworks table", "low"
        out[family] = FamilyCompat(family, level, table_level, 0.0 if level == "none" else float(weeks),
                                   caveats, confidence, why)
    return out
