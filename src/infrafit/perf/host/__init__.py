"""infrafit.perf.host: see docs/architecture.md."""
