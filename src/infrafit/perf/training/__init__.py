"""infrafit.perf.training: see docs/architecture.md."""
