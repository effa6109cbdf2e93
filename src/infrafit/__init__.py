"""infrafit: plan, price and prove the infrastructure for an AI workload."""

__version__ = "0.1.0"
