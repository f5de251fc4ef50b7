"""The rule catalogue: names, owners, severities, descriptions, and the definition-time guards."""

from __future__ import annotations

import warnings

import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema
from dagster_dataframely.errors import (
    CheckNameCollisionError,
    InvalidSeverityError,
    ReservedColumnError,
    UnsupportedSchemaError,
)
from dagster_dataframely.wiring import check_name, rules


def _by_name(schema: type[dy.Schema], **kwargs: object) -> dict[str, dd.wiring.Rule]:
    return {rule.name: rule for rule in rules(schema, **kwargs)}  # type: ignore[arg-type]


def test_every_rule_has_its_column_check_name_and_severity() -> None:
    catalogue = _by_name(OrdersSchema)
    assert catalogue["amount|min"].column == "amount"
    assert catalogue["amount|min"].check_name == "dy_rule__amount__min"
    assert catalogue["amount|min"].severity == "error"
    assert catalogue["amount|max"].severity == "warn"  # declared with @dd.warn
    assert catalogue["primary_key"].column is None
    assert catalogue["paid_orders_have_amount"].column is None
    assert catalogue["paid_orders_have_amount"].check_name == "dy_rule__paid_orders_have_amount"


class Piped(dy.Schema):
    a = dy.Int64(min=0)
    a_b = dy.Int64(alias="a|b", min=1)
    a_b_c = dy.Int64(alias="a|b|c", nullable=True, max=9)


def test_a_rule_belongs_to_the_longest_column_its_name_starts_with() -> None:
    # A column name may hold `|`, the separator of a rule name: `a|b|c|max` is `a|b|c`'s,
    # `a|b|min` is `a|b`'s, not `a`'s rule `b|min`; names and the Columns tab follow.
    catalogue = _by_name(Piped)

    owners = {name: (rule.column, rule.description) for name, rule in catalogue.items()}

    assert owners["a|min"] == ("a", "a >= 0")
    assert owners["a|b|min"] == ("a|b", "a|b >= 1")
    assert owners["a|b|c|max"] == ("a|b|c", "a|b|c <= 9")
    assert owners["a|b|nullability"][0] == "a|b"


def test_warn_on_a_piped_column_reaches_its_rules_only() -> None:
    catalogue = _by_name(Piped, warn="a|b")

    assert catalogue["a|b|min"].severity == "warn"
    assert catalogue["a|min"].severity == catalogue["a|b|c|max"].severity == "error"


def test_descriptions_come_from_docstrings_else_rendered_constraints() -> None:
    catalogue = _by_name(OrdersSchema)
    assert catalogue["amount|min"].description == "amount >= 0"
    assert catalogue["amount|max"].description == "amount <= 5000"
    assert catalogue["sku|max_length"].description == "byte length of sku <= 12"
    assert catalogue["order_id|regex"].description == r"order_id matches /^ORD-\d{5}$/"
    assert catalogue["primary_key"].description == "primary key (order_id, line) is unique"
    assert catalogue["paid_orders_have_amount"].description.startswith("A paid")
    assert catalogue["customer_email|check__is_lowercase"].description  # its docstring
    assert "check__" not in catalogue["customer_email|check__is_lowercase"].description


def test_nested_rules_are_described_through_their_inner_column() -> None:
    class Nested(dy.Schema):
        tags = dy.List(dy.String(min_length=2), max_length=3)
        where = dy.Struct({"zip": dy.String(regex=r"^\d{5}$")})
        unnamed = dy.Int64(check=lambda c: c > 0)

    catalogue = _by_name(Nested)
    assert catalogue["tags|inner_min_length"].description == (
        "every element of tags: byte length of element >= 2"
    )
    assert catalogue["tags|max_length"].description == "length of tags <= 3"
    assert catalogue["where|inner_zip_regex"].description == r"where.zip matches /^\d{5}$/"
    assert catalogue["unnamed|check"].description == "unnamed > 0"


def test_warn_accepts_rule_and_column_names_and_adds_per_call() -> None:
    @dd.warn("amount")
    class Warned(dy.Schema):
        amount = dy.Float64(min=0, max=10)
        qty = dy.Int64(min=1)

    catalogue = _by_name(Warned)
    assert {n for n, r in catalogue.items() if r.severity == "warn"} == {
        "amount|nullability",
        "amount|min",
        "amount|max",
        "amount|inf",
        "amount|nan",
    }
    assert _by_name(Warned, warn=["qty|min"])["qty|min"].severity == "warn"
    assert _by_name(Warned)["qty|min"].severity == "error"  # per call, not stored


def test_warn_rejects_unknown_names_at_decoration_listing_the_rules() -> None:
    with pytest.raises(InvalidSeverityError) as raised:

        @dd.warn("amount|maximum")
        class _Typo(dy.Schema):
            amount = dy.Float64(max=10)

    message = str(raised.value)
    assert "'amount|maximum'" in message
    assert "amount|max" in message  # the real rule names are listed
    with pytest.raises(InvalidSeverityError):
        rules(OrdersSchema, warn=["no_such_rule"])


def test_reserved_columns_are_refused_at_definition_time() -> None:
    class Reserved(dy.Schema):
        dy_rule__amount__min = dy.Int64()

    with pytest.raises(ReservedColumnError, match="dy_rule__amount__min"):
        rules(Reserved)


def test_two_rules_with_one_check_name_are_refused() -> None:
    class Clash(dy.Schema):
        a = dy.Int64(check={"check__x": lambda c: c > 0})
        a__check = dy.Int64(check={"x": lambda c: c > 0})

    # `a|check__check__x` and `a__check|check__x` both become dy_rule__a__check__check__x.
    with pytest.raises(CheckNameCollisionError, match="dy_rule__a__check__check__x"):
        rules(Clash)


def test_objects_that_are_not_schemas_are_refused() -> None:
    with pytest.raises(UnsupportedSchemaError, match=r"dataframely\.Schema"):
        rules(pl.DataFrame)


def test_check_name_replaces_the_separator() -> None:
    assert check_name("amount|min") == "dy_rule__amount__min"
    assert check_name("primary_key") == "dy_rule__primary_key"


EXPRESSIONS = [
    pl.col("amount") >= 0,
    pl.col("a").is_in(["x", "y"]),
    pl.col("a").is_between(1, 3),
    ~(pl.col("a") > 1.5),
    pl.col("a").filter(pl.col("b") > 0).sum() > 0,
    (pl.col("a") + 1) * 2 > 3,
    pl.struct("a", "b").is_unique(),
    pl.col("s").str.contains(r"^[A-Z]{2}\d$") | pl.col("s").is_null(),
    pl.col("s").str.contains("line\nbreak\\d"),
]


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=str)
def test_a_rules_expression_reads_as_the_polars_code_that_builds_it(expr: pl.Expr) -> None:
    class Schema(dy.Schema):
        a = dy.Int64(nullable=True)

        @dy.rule()
        def the_rule(cls) -> pl.Expr:
            return expr

    (rule,) = [r for r in rules(Schema) if r.name == "the_rule"]
    assert "dyn int" not in rule.expression and not rule.expression.startswith("[")
    # The text is the code: pasted, it raises no SyntaxWarning and builds the same expression.
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        pasted = compile(rule.expression, "<pasted>", "eval")
    assert str(eval(pasted, {"pl": pl})) == str(expr)


def test_a_custom_check_is_described_by_what_its_expression_tests() -> None:
    class Custom(dy.Schema):
        kind = dy.String(check=lambda c: c.is_in(["a", "b"]))
        amount = dy.Int64(check={"positive": lambda c: c > 0})
        code = dy.String(check={"pattern": lambda c: c.str.contains(r"^\d+$")})

    catalogue = _by_name(Custom)

    assert catalogue["kind|check"].description == 'kind in ["a", "b"]'
    assert catalogue["amount|check__positive"].description == "amount > 0"
    assert catalogue["code|check__pattern"].description == 'code.str.contains(r"^\d+$")'
