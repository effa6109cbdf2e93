"""The HTML report renders in a real browser (issue 17 point 5): every plotly figure is drawn and no
script error is logged. Skipped without Chromium (Debian's ``chromium`` package)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from infrafit.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHROME = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.skipif(CHROME is None, reason="needs Chromium (apt-get install chromium)")
@pytest.mark.parametrize("example", ["chatbot-asia", "jax-pretraining"])
def test_every_figure_renders_without_script_errors(tmp_path, example, capsys):
    report = tmp_path / "report.html"
    assert main(["plan", str(ROOT / "examples" / f"{example}.yaml"), "--report", str(report)]) == 0
    capsys.readouterr()
    figures = report.read_text().count('class="plotly-graph-div"')
    assert figures >= 3
    done = subprocess.run([CHROME, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", report.as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert dom.count('class="main-svg"') >= figures  # plotly drew an svg for every figure
    assert "Recommended:" in dom
    errors = [line for line in done.stderr.splitlines() if "Uncaught" in line or "CONSOLE(" in line and "rror" in line]
    assert not errors, errors[:5]
