"""Safe YAML loading that remembers where every value came from.

``load_yaml_text(text, source)`` composes the YAML node tree with PyYAML's ``SafeLoader`` (no
Python object tags, ever) and builds plain dicts, lists and scalars from it, recording the 1-based
line of every field path so that a later validation error can say ``spec.yaml:12``.

Hostile input is refused with a clear ``ProblemsError`` instead of a crash or a hang:
non-UTF-8 bytes (the offset of the first bad byte is named), files over ``MAX_FILE_BYTES``, an alias
bomb (more than ``MAX_ALIASES`` alias uses or ``MAX_NODES`` values after expansion; the
"billion laughs" attack), nesting deeper than ``MAX_DEPTH``, a recursive alias, a top level that
is not a mapping, an empty document, several documents, non-scalar or duplicate keys, and numbers
that are not finite or have absurdly many digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infrafit import safe_io
from infrafit.errors import InputError, Problem, ProblemsError

MAX_FILE_BYTES = safe_io.SPEC_MAX_BYTES
MAX_ALIASES = 100
MAX_NODES = 50_000
MAX_DEPTH = 32

FieldPath = tuple[str | int, ...]
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"})


@dataclass
class Loaded:
    """The plain data of a YAML document and the line of each field path in it."""

    data: Any
    lines: dict[FieldPath, int] = field(default_factory=dict)
    source: str = "<string>"

    def line_of(self, path: FieldPath) -> int | None:
        """The line of ``path`` or, when it is absent (a missing field), of its closest parent."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)


def _fail(source: str, what: str, fix: str, line: int | None = None, path: str = "") -> ProblemsError:
    return ProblemsError([Problem(path=path, what=what, fix=fix, file=source, line=line)], source=source)


def read_spec_file(path: str | Path) -> tuple[str, str]:
    """Read ``path`` as UTF-8 text; returns ``(text, source_name)``. Raises ``ProblemsError``."""
    p = Path(path)
    source = str(path)
    if p.is_dir():
        raise _fail(source, "is a directory, not a spec file", "pass a YAML file inside it, e.g. examples/chatbot.yaml")
    found = safe_io.problem(p, MAX_FILE_BYTES)
    if found is not None:
        what, fix = found
        if "bytes; at most" in what:
            what, fix = f"{what} (a workload spec is small)", "pass the workload spec itself, not a data file"
        raise _fail(source, what, fix)
    try:
        raw = safe_io.read_capped(p, MAX_FILE_BYTES, "spec")
    except InputError as exc:  # changed between the check and the read
        raise _fail(source, exc.what, exc.fix) from None
    return decode_utf8(raw, source), source


def decode_utf8(raw: bytes, source: str) -> str:
    """Decode ``raw`` as UTF-8 (a BOM is allowed), naming the offset and line of a bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise _fail(
            source,
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} cannot be decoded",
            "save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)",
            line=line,
        ) from None


class _Builder:
    """Turns a composed node tree into plain data, counting aliases, nodes and depth."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[FieldPath, int] = {}
        self.seen: set[int] = set()
        self.aliases = 0
        self.nodes = 0
        self.constructor = yaml.SafeLoader("")

    def fail(self, node: yaml.Node, what: str, fix: str, path: FieldPath) -> ProblemsError:
        return _fail(self.source, what, fix, line=node.start_mark.line + 1, path=_dotted(path))

    def build(self, node: yaml.Node, path: FieldPath, stack: frozenset[int]) -> Any:
        self._count(node, path, stack)
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if node.tag not in _PLAIN_TAGS:
            raise self.fail(node, f"tag {node.tag!r} is not allowed", "remove the !!tag; write plain YAML", path)
        inner = stack | {id(node)}
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i), inner) for i, child in enumerate(node.value)]
        return self._mapping(node, path, inner)

    def _count(self, node: yaml.Node, path: FieldPath, stack: frozenset[int]) -> None:
        if id(node) in stack:
            raise self.fail(node, "recursive alias (a value that contains itself)", "remove the alias", path)
        if len(path) > MAX_DEPTH:
            raise self.fail(node, f"nested deeper than {MAX_DEPTH} levels", "flatten the spec", path)
        if not isinstance(node, yaml.ScalarNode):
            if id(node) in self.seen:
                self.aliases += 1
            self.seen.add(id(node))
        self.nodes += 1
        if self.aliases > MAX_ALIASES or self.nodes > MAX_NODES:
            raise self.fail(
                node,
                f"too many aliases or values (over {MAX_ALIASES} alias uses or {MAX_NODES} values: an alias bomb?)",
                "write the values out instead of repeating anchors (&name / *name)",
                path,
            )

    def _mapping(self, node: yaml.MappingNode, path: FieldPath, stack: frozenset[int]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                value = self.build(value_node, path, stack)
                for part in value if isinstance(value, list) else [value]:
                    if not isinstance(part, dict):
                        raise self.fail(value_node, "a merge key (<<) needs a mapping", "merge a mapping", path)
                    merged.update({k: v for k, v in part.items() if k not in merged})
                continue
            key = self._key(key_node, path)
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}", "keep one of the two entries", (*path, key))
            self.lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, (*path, key), stack)
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    def _key(self, node: yaml.Node, path: FieldPath) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, "a key must be a plain name, not a list or mapping", "use a plain name", path)
        key = self._scalar(node, path)
        if isinstance(key, bool) or key is None:
            # YAML 1.1 reads `on:`/`yes:`/`null:` as booleans or null; a spec key is always a name.
            return str(node.value)
        return str(key)

    def _scalar(self, node: yaml.ScalarNode, path: FieldPath) -> Any:
        if node.tag == "tag:yaml.org,2002:int" and len(node.value) > 40:
            raise self.fail(node, f"number with {len(node.value)} digits is too large", "use a sane value", path)
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            reason = getattr(exc, "problem", None) or str(exc)
            raise self.fail(
                node, f"cannot read value {node.value[:40]!r}: {reason}", "write a plain value (no !!tags)", path
            ) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(node, f"{node.value!r} is not a finite number", "write a finite number", path)
        if isinstance(value, bytes):
            raise self.fail(node, "binary values are not allowed", "write text or numbers", path)
        return value


def _dotted(path: FieldPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _check_depth(text: str, source: str) -> None:
    """Refuse deep nesting from the event stream (PyYAML's parser is iterative, its composer is
    recursive), before composing; syntax errors are left for the composer to report."""
    brackets = text.count("[") + text.count("{")
    indent = max((len(line) - len(line.lstrip(" -")) for line in text.splitlines()), default=0)
    if brackets <= MAX_DEPTH and indent <= MAX_DEPTH:
        return  # cannot be deeper than MAX_DEPTH; skip the second parse
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH + 1:
                    line = event.start_mark.line + 1 if event.start_mark else None
                    raise _fail(source, f"nested deeper than {MAX_DEPTH} levels", "flatten the spec", line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return


def _compose(text: str, source: str) -> yaml.Node | None:
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        at: int | None = text[: exc.position].count("\n") + 1
        raise _fail(source, f"control character #x{exc.character:04x} at character {exc.position}",
                    "remove it; a spec is plain text", at) from None
    try:
        node = loader.get_single_node()
    except yaml.composer.ComposerError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark else None
        if "expected a single document" in str(exc):
            raise _fail(source, "several YAML documents in one file", "keep one document (remove `---`)",
                        line) from None
        raise _fail(source, f"invalid YAML: {exc.problem}", "fix the YAML syntax at that line", line) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise _fail(source, f"invalid YAML: {exc.problem or exc}", "fix the YAML syntax at that line", line) from None
    except yaml.YAMLError as exc:
        raise _fail(source, f"invalid YAML: {exc}", "fix the YAML syntax") from None
    except RecursionError:
        raise _fail(source, "YAML nested too deeply to read", f"flatten it (at most {MAX_DEPTH} levels)") from None
    finally:
        loader.dispose()
    return node


def load_yaml_text(text: str, source: str = "<string>") -> Loaded:
    """Parse one YAML mapping safely; returns the data and the line of every field path."""
    if len(text) > MAX_FILE_BYTES:
        raise _fail(source, f"spec text is over {MAX_FILE_BYTES} characters", "pass the workload spec itself")
    if "\x00" in text:
        raise _fail(source, "contains NUL bytes (a binary file?)", "pass a YAML text file")
    _check_depth(text, source)
    node = _compose(text, source)
    if node is None:
        raise _fail(source, "the file is empty", "write a workload spec; see docs/workload-spec.md", line=1)
    if not isinstance(node, yaml.MappingNode):
        kind = "a list" if isinstance(node, yaml.SequenceNode) else "a single value"
        raise _fail(
            source,
            f"the top level is {kind}, not a mapping of fields",
            "start the file with `name: ...`, `task: ...` (see docs/workload-spec.md)",
            line=node.start_mark.line + 1,
        )
    builder = _Builder(source)
    try:
        data = builder.build(node, (), frozenset())
    except RecursionError:
        raise _fail(source, "YAML nested too deeply to read", f"flatten it (at most {MAX_DEPTH} levels)") from None
    return Loaded(data=data, lines=builder.lines, source=source)


def dotted(path: FieldPath) -> str:
    """``("inference", "slo", "ttft_p99_s")`` -> ``"inference.slo.ttft_p99_s"``; indices as ``[i]``."""
    return _dotted(path)
