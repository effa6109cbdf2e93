"""``infrafit check`` in-process: exit codes, stdout/stderr split, JSON, every example, hostile files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infrafit.cli import main

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
FIXTURES = ROOT / "tests" / "fixtures" / "specs"


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.name)
def test_every_example_passes(spec, capsys):
    assert main(["check", str(spec)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("OK ") and out.err == ""


def test_explain_marks_defaults(capsys):
    assert main(["check", str(FIXTURES / "minimal-inference.yaml"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "framework: pytorch  # default" in out
    assert "name: minimal-inference  # default" in out
    assert "requests_per_s: 5\n" in out  # given by the user: no marker


def test_json_is_the_resolved_spec(capsys):
    assert main(["check", str(EXAMPLES[0]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"name", "task", "model", "framework", "custom_ops", "dynamic_shapes", "precision",
                         "inference", "training", "usage", "growth", "placement", "deployment", "budget",
                         "horizon_months", "ops"}


def test_json_hybrid_example_has_both_parts(capsys):
    assert main(["check", str(ROOT / "examples" / "train-here-serve-there.yaml"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["training"]["method"] == "lora" and data["inference"]["mode"] == "realtime"
    assert "hybrid" in data["deployment"]["allowed"]


def test_invalid_spec_lists_every_problem_and_exits_2(capsys):
    assert main(["check", str(FIXTURES / "many-problems.yaml")]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert "Traceback" not in out.err
    assert out.err.count("To fix:") >= 8
    assert "many-problems.yaml:4 framework" in out.err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty"),
        (b"- a\n- b\n", "not a mapping"),
        (b"name: x\nmodel: caf\xe9\n", "not UTF-8"),
        (b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
            b"a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a" if i == 1 else b"*a%d" % (i - 1)] * 10))
            for i in range(1, 9)), "alias bomb"),
        (b"a: " + b"[" * 3000 + b"]" * 3000, "nested"),
        (b"task: inference\nhorizon_months: 1e400\n", "horizon_months"),
        (b"a: !!python/object/apply:os.system [echo]\n", "not allowed"),
    ],
)
def test_hostile_files_exit_2_without_traceback(tmp_path, capsys, content, expected):
    spec = tmp_path / "hostile.yaml"
    spec.write_bytes(content)
    assert main(["check", str(spec)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and "To fix:" in err


def test_missing_file_and_directory(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["check", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_debug_shows_traceback(capsys, monkeypatch):
    monkeypatch.setenv("INFRAFIT_DEBUG", "0")  # restored after the test: --debug sets it to 1
    assert main(["--debug", "check", str(FIXTURES / "many-problems.yaml")]) == 2
    assert "Traceback" in capsys.readouterr().err
