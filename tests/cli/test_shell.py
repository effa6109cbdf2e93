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
