"""Reading files a user names, safely: only regular files, never more than a size cap.

A spec, model config, CSV or overlay that is a symlink to ``/dev/zero`` or a character device would
otherwise be read without limit, and a FIFO would block forever. Every reader of a user's file goes
through ``read_capped``: it stats the path first (following symlinks) and refuses anything that is
not a regular file, calling it what it is; it refuses a file over the cap; and it reads at most
``cap + 1`` bytes, so a file that grows while it is read (or lies about its size, as ``/proc`` files
do) is still bounded. The caps are documented in ``docs/limits.md``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from infrafit.errors import InputError
from infrafit.units import KiB, MiB

#: Size caps per kind of file (bytes).
SPEC_MAX_BYTES = int(1 * MiB)
MODEL_CONFIG_MAX_BYTES = int(4 * MiB)
CSV_MAX_BYTES = int(64 * MiB)
OVERLAY_MAX_BYTES = int(16 * MiB)
IMPORT_MAX_BYTES = int(64 * MiB)
#: Longest single CSV field (csv's own default limit is 128 KiB).
CSV_FIELD_MAX_BYTES = int(128 * KiB)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """'a directory', 'a FIFO (named pipe)', 'a character device' ... for a non-regular ``st_mode``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def problem(path: str | Path, cap: int) -> tuple[str, str] | None:
    """``(what is wrong, how to fix it)`` when ``path`` cannot be read as a file of at most ``cap``
    bytes, else None. Never opens the path (a FIFO would block)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        why = "is a broken symbolic link" if p.is_symlink() else "no such file"
        return why, "check the path; run `ls` on its folder to see what is there"
    except PermissionError:
        return "cannot be read (permission denied)", "check the file's permissions, or copy it somewhere readable"
    except OSError as exc:
        return f"cannot be read ({exc.strerror})", "check that the path names a readable file (`ls -l` on it)"
    if not stat.S_ISREG(st.st_mode):
        return f"is {kind_of(st.st_mode)}, not a regular file", "pass a regular file (not a device, pipe or folder)"
    if st.st_size > cap:
        return (f"is {st.st_size:,} bytes; at most {cap:,} are read",
                "pass the file itself, not a larger data file (limits: docs/limits.md)")
    return None


def read_capped(path: str | Path, cap: int, what: str) -> bytes:
    """The bytes of ``path``, a regular file of at most ``cap`` bytes; ``InputError`` (exit 2) naming
    the file and ``what`` it should be otherwise."""
    found = problem(path, cap)
    if found is not None:
        raise InputError(f"{what} {path}: {found[0]}", fix=found[1])
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except PermissionError:
        raise InputError(f"{what} {path}: cannot be read (permission denied)",
                         fix="check the file's permissions, or copy it somewhere readable") from None
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot be read ({exc.strerror})",
                         fix="check that the path names a readable file (`ls -l` on it)") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped between stat and open
            raise InputError(f"{what} {path}: is not a regular file", fix="pass a regular file")
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise InputError(f"{what} {path}: more than {cap:,} bytes", fix="pass a smaller file (docs/limits.md)")
    return data


def read_text_capped(path: str | Path, cap: int, what: str, *, bom: bool = True) -> str:
    """``read_capped`` decoded as UTF-8 (a leading BOM dropped when ``bom``); a NUL byte or invalid
    UTF-8 is refused with the byte offset."""
    data = read_capped(path, cap, what)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(f"{what} {path}: contains a NUL byte at offset {nul} (a binary file?)", fix="pass a text file")
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {path}: not UTF-8 text (byte {exc.start}: {exc.reason})",
                         fix="save the file as UTF-8") from None


def atomic_write_text(path: str | Path, text: str, *, what: str = "file", fix: str = "choose a writable path") -> None:
    """Write ``path`` whole or not at all: a temporary sibling renamed over it, removed on failure (a full
    disk must not leave a half-written file, and the old file stays intact)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {what} {path}: {exc.strerror}", fix=fix) from None
