"""The safe YAML loader: line marks, and every kind of hostile input refused cleanly."""

from __future__ import annotations

import pytest

from infrafit.errors import ProblemsError
from infrafit.workload.yaml_loader import MAX_DEPTH, decode_utf8, load_yaml_text, read_spec_file


def _problem(text: str) -> str:
    with pytest.raises(ProblemsError) as info:
        load_yaml_text(text, "spec.yaml")
    assert len(info.value.problems) == 1
    message = str(info.value.problems[0])
    assert "To fix:" in message
    return message


def test_lines_of_nested_fields():
    loaded = load_yaml_text("a: 1\nb:\n  c: [1, 2]\n  d:\n    e: x\n")
    assert loaded.data == {"a": 1, "b": {"c": [1, 2], "d": {"e": "x"}}}
    assert loaded.lines[("b", "d", "e")] == 5
    assert loaded.lines[("b", "c")] == 3
    # a missing field is located at its closest existing parent
    assert loaded.line_of(("b", "d", "missing")) == 4


def test_alias_bomb_refused():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    assert "alias bomb" in _problem("\n".join(lines))


def test_recursive_alias_refused():
    assert "recursive alias" in _problem("a: &a [*a]\n")


def test_small_alias_use_is_fine():
    loaded = load_yaml_text("base: &b {x: 1}\nother: *b\nmerged:\n  <<: *b\n  y: 2\n")
    assert loaded.data["other"] == {"x": 1}
    assert loaded.data["merged"] == {"x": 1, "y": 2}


def test_deep_nesting_refused():
    assert "nested deeper" in _problem("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))


def test_pathological_nesting_does_not_crash():
    # deeper than Python's recursion limit: the composer itself would overflow
    message = _problem("a: " + "[" * 5000 + "]" * 5000)
    assert "nested" in message


@pytest.mark.parametrize("text", ["a: .inf", "a: -.inf", "a: .nan"])
def test_non_finite_numbers_refused(text):
    assert "not a finite number" in _problem(text)


def test_huge_integer_refused():
    assert "too large" in _problem("a: " + "9" * 5000)


def test_duplicate_key_refused_with_line():
    message = _problem("a: 1\nb: 2\na: 3\n")
    assert "duplicate key 'a'" in message and "spec.yaml:3" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty"),
        ("# only a comment\n", "empty"),
        ("- 1\n- 2\n", "top level is a list"),
        ("just a string", "top level is a single value"),
        ("a: 1\n---\nb: 2\n", "several YAML documents"),
        ("a: [1, 2\n", "invalid YAML"),
        ("a: !!python/object/apply:os.system [ls]\n", "not allowed"),
        ("a: !!python/name:os.system x\n", "cannot read value"),
        ("? [1, 2]\n: x\n", "plain name"),
        ("a: !!binary aGVsbG8=\n", "binary"),
        ("a: \x00\n", "NUL"),
    ],
)
def test_malformed_documents(text, expected):
    assert expected in _problem(text)


def test_non_utf8_bytes_name_the_offset():
    raw = b"name: ok\nmodel: caf" + b"\xe9\n"
    with pytest.raises(ProblemsError) as info:
        decode_utf8(raw, "spec.yaml")
    problem = info.value.problems[0]
    assert f"offset {len(raw) - 2}" in problem.what and "0xe9" in problem.what
    assert problem.line == 2


def test_utf8_bom_is_accepted():
    assert decode_utf8(b"\xef\xbb\xbfa: 1\n", "x") == "a: 1\n"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ProblemsError, match="no such file"):
        read_spec_file(tmp_path / "nope.yaml")
    with pytest.raises(ProblemsError, match="is a directory"):
        read_spec_file(tmp_path)


def test_oversized_file_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 2_000_000)
    with pytest.raises(ProblemsError, match="at most"):
        read_spec_file(big)


def test_yes_no_keys_stay_names():
    # YAML 1.1 reads `on:` as a boolean; a spec key is always a name
    assert load_yaml_text("on: 1\n").data == {"on": 1}
