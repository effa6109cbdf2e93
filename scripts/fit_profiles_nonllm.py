"""Fit the nonllm efficiency profiles from the project's calibration sets (``infrafit.perf.fit.nonllm``).

Run from a checkout: ``.venv/bin/python scripts/fit_profiles_nonllm.py --help``.
"""

import sys

from infrafit.perf import fit_nonllm_profiles

if __name__ == "__main__":
    sys.exit(fit_nonllm_profiles(sys.argv[1:]))
