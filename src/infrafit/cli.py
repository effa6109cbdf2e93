"""The command line: an error shell around a pure program (HTTPie's ``main``/``program`` split).

``program(argv)`` runs the typer app and lets exceptions fly; ``main()`` maps them to exit codes
and one-line messages on stderr. Only ``--debug`` shows a traceback. Results go to stdout,
diagnostics to stderr. Each area registers its own commands from ``infrafit.commands.*`` and
imports its heavy modules lazily, so start-up stays fast.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from infrafit import __version__
from infrafit.errors import ExitCode, InfrafitError
from infrafit.settings import ACTIVE_OVERLAY
from infrafit.signals import Terminated, terminate_raises

app = typer.Typer(
    name="infrafit",
    help="Plan, price and prove the infrastructure for an AI workload.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"infrafit {__version__}")
        raise typer.Exit()


@dataclass(frozen=True)
class Settings:
    """The root options, passed to every command through typer's context (``ctx.obj``)."""

    debug: bool = False
    catalog_dir: Path | None = None


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show a traceback on errors.")] = False,
    catalog_dir: Annotated[
        Path | None,
        typer.Option(
            "--catalog-dir",
            help="Overlay your own catalog CSVs (quotes, discounts, in-house hardware). Also INFRAFIT_CATALOG.",
        ),
    ] = None,
) -> None:
    """Plan, price and prove the infrastructure for an AI workload."""
    ctx.obj = Settings(debug=debug, catalog_dir=catalog_dir)
    if catalog_dir is not None:  # scoped to this call: reset when the command's context closes
        token = ACTIVE_OVERLAY.set(str(catalog_dir))
        ctx.call_on_close(lambda: ACTIVE_OVERLAY.reset(token))


def _register_commands() -> None:
    from infrafit.commands import ALL_AREAS

    for register in ALL_AREAS:
        register(app)


_register_commands()


def program(argv: list[str]) -> int:
    """Run the CLI on ``argv``; raises on error (the pure program under the shell)."""
    try:
        app(args=argv, prog_name="infrafit", standalone_mode=True)
    except SystemExit as exc:  # typer exits with 0, or 2 on a usage error it already printed
        code = exc.code
        if code == 1 and _pipe_closed():
            raise BrokenPipeError from exc
        return code if isinstance(code, int) else (ExitCode.OK if code is None else ExitCode.INPUT)
    return ExitCode.OK


def _pipe_closed() -> bool:
    """Whether click's shell exited because stdout's reader went away (``infrafit plan ... | head``): it then
    wraps stdout in ``PacifyFlushWrapper`` (typer's vendored click's, by name) and exits 1, which here would
    read as an internal error."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _eprint(text: str) -> None:
    sys.stderr.write(text.rstrip("\n") + "\n")


#: Packages of the optional extras (pyproject.toml) -> the extra that installs them.
OPTIONAL_EXTRAS = {"torch": "bench", "psutil": "bench", "pynvml": "monitor", "prometheus_client": "monitor",
                   "httpx": "refresh", "ray": "ray", "pyarrow": "parquet"}


def _internal(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc)
    _eprint(f"internal error: {type(exc).__name__}: {exc}. "
            "To fix: rerun with --debug and report the traceback; this is a bug in infrafit.")
    return ExitCode.INTERNAL


def main(argv: list[str] | None = None) -> int:
    """The error shell: exit 0 ok, 1 internal error, 2 bad input or usage, 3 no feasible option."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("INFRAFIT_DEBUG") == "1"
    try:
        with terminate_raises():
            return program(args)
    except Terminated:
        _eprint("terminated (SIGTERM)")
        return ExitCode.TERMINATED
    except InfrafitError as exc:
        if debug:
            traceback.print_exc()
        _eprint(f"error: {exc.message}")
        return exc.exit_code
    except KeyboardInterrupt:
        _eprint("interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK
    except ModuleNotFoundError as exc:  # an optional extra that is not installed: bad setup, not a bug
        root = (exc.name or "").split(".")[0]
        if root not in OPTIONAL_EXTRAS:
            return _internal(exc, debug)
        _eprint(f"error: this command needs {root}, which is not installed. "
                f"To fix: pip install 'infrafit[{OPTIONAL_EXTRAS[root]}]' (or make test, which installs every extra)")
        return ExitCode.INPUT
    except Exception as exc:  # noqa: BLE001 - the shell's job is to catch everything
        return _internal(exc, debug)


if __name__ == "__main__":
    raise SystemExit(main())
