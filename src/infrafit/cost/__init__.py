"""infrafit.cost."""
