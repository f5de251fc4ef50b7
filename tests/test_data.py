"""The example data keeps the promises its docstrings make, which docs and tests rely on."""

from __future__ import annotations

from collections import Counter

import dataframely as dy
import polars as pl
import pytest

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely.data import (
    OrdersSchema,
    defective_orders,
    mistyped_orders,
    storefront_orders,
)

SEVERITY = {rule.name: rule.severity for rule in rules(OrdersSchema)}

#: `(order_id, line)` of each failing row of `defective_orders()` -> the rules it fails.
DEFECTIVE_FAILURES = {
    ("ORD-20003", 1): {"primary_key", "line_item_id|unique"},
    ("ORD-20004", 1): {"customer_email|nullability"},
    ("ORD-2005", 1): {"order_id|regex"},
    ("ORD-20006", 1): {"customer_email|check__is_lowercase"},
    ("ORD-20007", 1): {"paid_orders_have_amount"},
    ("ORD-20008", 1): {"amount|max"},
    ("ORD-20009", 1): {"note|max_length"},
    ("ORD-20010", 1): {"shipped_after_ordered"},
    ("ORD-20011", 1): {"paid_orders_have_amount", "amount|min", "shipped_after_ordered"},
}


def failed_rules(frame: pl.DataFrame) -> list[tuple[tuple[str, int], set[str]]]:
    """Each failing row's `(order_id, line)` with the names of the rules it fails."""
    _, failure = OrdersSchema.filter(frame, cast=False)
    details = failure.details()
    names = [name for name in SEVERITY if name in details.columns]
    return [
        ((row["order_id"], row["line"]), {name for name in names if row[name] == "invalid"})
        for row in details.iter_rows(named=True)
    ]


@pytest.mark.parametrize("build", [storefront_orders, defective_orders, mistyped_orders])
def test_every_call_returns_a_fresh_frame(build) -> None:
    first = build()
    first[0, "order_id"] = "changed"
    assert build()[0, "order_id"] != "changed"


def test_storefront_orders_are_all_valid() -> None:
    frame = storefront_orders()
    valid, failure = OrdersSchema.filter(frame, cast=False)
    assert len(failure) == 0
    assert valid.equals(frame)
    OrdersSchema.validate(frame)  # raises on any failure


def test_storefront_orders_show_every_status_and_null_amounts() -> None:
    frame = storefront_orders()
    assert set(frame["status"]) == {"pending", "paid", "shipped", "refunded"}
    assert frame["amount"].null_count() > 0


@pytest.mark.parametrize("build", [storefront_orders, defective_orders])
def test_frames_have_exactly_the_schema_dtypes(build) -> None:
    frame = build()
    assert frame.schema == {name: c.dtype for name, c in OrdersSchema.columns().items()}


def test_plain_polars_values_infer_the_schema_dtypes_except_the_enum() -> None:
    # A user's frame built from plain Python values matches without a cast (bar `status`).
    inferred = pl.DataFrame(storefront_orders().to_dicts()).schema
    declared = {name: column.dtype for name, column in OrdersSchema.columns().items()}
    drift = {name for name, dtype in declared.items() if inferred[name] != dtype}
    assert drift == {"status"}


def test_defective_orders_fail_the_documented_rules_per_row() -> None:
    failures = failed_rules(defective_orders())
    by_row: dict[tuple[str, int], set[str]] = {}
    for key, names in failures:
        assert by_row.setdefault(key, names) == names  # both duplicate rows fail alike
    assert by_row == DEFECTIVE_FAILURES
    assert len(failures) == 10


def test_defective_orders_counts_per_rule() -> None:
    _, failure = OrdersSchema.filter(defective_orders(), cast=False)
    assert failure.counts() == {
        "paid_orders_have_amount": 2,
        "shipped_after_ordered": 2,
        "primary_key": 2,
        "line_item_id|unique": 2,
        "order_id|regex": 1,
        "customer_email|nullability": 1,
        "customer_email|check__is_lowercase": 1,
        "amount|min": 1,
        "amount|max": 1,
        "note|max_length": 1,
    }


def test_defective_orders_have_valid_warn_only_and_error_rows() -> None:
    frame = defective_orders()
    valid, _ = OrdersSchema.filter(frame, cast=False)
    assert len(valid) == 3
    kinds = Counter(
        "warn-only" if all(SEVERITY[n] == "warn" for n in names) else "error"
        for _, names in failed_rules(frame)
    )
    assert kinds == {"error": 7, "warn-only": 3}


def test_exactly_one_defective_row_fails_three_rules() -> None:
    triples = [key for key, names in failed_rules(defective_orders()) if len(names) >= 3]
    assert triples == [("ORD-20011", 1)]


def test_defective_orders_break_a_key_and_a_non_nullable_column() -> None:
    frame = defective_orders()
    assert frame.select("order_id", "line").is_duplicated().sum() == 2
    assert not OrdersSchema.customer_email.nullable
    assert frame["customer_email"].null_count() == 1


def test_mistyped_orders_fail_dtype_matching_without_a_cast() -> None:
    frame = mistyped_orders()
    assert frame.schema["amount"] == pl.Decimal(10, 2)
    assert frame.schema["line"] == pl.Int32
    assert not OrdersSchema.is_valid(frame)
    with pytest.raises(dy.exc.SchemaError, match="amount") as raised:
        OrdersSchema.validate(frame)
    assert "line" in str(raised.value)


def test_mistyped_orders_pass_after_schema_cast() -> None:
    cast = OrdersSchema.cast(mistyped_orders())
    assert cast.equals(storefront_orders())
    assert OrdersSchema.is_valid(cast)


def test_schema_has_two_schema_level_rules_one_of_them_warn() -> None:
    schema_rules = {r.name: r for r in rules(OrdersSchema) if r.column is None}
    assert set(schema_rules) == {"primary_key", "paid_orders_have_amount", "shipped_after_ordered"}
    assert schema_rules["paid_orders_have_amount"].severity == "error"
    assert schema_rules["shipped_after_ordered"].severity == "warn"
    # The rules' docstrings are their descriptions.
    assert schema_rules["paid_orders_have_amount"].description.startswith("A paid or shipped")


def test_warn_rules_are_the_declared_ones() -> None:
    warned = {name for name, severity in SEVERITY.items() if severity == "warn"}
    assert warned == {"amount|max", "note|max_length", "shipped_after_ordered"}


def test_rule_catalogue_builds_with_valid_check_names() -> None:
    catalogue = rules(OrdersSchema)
    assert not any(name.startswith("dy_") for name in OrdersSchema.column_names())
    assert all(r.check_name.replace("_", "").isalnum() for r in catalogue)
    assert len({r.check_name for r in catalogue}) == len(catalogue)
    assert "dy_rule__customer_email__check__is_lowercase" in {r.check_name for r in catalogue}


def test_schema_documents_every_column_and_tags_some() -> None:
    columns = OrdersSchema.columns()
    assert all(column.description for column in columns.values())
    assert OrdersSchema.primary_key() == ["order_id", "line"]
    tags = columns["amount"].metadata or {}
    assert tags["owner"] == "finance"
    assert any(not isinstance(value, str) for value in tags.values())


def test_demo_package_reexports_the_same_objects() -> None:
    from dagster_dataframely_demo._data import storefront_orders as demo_orders
    from dagster_dataframely_demo.schema import Orders

    assert Orders is OrdersSchema
    assert demo_orders is storefront_orders
