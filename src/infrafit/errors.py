"""The error family. Every message says what is wrong, where, and ends with ``To fix: ...``.

The CLI's error shell maps these to exit codes: ``InputError`` (and subclasses) -> 2,
``NoFeasibleOption`` -> 3, anything else -> 1. Only ``--debug`` shows a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    """The CLI's exit statuses (DESIGN.md section 4)."""

    OK = 0
    INTERNAL = 1
    INPUT = 2
    NO_OPTION = 3
    INTERRUPTED = 130
    TERMINATED = 143


EXIT_OK = ExitCode.OK
EXIT_INTERNAL = ExitCode.INTERNAL
EXIT_INPUT = ExitCode.INPUT
EXIT_NO_OPTION = ExitCode.NO_OPTION


def suggest(name: str, choices: Iterable[str], n: int = 3) -> str:
    """A ``" (did you mean 'x'?)"`` hint from close matches, or ``""`` when nothing is close."""
    matches = difflib.get_close_matches(str(name).lower(), [str(c).lower() for c in choices], n=n, cutoff=0.6)
    if not matches:
        return ""
    originals = {str(c).lower(): str(c) for c in choices}
    quoted = ", ".join(repr(originals[m]) for m in matches)
    return f" (did you mean {quoted}?)"


class InfrafitError(Exception):
    """Base of every error infrafit raises on purpose."""

    exit_code = EXIT_INTERNAL

    def __init__(self, what: str, *, fix: str, where: str | None = None) -> None:
        self.what = what
        self.fix = fix
        self.where = where
        super().__init__(self.message)

    @property
    def message(self) -> str:
        prefix = f"{self.where}: " if self.where else ""
        return f"{prefix}{self.what}. To fix: {self.fix}"


class InputError(InfrafitError):
    """Bad input from the user: a spec, a CSV, a flag. Exit status 2."""

    exit_code = EXIT_INPUT


class CatalogError(InputError):
    """A catalog data file (built-in or the user's overlay) is malformed."""


class NoFeasibleOption(InfrafitError):
    """``plan`` found nothing that meets the hard constraints. Exit status 3."""

    exit_code = EXIT_NO_OPTION


@dataclass(frozen=True)
class Problem:
    """One problem in a file: where (file:line and field path), what, and how to fix it."""

    path: str  # field path, e.g. "inference.slo.ttft_p99_s"
    what: str
    fix: str
    file: str | None = None
    line: int | None = None

    @property
    def location(self) -> str:
        parts = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.path:
            parts.append(self.path)
        return " ".join(parts)

    def __str__(self) -> str:
        loc = self.location
        return f"{loc + ': ' if loc else ''}{self.what}. To fix: {self.fix}"


#: Problems listed in one message; the rest are counted (30,000 unknown keys are one mistake, not 30,000 lines).
MAX_PROBLEMS_SHOWN = 50


class ProblemsError(InputError):
    """Several problems found at once (a spec or a data file); lists every one."""

    def __init__(self, problems: list[Problem], *, source: str | None = None) -> None:
        self.problems = list(problems)
        n = len(self.problems)
        shown = self.problems[:MAX_PROBLEMS_SHOWN]
        what = f"{n} problem{'s' if n != 1 else ''} in {source or 'input'}:\n" + "\n".join(f"  - {p}" for p in shown)
        if n > len(shown):
            what += f"\n  ... and {n - len(shown):,} more (the first {len(shown)} are shown)"
        super().__init__(what, fix="correct each listed field and run again", where=None)

    @property
    def message(self) -> str:
        return self.what
