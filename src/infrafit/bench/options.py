"""Up-front checks of the bench commands' options: every number, size and output path is refused
with exit 2 (``InputError`` naming the flag, ending in "To fix: ...") before anything is measured,
stored or written."""

from __future__ import annotations

import math
from pathlib import Path

from infrafit.errors import InputError


def positive_int(value: int | None, flag: str, *, example: str = "1") -> int | None:
    """``value`` when it is ``None`` or >= 1."""
    if value is not None and value < 1:
        raise InputError(f"{flag} must be at least 1 (got {value})", fix=f"pass {flag} {example} or more")
    return value


def positive_seconds(value: float | None, flag: str) -> float | None:
    """``value`` when it is ``None`` or a finite number of seconds > 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(f"{flag} must be a positive number of seconds (got {value})", fix=f"pass e.g. {flag} 2")
    return value


def positive_bytes(text: str, flag: str) -> float:
    """Parse a size like ``256MB`` or ``1GiB``; it must be > 0."""
    from infrafit.units import UnitParseError, parse_bytes

    try:
        value = parse_bytes(text)
    except UnitParseError as exc:
        raise InputError(f"{flag}: {exc}", fix=f"pass {flag} like 256MB or 1GiB") from None
    if not value > 0:
        raise InputError(f"{flag} must be a size above zero (got {text!r})", fix=f"pass {flag} like 256MB or 1GiB")
    return value


def _first_existing(path: Path) -> Path:
    for parent in (path, *path.parents):
        if parent.exists():
            return parent
    return Path(".")


def output_file(path: Path, flag: str) -> Path:
    """A file path that can be created or overwritten: not a folder, and not under a file."""
    fix = f"give {flag} a file path in an existing or creatable folder"
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a directory, not a file", fix=fix)
    anchor = _first_existing(path.parent)
    if not anchor.is_dir():
        raise InputError(f"{flag} {path}: {anchor} is a file, not a folder", fix=fix)
    return path


def output_dir(path: Path, flag: str) -> Path:
    """A folder that exists or can be created: neither a file nor under a file."""
    fix = f"give {flag} a folder path (it is created when missing)"
    if path.exists() and not path.is_dir():
        raise InputError(f"{flag} {path}: is a file, not a folder", fix=fix)
    anchor = _first_existing(path)
    if not anchor.is_dir():
        raise InputError(f"{flag} {path}: {anchor} is a file, not a folder", fix=fix)
    return path


def write_error(exc: OSError, path: Path, flag: str) -> InputError:
    """An ``OSError`` while writing ``flag``'s path, as an input error (permissions, full disk...)."""
    reason = exc.strerror or type(exc).__name__
    return InputError(f"{flag} {path}: cannot write ({reason})",
                      fix=f"give {flag} a path you can write to, with free space")
