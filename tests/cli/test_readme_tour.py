"""Every command line of the README tour runs as pasted (issue 17 point 4).

The tour runs in a scratch folder that links the repository's examples, benchmarks and tests, with the
results database there too; `python train.py` (the monitor line) gets a short script of that name. Lines
the README marks "needs network" are skipped: the build machine has none (their code is tested on
recorded files in tests/unit/test_catalog_refresh*.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


#: Lines of the tour that read a file an earlier line writes, and that earlier line (each test runs alone).
PREREQUISITES = {
    "diff base.json more.json": "infrafit plan examples/chatbot-asia.yaml --set inference.traffic.requests_per_s=6 "
                                "--json > more.json",
    "bench import tests/fixtures": "infrafit plan examples/chatbot-asia.yaml --set model=llama3.1-8b --json > "
                                   "chat8b.json",
    "validate --from-store": "infrafit plan examples/chatbot-asia.yaml --set model=llama3.1-8b --json > chat8b.json "
                             "&& infrafit bench import tests/fixtures/loadtests/vllm_bench_serve.json "
                             "--option-from chat8b.json",
    "catalog diff builtin my-prices": "infrafit catalog refresh --format skypilot --from "
                                      "tests/fixtures/refresh/skypilot --out my-prices",
}


def tour_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## A tour", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = []
    for raw in block.strip().splitlines():
        command = re.split(r"\s{2,}#", raw, maxsplit=1)[0].strip()
        if command and "needs network" not in raw:
            lines.append(command)
    return lines


def test_the_tour_has_the_main_commands():
    joined = "\n".join(tour_lines())
    for cmd in ("infrafit check", "infrafit plan", "infrafit estimate", "infrafit sweep", "infrafit diff",
                "infrafit catalog", "infrafit bench run", "infrafit monitor"):
        assert cmd in joined


@pytest.mark.parametrize("line", tour_lines())
def test_each_tour_line_runs_as_pasted(tmp_path, line):
    if "bench run" in line or "check-model" in line:
        pytest.importorskip("torch")
    for name in ("examples", "benchmarks", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "train.py").write_text("import time\ntime.sleep(0.5)\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "INFRAFIT_DB": str(tmp_path / "results.db"), "COLUMNS": "120"}
    for before, made_by in PREREQUISITES.items():  # a line that reads what an earlier line wrote
        if before in line:
            subprocess.run(["bash", "-c", made_by], cwd=tmp_path, env=env, check=True, capture_output=True)
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"


def test_the_readme_spec_is_the_example_file():
    """The README's full spec is examples/chatbot-asia.yaml with its defaults written out."""
    from infrafit.workload.spec import load_spec, parse_spec

    text = (ROOT / "README.md").read_text()
    block = re.search(r"uses every section.*?```yaml\n(.*?)```", text, re.S).group(1)
    readme = parse_spec(block, "README.md").resolved()
    example = load_spec(ROOT / "examples" / "chatbot-asia.yaml").resolved()
    assert readme == example
