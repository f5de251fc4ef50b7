# ruff: noqa: E501
# (The hard-coded rows below keep one aligned line each, so a row reads as a row.)
"""Example data: a storefront's order lines, their schema, and frames to try it on.

The docs, the demo code location and the tests all use these, so every example shows the
same table. `OrdersSchema` declares each column kind and constraint kind the docs discuss;
each frame is hard-coded and documents exactly which rows break which rules.
"""

from __future__ import annotations

import datetime as dt

import dataframely as dy
import polars as pl

from ._engine.severity import warn

__all__ = ["OrdersSchema", "defective_orders", "mistyped_orders", "storefront_orders"]

STATUSES = ["pending", "paid", "shipped", "refunded"]


def is_lowercase(email: pl.Expr) -> pl.Expr:
    """The email address is lower case, so one customer has one address."""
    return email == email.str.to_lowercase()


@warn("amount|max", "note", "shipped_after_ordered")
class OrdersSchema(dy.Schema):
    """One line of a storefront order: what was bought, by whom, for how much.

    The primary key is `(order_id, line)`. Rules are `"error"` except three `"warn"` ones:
    `amount|max` (a large amount is worth a look, not a block), every rule of `note`, and
    `shipped_after_ordered` (carrier dates are often entered late or by hand).
    """

    order_id = dy.String(
        primary_key=True,
        regex=r"^ORD-\d{5}$",
        description="The order's number, as printed on the receipt.",
    )
    line = dy.Int64(primary_key=True, min=1, description="The line's position in its order.")
    line_item_id = dy.Int64(
        unique=True, description="The storefront platform's id of the line, unique across orders."
    )
    sku = dy.String(
        min_length=4, max_length=12, description="The stock-keeping unit of the product bought."
    )
    customer_email = dy.String(
        check=is_lowercase,
        description="The buyer's email address.",
        metadata={"pii": True, "owner": "crm"},
    )
    status = dy.Enum(STATUSES, description="Where the order is in its life cycle.")
    amount = dy.Float64(
        nullable=True,
        min=0,
        max=5_000,
        description="The line's price in EUR; null until the order is priced.",
        metadata={"pii": False, "owner": "finance", "currency": "EUR", "decimals": 2},
    )
    ordered_at = dy.Datetime(time_zone="UTC", description="When the order was placed.")
    shipped_on = dy.Date(nullable=True, description="The day the carrier took the parcel.")
    note = dy.String(
        nullable=True, max_length=80, description="The buyer's free-text note, if any."
    )

    @dy.rule()
    def paid_orders_have_amount(cls) -> pl.Expr:
        """A paid or shipped order has been charged: its amount is set and positive."""
        charged = cls.amount.col.is_not_null() & (cls.amount.col > 0)
        return ~cls.status.col.is_in(["paid", "shipped"]) | charged

    @dy.rule()
    def shipped_after_ordered(cls) -> pl.Expr:
        """A line is shipped on or after the day it was ordered."""
        return cls.shipped_on.col >= cls.ordered_at.col.dt.date()


#: The schema's dtypes, for building frames. Every one but `status` (an `Enum`) is the dtype
#: polars infers for plain Python values (`int`, `float`, `str`, a UTC `datetime`, `date`).
DTYPES = pl.Schema({name: column.dtype for name, column in OrdersSchema.columns().items()})

_Row = tuple[
    str, int, int, str, str | None, str, float | None, dt.datetime, dt.date | None, str | None
]


def _at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    """A moment in May 2024, in UTC."""
    return dt.datetime(2024, 5, day, hour, minute, tzinfo=dt.timezone.utc)


def _may(day: int) -> dt.date:
    return dt.date(2024, 5, day)


def _frame(rows: list[_Row]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=DTYPES, orient="row")


LONG_NOTE = (
    "Please leave the parcel with the neighbour at number 12 if nobody answers the door, "
    "and ring twice."
)

# fmt: off
_STOREFRONT: list[_Row] = [
    # order_id,  line, item, sku,        customer_email,         status,     amount, ordered_at,     shipped_on, note
    ("ORD-10001", 1, 5001, "MUG-RED",    "ana@example.com",      "shipped",  12.5,   _at(1, 9, 15),  _may(2),    None),
    ("ORD-10001", 2, 5002, "MUG-BLUE",   "ana@example.com",      "shipped",  12.5,   _at(1, 9, 15),  _may(2),    "gift wrap"),
    ("ORD-10002", 1, 5003, "TEE-M-BLK",  "ben@example.com",      "paid",     24.0,   _at(1, 14, 2),  None,       None),
    ("ORD-10003", 1, 5004, "POSTER-A2",  "chloe@example.org",    "pending",  None,   _at(2, 8, 40),  None,       None),
    ("ORD-10003", 2, 5005, "FRAME-A2",   "chloe@example.org",    "pending",  None,   _at(2, 8, 40),  None,       "matte black"),
    ("ORD-10004", 1, 5006, "LAMP-DESK",  "dev@example.net",      "refunded", 89.9,   _at(2, 19, 5),  _may(3),    "arrived broken"),
    ("ORD-10005", 1, 5007, "TEE-L-WHT",  "emil@example.com",     "paid",     24.0,   _at(3, 11, 30), None,       None),
    ("ORD-10005", 2, 5008, "SOCKS-3PK",  "emil@example.com",     "paid",     9.99,   _at(3, 11, 30), None,       None),
    ("ORD-10005", 3, 5009, "CAP-GRN",    "emil@example.com",     "paid",     4.5,    _at(3, 11, 30), None,       "coupon applied"),
    ("ORD-10006", 1, 5010, "CHAIR-OAK",  "fatima@example.com",   "shipped",  349.0,  _at(4, 16, 45), _may(6),    None),
    ("ORD-10007", 1, 5011, "DESK-OAK",   "gus@example.com",      "shipped",  1299.0, _at(5, 10, 0),  _may(5),    "deliver to reception"),
    ("ORD-10008", 1, 5012, "MUG-RED",    "hana@example.com",     "pending",  12.5,   _at(6, 7, 20),  None,       None),
]

_DEFECTIVE: list[_Row] = [
    ("ORD-20001", 1, 6001, "MUG-RED",    "ana@example.com",      "paid",     12.5,   _at(7, 9, 0),   None,       None),
    ("ORD-20001", 2, 6002, "TEE-M-BLK",  "ana@example.com",      "shipped",  24.0,   _at(7, 9, 0),   _may(8),    None),
    ("ORD-20002", 1, 6003, "POSTER-A2",  "ben@example.com",      "pending",  None,   _at(7, 12, 0),  None,       None),
    ("ORD-20003", 1, 6004, "LAMP-DESK",  "chloe@example.org",    "paid",     89.9,   _at(7, 15, 30), None,       None),
    ("ORD-20003", 1, 6004, "LAMP-DESK",  "chloe@example.org",    "paid",     89.9,   _at(7, 15, 30), None,       None),
    ("ORD-20004", 1, 6005, "CAP-GRN",    None,                   "paid",     15.0,   _at(8, 10, 10), None,       None),
    ("ORD-2005",  1, 6006, "SOCKS-3PK",  "dev@example.net",      "paid",     9.99,   _at(8, 11, 0),  None,       None),
    ("ORD-20006", 1, 6007, "TEE-L-WHT",  "Emil@Example.com",     "paid",     24.0,   _at(8, 13, 45), None,       None),
    ("ORD-20007", 1, 6008, "CHAIR-OAK",  "fatima@example.com",   "paid",     None,   _at(9, 8, 0),   None,       None),
    ("ORD-20008", 1, 6009, "SOFA-3S",    "gus@example.com",      "paid",     7450.0, _at(9, 17, 20), None,       None),
    ("ORD-20009", 1, 6010, "DESK-OAK",   "hana@example.com",     "paid",     1299.0, _at(10, 9, 5),  None,       LONG_NOTE),
    ("ORD-20010", 1, 6011, "FRAME-A2",   "ivan@example.com",     "shipped",  39.0,   _at(10, 18, 0), _may(9),    None),
    ("ORD-20011", 1, 6012, "MUG-BLUE",   "jo@example.com",       "shipped",  -20.0,  _at(11, 9, 30), _may(10),   None),
]
# fmt: on


def storefront_orders() -> pl.DataFrame:
    """Twelve order lines of eight orders, every row valid under `OrdersSchema`.

    Every status appears; the two lines of `ORD-10003` are pending with a null `amount`
    (the nullable column); five rows have a `note`.
    """
    return _frame(_STOREFRONT)


def defective_orders() -> pl.DataFrame:
    """Thirteen order lines with `OrdersSchema`'s exact dtypes, ten of them failing rules.

    By `(order_id, line)`; rules are `"error"` unless marked warn:

    - `ORD-20001` 1 and 2, `ORD-20002` 1: valid.
    - `ORD-20003` 1, twice (a retried load): `primary_key` and `line_item_id|unique`.
    - `ORD-20004` 1: null `customer_email` (not nullable): `customer_email|nullability`.
    - `ORD-2005` 1: `order_id|regex`.
    - `ORD-20006` 1: mixed-case email: `customer_email|check__is_lowercase`.
    - `ORD-20007` 1: paid with a null amount: `paid_orders_have_amount`.
    - `ORD-20008` 1: `amount|max` (warn) only.
    - `ORD-20009` 1: a 99-byte note: `note|max_length` (warn) only.
    - `ORD-20010` 1: shipped the day before it was ordered: `shipped_after_ordered` (warn) only.
    - `ORD-20011` 1, the one row failing three rules: amount -20.0 on a shipped order, shipped
      before ordered: `paid_orders_have_amount`, `amount|min` and `shipped_after_ordered`
      (warn).

    So 3 rows are valid, 3 fail only warn rules and 7 fail at least one error rule.
    """
    return _frame(_DEFECTIVE)


def mistyped_orders() -> pl.DataFrame:
    """`storefront_orders()` as a warehouse read returns it: two columns drifted in dtype.

    `amount` is `Decimal(10, 2)` (a `DECIMAL` column, as DuckDB hands it over) and `line` is
    `Int32` (an `INTEGER` column). The values are unchanged, so `OrdersSchema.cast` turns the
    frame back into `storefront_orders()` exactly; without a cast it matches no dtype check.
    """
    return storefront_orders().with_columns(
        pl.col("amount").cast(pl.Decimal(10, 2)), pl.col("line").cast(pl.Int32)
    )
