"""The package's layering: no import runs back up the tree, and no module imports in a circle.

Each subpackage's docstring says what it may import; this reads every import (lazy ones too)
and holds the tree to it.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import dagster_dataframely

PACKAGE = "dagster_dataframely"
ROOT = Path(dagster_dataframely.__file__).parent

#: Bottom to top: a part may import itself and any part of a lower layer.
LAYERS: list[set[str]] = [
    {"errors", "_writing"},
    {"_engine"},
    {"_checks", "pandera", "io", "data", "testing"},
    {"_gated", "sources"},
    {"_sidecar", "wiring", "infer", "_report"},
    {"template_vars", "_cli"},
    {""},  # the root `__init__`: the public names
]
#: The one import that runs up, lazily: the engine takes a Pandera model wherever it takes a
#: schema, and translates it on first use.
LAZY_UPWARD = {("dagster_dataframely._engine.schemas", "dagster_dataframely.pandera")}


def module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The package's own modules that the file at `path` imports, anywhere in its body."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(
                    submodule
                    if (ROOT.parent / submodule.replace(".", "/")).exists()
                    or (ROOT.parent / f"{submodule.replace('.', '/')}.py").exists()
                    else target
                )
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == PACKAGE}
    return found - {name}


def graph() -> dict[str, set[str]]:
    return {module_name(path): imports(path) for path in ROOT.rglob("*.py")}


def part(module: str) -> str:
    """The top-level part of the package a module belongs to (`""` for the root itself)."""
    return module.removeprefix(PACKAGE).lstrip(".").split(".")[0]


def layer(module: str) -> int:
    return next(i for i, parts in enumerate(LAYERS) if part(module) in parts)


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {part(module) for module in graph()}
    assert parts == set().union(*LAYERS)


def test_no_import_runs_back_up_the_tree() -> None:
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in targets
        if part(target) != part(module)
        and layer(target) >= layer(module)
        and (module, target) not in LAZY_UPWARD
    )
    assert upward == []


def test_no_module_imports_in_a_circle() -> None:
    try:
        tuple(TopologicalSorter(graph()).static_order())
    except CycleError as error:  # pragma: no cover - the message is the report
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None
