"""infrafit.perf.validate: see docs/architecture.md."""
