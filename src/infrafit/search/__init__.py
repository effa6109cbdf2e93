"""infrafit.search."""
