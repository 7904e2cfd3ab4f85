"""No import circle among the package's modules, counting imports inside functions too (import-linter's
contracts see the layers; an import a function makes late to dodge a circle is a circle all the same)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import kg_decoder

PACKAGE = Path(kg_decoder.__file__).parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.with_suffix("").relative_to(PACKAGE.parent).parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imported(module: str, path: Path, node: ast.AST, modules: dict[str, Path]) -> list[str]:
    """The package's modules an import statement loads (a name imported from a package is its module
    where it is one, else the package)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        if node.level:
            base = base[:len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        targets = [f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target for alias in node.names]
    else:
        return []
    found = []
    for target in targets:
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in modules and target != module:
            found.append(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            graph[module].update(_imported(module, path, node, modules))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_finder_sees_a_circle_made_by_an_import_inside_a_function():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    source = "def late():\n    from .b import thing\n"  # an import inside a function is an edge
    modules = {"p.a": Path("a.py"), "p.b": Path("b.py")}
    [node] = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    assert _imported("p.a", Path("a.py"), node, modules) == ["p.b"]


def test_no_module_of_the_package_imports_itself_round_a_circle():
    graph = import_graph()
    assert len(graph) > 100  # every module read
    assert "kg_decoder.decode.processes" in graph["kg_decoder.decode.worker"]  # imports are seen
    assert circles(graph) == []
