"""Characterization of the Dagster component internals `_component_tree` rests on.

`SchemaChecksComponent` sees the assets of its project by walking Dagster's component tree:
the root declaration, each declaration's type, children and file, and the tree's cache of
built definitions (so building a sibling early costs nothing later). It tells a standalone
component (`dg.build_defs_for_component`, whose tree is a `TestComponentTree`) from one in a
project, and spells partitions in YAML with Dagster's own asset-attribute models. None of
these is exported from `dagster`; if one changes, these tests say which decision to revisit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster.components.testing import DefsFolderSandbox, create_defs_folder_sandbox

import dagster_dataframely as dd
from dagster_dataframely._sidecar.component import SchemaCheck
from dagster_dataframely._sidecar.component_tree import in_project

ASSETS = "import dagster as dg\n\norders = dg.AssetSpec('orders')\n"


@dataclass
class _Probe(dg.Component):
    """Records what `in_project` says of the context it is built in."""

    seen: list[bool] = field(default_factory=list)

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        self.seen.append(in_project(context))
        return dg.Definitions()


def _scaffold(sandbox: DefsFolderSandbox) -> Path:
    return sandbox.scaffold_component(
        component_cls=dd.SchemaChecksComponent,
        defs_path="quality",
        defs_yaml_contents={
            "type": "dagster_dataframely.SchemaChecksComponent",
            "attributes": {"checks": []},
        },
    )


def test_a_standalone_component_is_told_apart_from_one_in_a_project() -> None:
    probe = _Probe()

    dg.build_defs_for_component(probe)

    assert probe.seen == [False]
    with create_defs_folder_sandbox() as sandbox:
        path = _scaffold(sandbox)
        with sandbox.build_component_tree() as tree:
            context = tree.load_context.for_path(path)
            assert in_project(context)


def test_the_tree_declares_each_component_with_its_type_children_and_folder() -> None:
    with create_defs_folder_sandbox() as sandbox:
        (sandbox.defs_folder_path / "assets.py").write_text(ASSETS)
        path = _scaffold(sandbox)
        with sandbox.build_component_tree() as tree:
            root = tree.find_root_decl()
            decls = list(root.iterate_all_component_decls())
            (checks,) = [d for d in decls if d.component_type is dd.SchemaChecksComponent]
            (module,) = [
                d for d in decls if str(getattr(d.loc, "file_path", "")).endswith("assets.py")
            ]
            children = [child for d in decls for child in d.iterate_child_component_decls()]

            assert decls[0] is root and len(children) == len(decls) - 1
            assert checks.loc.file_path == path  # type: ignore[attr-defined]
            assert tree.build_defs(module.loc) is tree.build_defs(module.loc)  # cached
            built = tree.build_defs(module.loc).assets or []
            assert {spec.key for spec in built} == {dg.AssetKey("orders")}  # type: ignore[union-attr]


def test_partitions_are_spelled_as_dagsters_asset_attributes() -> None:
    daily = SchemaCheck.resolve_from_yaml(
        "asset: orders\nschema: dagster_dataframely.data:OrdersSchema\n"
        "partitions_def: {type: daily, start_date: '2024-05-01'}\n"
    )

    assert daily.partitions_def == dg.DailyPartitionsDefinition(start_date="2024-05-01")
