"""infrafit.perf.llm: see docs/architecture.md."""
