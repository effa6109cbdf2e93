"""infrafit.perf.nonllm: see docs/architecture.md."""
