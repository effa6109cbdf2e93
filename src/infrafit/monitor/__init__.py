"""infrafit.monitor."""
