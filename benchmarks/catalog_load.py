"""Time to load and validate the whole built-in catalog (target: under 150 ms).

Usage: python benchmarks/catalog_load.py [--repeat N]
Prints the import time of pandas (paid once per process by any command that uses the catalog),
the cold load (parse + validate every CSV) and the cached load.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    t0 = time.perf_counter()
    import pandas  # noqa: F401

    import infrafit.catalog as catalog

    imported = time.perf_counter() - t0
    cold = []
    for _ in range(args.repeat):
        catalog.clear_cache()
        t = time.perf_counter()
        cat = catalog.load_catalog(overlay_dir="")
        cold.append(time.perf_counter() - t)
    t = time.perf_counter()
    catalog.load_catalog(overlay_dir="")
    warm = time.perf_counter() - t
    rows = sum(len(f) for f in cat.tables.values())
    print(f"tables {len(cat.tables)}, rows {rows}")
    print(f"import pandas + infrafit.catalog: {imported * 1e3:.0f} ms")
    print(f"cold load (parse + validate), median of {args.repeat}: {statistics.median(cold) * 1e3:.1f} ms "
          f"(min {min(cold) * 1e3:.1f}, max {max(cold) * 1e3:.1f})")
    print(f"cached load: {warm * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
