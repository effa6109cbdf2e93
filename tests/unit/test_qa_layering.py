"""QA: the layering rules of docs/architecture.md, read from the code's own imports (lazy ones too).

1. Nothing outside ``perf/`` (the package, benchmarks/, scripts/) imports a ``perf`` submodule: they use the face
   (``from infrafit.perf import estimate, evaluate, ...``).
2. ``perf``, ``cost``, ``catalog`` and ``workload`` never import ``search``, ``report``, ``export`` or
   ``commands``.
3. No circle of imports between modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "infrafit"
LOWER = ("perf", "cost", "catalog", "workload")
UPPER = ("search", "report", "export", "commands")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of nodes inside ``if TYPE_CHECKING:`` blocks (annotations only, never run)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def _imports(path: Path) -> set[str]:
    out = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("infrafit")}


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        # an import of a package counts as an import of its __init__, which is a module too
        graph[name] = {m for m in _imports(path) if m in modules and m != name}
    return graph


def test_nothing_outside_perf_imports_a_perf_submodule():
    offenders = []
    for path in [*PKG.rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")]:
        if PKG / "perf" in path.parents:
            continue
        offenders += [f"{path.relative_to(ROOT)}: {m}" for m in _imports(path) if m.startswith("infrafit.perf.")]
    assert not offenders, "import these from the face (infrafit.perf):\n" + "\n".join(sorted(offenders))


def test_lower_layers_never_import_upper_ones():
    bad = []
    for name, deps in _graph().items():
        if name.split(".")[1:2] and name.split(".")[1] in LOWER:
            bad += [f"{name} -> {d}" for d in deps if d.split(".")[1:2] and d.split(".")[1] in UPPER]
    assert not bad, "\n".join(sorted(bad))


def test_no_import_circles():
    graph = _graph()
    # packages import their submodules through the face by design (lazy, PEP 562): drop package -> child
    for name in graph:
        graph[name] = {d for d in graph[name] if not d.startswith(name + ".")}
    cycles, state, stack = [], {}, []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert not cycles, "import circles:\n" + "\n".join(cycles)
