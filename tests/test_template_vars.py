"""`dagster_dataframely.template_vars`: the Columns tab of assets another component defines,
filled from a folder's `defs.yaml` by Dagster's `post_processing`, as the Component's page
writes it."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import dagster as dg
import yaml
from dagster.components.testing import DefsFolderSandbox
from support import scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema

#: A module of the shop's folder: assets another tool defines, and the collection over two.
ASSETS = """\
import dagster as dg
import dataframely as dy


class Customers(dy.Schema):
    customer_id = dy.Int64(primary_key=True)


class Lines(dy.Schema):
    customer_id = dy.Int64()
    sku = dy.String()


class Shop(dy.Collection):
    customers: dy.LazyFrame[Customers]
    lines: dy.LazyFrame[Lines]


@dg.multi_asset(
    specs=[
        dg.AssetSpec("orders", metadata={"owner": "kept"}),
        dg.AssetSpec("customers"),
        dg.AssetSpec("lines"),
        dg.AssetSpec("unchecked"),
    ]
)
def warehouse():
    ...
"""


def _page_folder() -> dict[str, Any]:
    """The folder's `defs.yaml` that docs/component.md gives."""
    text = (Path(__file__).parents[1] / "docs" / "component.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)]
    (folder,) = [b for b in blocks if b["type"] == "dagster.DefsFolderComponent"]
    return folder


def _folder(*targets: dict[str, Any]) -> dict[str, Any]:
    """A folder's defs.yaml that post-processes its assets with this package's variables."""
    return {
        "type": "dagster.DefsFolderComponent",
        "template_vars_module": "dagster_dataframely.template_vars",
        "post_processing": {"assets": list(targets)},
    }


def _specs(sandbox: DefsFolderSandbox, folder: dict[str, Any]) -> dict[str, dg.AssetSpec]:
    """The project's asset specs, after the shop folder's `defs.yaml` has post-processed them;
    the Component in `shop/quality` checks `orders` and the `Shop` collection's members."""
    shop = sandbox.defs_folder_path / "shop"
    shop.mkdir()
    (shop / "assets.py").write_text(textwrap.dedent(ASSETS))
    (shop / "defs.yaml").write_text(yaml.safe_dump(folder))
    module = f"{sandbox.project_name}.defs.shop.assets"
    members = {"customers": "customers", "lines": "lines"}
    scaffold_checks(
        sandbox,
        {
            "checks": [{"asset": "orders", "schema": "dagster_dataframely.data:OrdersSchema"}],
            "collections": [{"collection": f"{module}:Shop", "members": members}],
        },
        at="shop/quality",
    )
    with sandbox.build_component_tree() as tree:
        graph = tree.build_defs().resolve_asset_graph()
    return {spec.key.to_user_string(): spec for a in graph.assets_defs for spec in a.specs}


def _columns(spec: dg.AssetSpec) -> list[str] | None:
    schema = spec.metadata.get("dagster/column_schema")
    return None if schema is None else [column.name for column in schema.columns]


def test_each_checked_asset_gets_the_columns_of_the_schema_it_is_checked_against(
    sandbox: DefsFolderSandbox,
) -> None:
    specs = _specs(sandbox, _page_folder())

    assert specs["orders"].metadata["dagster/column_schema"] == dd.wiring.table_schema(OrdersSchema)
    assert specs["orders"].metadata["owner"] == "kept"  # merged, not replaced
    assert _columns(specs["customers"]) == ["customer_id"]  # collection members too
    assert _columns(specs["lines"]) == ["customer_id", "sku"]
    assert _columns(specs["unchecked"]) is None


def test_dd_column_schema_gives_any_asset_a_named_schemas_columns(
    sandbox: DefsFolderSandbox,
) -> None:
    named = "{{ dd_column_schema('dagster_dataframely.data:OrdersSchema') }}"
    one = {"target": "unchecked", "attributes": {"metadata": {"dagster/column_schema": named}}}
    specs = _specs(sandbox, _folder(one))

    assert _columns(specs["unchecked"]) == list(OrdersSchema.columns())
    assert _columns(specs["orders"]) is None  # only where the folder asks for it
