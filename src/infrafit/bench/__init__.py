"""infrafit.bench."""
