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


def test_monitor_offer_gives_price(tmp_path, capsys):
    offer = "aws_p5_48xlarge_us_east_1_cloud_on_demand_20250701"
    code = main(["monitor", "--interval", "0.2", "--duration", "0.4", "--db", str(tmp_path / "m.db"),
                 "--offer", offer, "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["cost"]["usd_per_hour"] == 55.04


def test_monitor_unknown_offer_suggests(tmp_path, capsys):
    code = main(["monitor", "--duration", "0.2", "--db", str(tmp_path / "m.db"),
                 "--offer", "aws_p5_48xlarge_us_east_1_cloud_on_demand_2025070"])
    err = capsys.readouterr().err
    assert code == 2 and "did you mean" in err


def test_a_command_with_brackets_prints_as_written(tmp_path, capsys):
    """The summary printed the command through rich markup: `[sum(x) for x in y]` vanished as a style tag and
    `[/bold]` raised MarkupError (an internal error, exit 1)."""
    code = main(["monitor", "--interval", "0.2", "--db", str(tmp_path / "m.db"), "--", sys.executable, "-c",
                 "x = [sum(r) for r in [range(3)]]  # [/bold]"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "[sum(r) for r in [range(3)]]  # [/bold]" in out.out.replace("\n", "")
