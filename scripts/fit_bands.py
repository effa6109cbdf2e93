"""Fit the uncertainty bands from the project's calibration sets (``infrafit.perf.fit.bands``).

Run from a checkout: ``.venv/bin/python scripts/fit_bands.py --help``.
"""

import sys

from infrafit.perf import fit_bands

if __name__ == "__main__":
    sys.exit(fit_bands(sys.argv[1:]))
