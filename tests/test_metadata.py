"""The Columns tab: `schema_metadata` and `table_schema`, in a real code location."""

from __future__ import annotations

import dagster as dg
import dataframely as dy

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema


def _columns(schema: dg.TableSchema) -> dict[str, dg.TableColumn]:
    return {column.name: column for column in schema.columns}


def test_columns_carry_dtype_description_flags_constraints_and_tags() -> None:
    columns = _columns(dd.wiring.table_schema(OrdersSchema))
    assert list(columns) == OrdersSchema.column_names()
    amount = columns["amount"]
    assert amount.type == "Float64"
    assert amount.description == OrdersSchema.columns()["amount"].description
    assert amount.constraints.nullable is True
    assert "amount >= 0" in amount.constraints.other
    assert "amount <= 5000 (warn)" in amount.constraints.other
    # Nullability and uniqueness are flags, not repeated as text.
    assert not any("null" in text for text in columns["line_item_id"].constraints.other)
    assert columns["line_item_id"].constraints.unique is True
    # Tags are strings, whatever Dataframely stored.
    assert amount.tags == {"pii": "False", "owner": "finance", "currency": "EUR", "decimals": "2"}


def test_primary_key_is_table_level_and_does_not_mark_columns_unique() -> None:
    schema = dd.wiring.table_schema(OrdersSchema)
    columns = _columns(schema)
    assert columns["order_id"].constraints.unique is False
    assert columns["line"].constraints.unique is False
    assert schema.constraints is not None
    table_level = schema.constraints.other
    assert "primary key (order_id, line) is unique" in table_level
    assert any(text.startswith("A paid") for text in table_level)
    assert any(text.endswith("(warn)") for text in table_level)  # shipped_after_ordered


def test_schema_metadata_fills_the_columns_tab_of_a_loaded_asset() -> None:
    @dg.asset(metadata={"owner": "finance", **dd.wiring.schema_metadata(OrdersSchema)})
    def orders() -> None: ...

    defs = dg.Definitions(assets=[orders])
    spec = defs.resolve_asset_graph().get(dg.AssetKey("orders"))
    assert spec.metadata["owner"] == "finance"
    assert spec.metadata["dagster/column_schema"] == dd.wiring.table_schema(OrdersSchema)
    assert list(dd.wiring.schema_metadata(OrdersSchema)) == ["dagster/column_schema"]


def test_a_schema_without_rules_has_no_table_constraints() -> None:
    class Loose(dy.Schema):
        note = dy.String(nullable=True)

    schema = dd.wiring.table_schema(Loose)
    assert schema.constraints.other == []
    assert schema.columns[0].constraints.other == []
