from pathlib import Path

from infrafit import __version__
from infrafit.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_help(capsys):
    assert main(["--help"]) == 0
    assert "infrafit" in capsys.readouterr().out


def test_unknown_option_is_usage_error(capsys):
    assert main(["--no-such-flag"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def _leaves(command, path):
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _leaves(sub, [*path, name])
    else:
        yield path, command


def test_every_command_option_and_argument_has_help():
    """`--help` is how users learn the flags: a bare '--provider <str>' or '--seq-len <int>' tells nothing."""
    import typer

    from infrafit.cli import app

    missing = []
    for path, command in _leaves(typer.main.get_command(app), ["infrafit"]):
        if not command.help:
            missing.append(" ".join(path))
        missing += [f"{' '.join(path)} {p.opts[0] if p.opts else p.name}" for p in command.params
                    if p.name != "help" and not getattr(p, "help", None)]
    assert not missing, missing


def test_a_reader_that_closes_the_pipe_early_is_no_error():
    """`infrafit plan SPEC | head -1`: the table's reader goes away mid-output. rich then exited 1, the
    internal-error status, so `set -o pipefail` scripts failed on a normal pipeline; now exit 0, nothing on
    stderr."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "140"}
    spec = Path(__file__).resolve().parents[2] / "examples" / "tabular-xgboost.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "infrafit", "plan", str(spec)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and "Traceback" not in err and "internal error" not in err, err


def test_clicks_own_broken_pipe_exit_is_no_error(monkeypatch):
    """The same through typer's (vendored click) shell: on EPIPE it wraps stdout in PacifyFlushWrapper and
    exits 1."""
    import sys

    from typer._click.utils import PacifyFlushWrapper

    import infrafit.cli as cli

    def closed(*_a, **_k):
        monkeypatch.setattr(sys, "stdout", PacifyFlushWrapper(sys.stdout))
        raise SystemExit(1)

    monkeypatch.setattr(cli, "app", closed)
    assert cli.main(["catalog", "offers"]) == 0


def test_the_cli_consoles_print_brackets_as_written(capsys):
    """Names from specs, overlays and commands reach the terminal; rich markup would eat `[sum(x) for x in y]`
    and raise on `[/bold]`. The CLI's consoles print text as given; emphasis is rich Text."""
    from infrafit.commands.output import stderr, stdout
    from infrafit.report.render import _bold

    stdout.print("offer [sum(x) for x in y] [/bold] [red]x[/red]")
    stderr.print("note [/]")
    stdout.print(_bold("#1", " [b]plain[/b]"))
    out = capsys.readouterr()
    assert "offer [sum(x) for x in y] [/bold] [red]x[/red]" in out.out and "note [/]" in out.err
    assert "#1 [b]plain[/b]" in out.out
