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
