"""infrafit.workload."""
