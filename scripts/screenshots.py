"""Render the example reports in headless Chromium and save PNGs into docs/img/ (``make screenshots``).

Needs Debian's ``chromium`` package (``apt-get install chromium``); the reports are self-contained HTML
(plotly inline), so nothing is fetched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("chatbot-asia", "jax-pretraining")
WINDOW = "1200,2600"


def browser() -> str | None:
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def render(example: str, out_dir: Path, chrome: str) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / f"{example}.html"
        subprocess.run([sys.executable, "-m", "infrafit", "plan", str(ROOT / "examples" / f"{example}.yaml"),
                        "--report", str(report)], check=True, capture_output=True)
        png = out_dir / f"report-{example}.png"
        subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={WINDOW}", "--virtual-time-budget=5000", f"--screenshot={png}",
                        report.as_uri()], check=True, capture_output=True, timeout=120)
    return png


def main() -> int:
    chrome = browser()
    if chrome is None:
        print("error: no Chromium found. To fix: apt-get install chromium", file=sys.stderr)
        return 2
    out = ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    for example in EXAMPLES:
        print(f"wrote {render(example, out, chrome)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
