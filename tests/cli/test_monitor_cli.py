import json
import sys

from infrafit.cli import main


def test_monitor_command_json(tmp_path, capsys):
    code = main(["monitor", "--interval", "0.2", "--db", str(tmp_path / "m.db"), "--usd-per-hour", "3.5",
                 "--json", "--", sys.executable, "-c", "import time; time.sleep(1)"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["bottleneck"] == "idle"
    assert data["exit_code"] == 0
    assert data["cost"]["usd_per_hour"] == 3.5
    assert data["cost"]["run_usd"] > 0
    assert any("NVML" in n or "GPU" in n for n in data["notes"])  # no GPU here: CPU-only with a note


def test_monitor_missing_pid_is_input_error(tmp_path, capsys):
    code = main(["monitor", "--pid", "999999999", "--db", str(tmp_path / "m.db")])
    err = capsys.readouterr().err
    assert code == 2
    assert "To fix:" in err and "Traceback" not in err


def test_monitor_missing_command_is_input_error(tmp_path, capsys):
    code = main(["monitor", "--db", str(tmp_path / "m.db"), "--", "/no/such/binary"])
    assert code == 2
    assert "To fix:" in capsys.readouterr().err


def test_monitor_duration_on_machine(tmp_path, capsys):
    code = main(["monitor", "--interval", "0.2", "--duration", "0.6", "--db", str(tmp_path / "m.db"), "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["target"] == "machine"
