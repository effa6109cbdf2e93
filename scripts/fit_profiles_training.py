"""Fit the training efficiency profiles from the project's calibration sets (``infrafit.perf.fit.training``).

Run from a checkout: ``.venv/bin/python scripts/fit_profiles_training.py --help``.
"""

import sys

from infrafit.perf import fit_training_profiles

if __name__ == "__main__":
    sys.exit(fit_training_profiles(sys.argv[1:]))
