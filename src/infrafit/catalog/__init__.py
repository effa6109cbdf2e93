"""infrafit.catalog."""
