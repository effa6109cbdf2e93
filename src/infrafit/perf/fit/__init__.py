"""infrafit.perf.fit: the profile fitters (run from a checkout; they read benchmarks/data)."""
