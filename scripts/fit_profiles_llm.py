"""Fit the llm efficiency profiles from the project's calibration sets (``infrafit.perf.fit.llm``).

Run from a checkout: ``.venv/bin/python scripts/fit_profiles_llm.py --help``.
"""

import sys

from infrafit.perf import fit_llm_profiles

if __name__ == "__main__":
    sys.exit(fit_llm_profiles(sys.argv[1:]))
