"""infrafit.perf."""
