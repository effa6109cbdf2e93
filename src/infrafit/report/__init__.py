"""infrafit.report."""
