"""What a Component sees of the code location it loads into: the other components of its
project's defs tree.

A Component contributes its own Definitions; Dagster merges them with the others once every
component has built. To check its entries against the assets the code location declares,
`SchemaChecksComponent` builds the other components of the tree itself, through
`ComponentLoadContext.build_defs` (the tree caches what each one builds, so nothing is built
twice and Dagster records the dependency for reloads). Components of the checking type are never
built from here: each of them walks the tree too, so building one from another would recurse;
their folders are entered one child at a time instead.

`PartitionsField` is the YAML of a partitions definition, as Dagster's own asset attributes
spell it (`{type: daily, start_date: ...}`).

Dagster exports no type for the tree's declarations (`ComponentDecl`), for the load context
of a `defs.yaml` whose templates render (`ComponentDeclLoadContext`), for a tree made for a
standalone component (`dg.build_defs_for_component`), nor for its partitions YAML; they are
used here only, and pinned by tests/test_component_tree.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeAlias

import dagster as dg
from dagster.components.core.component_tree import TestComponentTree
from dagster.components.core.context import ComponentDeclLoadContext
from dagster.components.core.decl import ComponentDecl
from dagster.components.resolved.core_models import (
    DailyPartitionsDefinitionModel,
    HourlyPartitionsDefinitionModel,
    StaticPartitionsDefinitionModel,
    TimeWindowPartitionsDefinitionModel,
    WeeklyPartitionsDefinitionModel,
    resolve_partitions_def,
)

from .._checks.asset_keys import closest_keys
from ..errors import UnknownAssetError
from .with_schemas import declared_assets

PartitionsField: TypeAlias = Annotated[
    dg.PartitionsDefinition | None,
    dg.Resolver(
        resolve_partitions_def,
        model_field_type=HourlyPartitionsDefinitionModel
        | DailyPartitionsDefinitionModel
        | WeeklyPartitionsDefinitionModel
        | TimeWindowPartitionsDefinitionModel
        | StaticPartitionsDefinitionModel,
        description="The checks' partitions, as Dagster's asset attributes spell them; by "
        "default the checked asset's.",
    ),
]


@dataclass(frozen=True)
class DeclaredAssets:
    """The assets a component's project declares: what every other component of its defs
    folder builds, read as `dd.with_schemas` reads a `Definitions`."""

    definitions: dg.Definitions
    specs: Mapping[dg.AssetKey, dg.AssetSpec]
    #: The project's defs folder.
    root: Path

    @classmethod
    def seen_from(
        cls, context: dg.ComponentLoadContext, checking: type[Any]
    ) -> DeclaredAssets | None:
        """What the project of `context` declares, besides the components of type
        `checking`; None for a component loaded on its own (`dg.build_defs_for_component`),
        which has no project to look in."""
        if not in_project(context):
            return None
        definitions = other_definitions(context, checking)
        specs, _ = declared_assets(definitions, checked=(), by=checking.__name__)
        return cls(definitions, specs, context.component_tree.defs_module_path)

    def refuse(self, key: dg.AssetKey) -> None:
        """Raise for a `key` the project declares no spec of: `UnloadableAssetError` for a
        `SourceAsset`, as `dd.with_schemas` does, else `UnknownAssetError` with the closest
        declared keys."""
        declared_assets(self.definitions, checked={key}, by="SchemaChecksComponent")
        closest = closest_keys(key, self.specs)
        hint = f" Closest declared keys: {', '.join(closest)}." if closest else ""
        hidden = definitions_beside_assets(self.root)
        if hidden:
            shown = ", ".join(str(path.relative_to(self.root)) for path in hidden[:5])
            hint += (
                f" {shown} define(s) a @dg.definitions function beside assets: from such a "
                "module Dagster loads only what that function returns, not the assets beside "
                "it. Return them from it (dg.Definitions(assets=[...])) or move the function to "
                "a module of its own."
            )
        raise UnknownAssetError(
            f"asset {key.to_user_string()} is not declared in this project's defs folder, "
            f"which declares {len(self.specs)} asset(s).{hint} Fix the key (a key with a prefix "
            "is written 'prefix/name'), or declare the asset under the defs folder (in a Python "
            "module or a component). An asset defined in Python outside the defs folder and "
            "merged with Definitions.merge cannot be seen from here: set `assets_outside_defs: "
            "true` beside `checks` (its key is then not checked), or attach the schema in Python "
            "with dd.with_schemas."
        )


_DEFINITIONS = re.compile(r"^@(?:\w+\.)?definitions\b", re.M)
_ASSETS = re.compile(r"^@(?:\w+\.)?(?:multi_)?asset\b|\bAssetSpec\(", re.M)


def definitions_beside_assets(root: Path) -> list[Path]:
    """The modules under `root` with a `@dg.definitions` function and assets beside it (read
    as text, not imported), whose assets Dagster leaves out unless the function returns them."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(errors="replace")
        if _DEFINITIONS.search(text) and _ASSETS.search(text):
            found.append(path)
    return found


def in_project(context: ComponentDeclLoadContext) -> bool:
    """Whether the component was loaded from a project's defs folder (`dg`, the CLI,
    `dg.load_from_defs_folder`), not on its own (`dg.build_defs_for_component`)."""
    return not isinstance(context.component_tree, TestComponentTree)


def other_definitions(context: dg.ComponentLoadContext, checking: type[Any]) -> dg.Definitions:
    """The Definitions every component of the project builds, but those of type `checking`."""
    built = [context.build_defs(decl.loc) for decl in _buildable(_root(context), checking)]
    return dg.Definitions.merge(*built)


def components_of(
    context: ComponentDeclLoadContext, checking: type[Any]
) -> Iterator[tuple[Path, Any]]:
    """The components of type `checking` in the project but the one `context` loads, with the
    file each is declared in (loaded, not built); none for a component loaded on its own.
    `context` may also be a `defs.yaml`'s while its templates render."""
    if not in_project(context):
        return
    own = context.component_loc
    for decl in _root(context).iterate_all_component_decls():
        if decl.loc != own and _is(decl, checking):
            yield _file(decl), context.load_structural_component_at_loc(decl.loc)


def _root(context: ComponentDeclLoadContext) -> ComponentDecl:
    return context.component_tree.find_root_decl()


def _buildable(decl: ComponentDecl, checking: type[Any]) -> Iterator[ComponentDecl]:
    """`decl` when nothing in it is of type `checking`, else its children that qualify."""
    if _is(decl, checking):
        return
    if not any(_is(inner, checking) for inner in decl.iterate_all_component_decls()):
        yield decl
        return
    for child in decl.iterate_child_component_decls():
        yield from _buildable(child, checking)


def _is(decl: ComponentDecl, checking: type[Any]) -> bool:
    kind = decl.component_type
    return isinstance(kind, type) and issubclass(kind, checking)


def _file(decl: ComponentDecl) -> Path:
    path = Path(getattr(decl.loc, "file_path", "."))
    return path / "defs.yaml" if path.is_dir() else path
