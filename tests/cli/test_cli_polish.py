"""Small things a new user trips over (issue 17 point 4): no "nan" in `catalog show`, `--report` says
what it wrote, a missing optional extra is exit 2 naming the pip command, `make demo` says how to run."""

from __future__ import annotations

import sys
from pathlib import Path

from infrafit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_catalog_show_prints_no_nan(capsys):
    assert main(["catalog", "show", "nvidia_h100_sxm"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower().replace("nanosecond", "") and "(not stated)" in out


def test_report_says_what_it_wrote(tmp_path, capsys):
    report = tmp_path / "plan.md"
    assert main(["plan", str(ROOT / "examples" / "chatbot-asia.yaml"), "--report", str(report)]) == 0
    err = " ".join(capsys.readouterr().err.split())  # rich wraps stderr at 80 columns when piped
    assert f"wrote report {report} (" in err and report.exists()


def test_a_missing_extra_is_exit_2_with_the_pip_command(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["bench", "run", "llama3.1-8b", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'infrafit[bench]'" in err and "internal error" not in err


def test_the_demo_ends_by_saying_how_to_run_infrafit():
    assert ".venv/bin/infrafit" in (ROOT / "scripts" / "demo.sh").read_text()
