"""Count the modules that reach another library's private names: ``from x import _y``, and ``x._y``
where ``x`` is a module or class imported from another library (the count issue #51 asks for, before
and after the patches moved into ``kg_decoder.patches``).

A second, looser count adds private attributes read or written on another library's *objects*
(``shape._element``, ``plumber_page._objects``): an attribute ``._y`` on anything but ``self``, ``cls``,
a name the module defines at its top or imports from kg-decoder or the standard library. The standard library's names (``os._exit``) are left out
of both: they are not what an upgrade of a pinned dependency breaks.

    .venv/bin/python bench/private_names.py            # both counts, with each module's names
    .venv/bin/python bench/private_names.py --quiet    # the counts only
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = "kg_decoder"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _foreign(module: str | None) -> bool:
    """Another library's module: neither relative, nor kg-decoder's, nor the standard library's."""
    if not module:
        return False
    top = module.split(".")[0]
    return top != OWN and top not in sys.stdlib_module_names


def _modules(folders: list[Path]) -> dict[str, ast.Module]:
    trees = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            trees[str(path.relative_to(ROOT))] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return trees


def private_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(the module's private names of other libraries' modules and classes, private attributes of
    other libraries' objects)."""
    imported: dict[str, str] = {}  # local name -> the foreign module or class it is bound to
    known: set[str] = {"self", "cls"}  # names of kg-decoder's own and the standard library's
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            known.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                known.update(name.id for name in ast.walk(target) if isinstance(name, ast.Name))
    strict: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _foreign(alias.name):
                    known.add(alias.asname or alias.name.split(".")[0])
                else:
                    imported[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not (node.level == 0 and _foreign(node.module)):
            known.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name):
                    strict.add(f"{node.module}.{alias.name}")
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    loose: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in imported:
            strict.add(f"{imported[base.id]}.{node.attr}")
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id in imported:
            strict.add(f"{imported[base.value.id]}.{base.attr}.{node.attr}")
        elif not (isinstance(base, ast.Name) and base.id in known):
            loose.add(f"{ast.unparse(base)}.{node.attr}")
    return strict, loose


def count(folders: list[Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    trees = _modules(folders)
    strict: dict[str, set[str]] = defaultdict(set)
    loose: dict[str, set[str]] = defaultdict(set)
    for name, tree in trees.items():
        module_strict, module_loose = private_names(tree)
        if module_strict:
            strict[name] = module_strict
        if module_strict or module_loose:
            loose[name] = module_strict | module_loose
    return dict(strict), dict(loose)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quiet", action="store_true", help="the counts only")
    arguments = parser.parse_args()
    strict, loose = count([ROOT / "kg_decoder", ROOT / "web"])
    if not arguments.quiet:
        for title, found in (("private names of other libraries' modules and classes", strict),
                             ("... and private attributes of their objects", loose)):
            print(f"{title}:")
            for module, names in sorted(found.items()):
                print(f"  {module}: {', '.join(sorted(names))}")
    print(f"modules importing another library's private names: {len(strict)}")
    print(f"modules touching another library's private names or attributes: {len(loose)}")


if __name__ == "__main__":
    main()
