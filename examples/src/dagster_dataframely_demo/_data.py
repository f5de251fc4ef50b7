"""The demo's source data: two weeks of a storefront, generated the same on every machine.

`storefront_orders` is the hard-coded frame the docs use. The rest comes from one seeded
generator: products, customers, about 8,000 order lines and their payments. Most rows are
valid; about one order line in thirty breaks a rule of `Orders` the way real feeds break (a
retried load repeats a line, a form lets a capitalised or missing email through, a paid line
arrives unpriced, a refund is keyed in as a negative amount), and a few more only trip a
`"warn"` rule (a bulk order, a long note, a carrier date before the order date). Two
customers were registered with a country name instead of its code.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from dagster_dataframely.data import DTYPES, storefront_orders

from .schema import Customers

__all__ = ["Storefront", "generate", "storefront_orders"]

SEED = 2024
ORDERS = 4_000
FIRST_DAY = dt.date(2024, 5, 1)
DAYS = 14

_PRODUCTS = [
    ("MUG-RED", "Red mug", "kitchen", 12.5),
    ("MUG-BLUE", "Blue mug", "kitchen", 12.5),
    ("KETTLE-STL", "Steel kettle", "kitchen", 39.0),
    ("TEE-M-BLK", "T-shirt M black", "apparel", 24.0),
    ("TEE-L-WHT", "T-shirt L white", "apparel", 24.0),
    ("SOCKS-3PK", "Socks, three pairs", "apparel", 9.99),
    ("CAP-GRN", "Green cap", "apparel", 4.5),
    ("LAMP-DESK", "Desk lamp", "home", 89.9),
    ("RUG-WOOL", "Wool rug", "home", 149.0),
    ("CHAIR-OAK", "Oak chair", "furniture", 349.0),
    ("DESK-OAK", "Oak desk", "furniture", 1299.0),
    ("SHELF-PINE", "Pine shelf", "furniture", 219.0),
    ("POSTER-A2", "Poster A2", "prints", 19.0),
    ("FRAME-A2", "Frame A2", "prints", 39.0),
]
_FIRST = ["ana", "ben", "chloe", "dev", "emil", "fatima", "gus", "hana", "ivan", "jo"]
_LAST = ["meyer", "novak", "silva", "khan", "rossi", "berg", "dubois", "smit", "wolf", "lund"]
_COUNTRIES = ["DE", "FR", "NL", "AT", "BE", "DK", "IT", "ES"]
_NOTES = ["gift wrap", "leave at the door", "coupon applied", "deliver to reception"]
_LONG_NOTE = (
    "Please leave the parcel with the neighbour at number 12 if nobody answers the door, "
    "and ring twice."
)
_STATUS = (["pending"] * 10) + (["paid"] * 35) + (["shipped"] * 50) + (["refunded"] * 5)

# How often each defect is injected into an order line (the rest are valid).
_DEFECTS = {
    "retried_load": 0.004,  # the line arrives twice: primary key, line_item_id unique
    "capitalised_email": 0.005,  # customer_email is lower case
    "missing_email": 0.003,  # customer_email not null
    "short_order_id": 0.002,  # order_id regex
    "unpriced_paid_line": 0.005,  # paid_orders_have_amount
    "negative_refund": 0.002,  # amount >= 0 (and paid_orders_have_amount)
    "bulk_order": 0.003,  # amount <= 5000 (warn)
    "long_note": 0.003,  # note byte length <= 80 (warn)
    "early_carrier_date": 0.005,  # shipped_after_ordered (warn)
}


@dataclass(frozen=True)
class Storefront:
    """Every table the demo's source assets return."""

    products: pl.DataFrame
    customers: pl.DataFrame
    order_lines: pl.DataFrame
    payments: pl.DataFrame


def generate(seed: int = SEED) -> Storefront:
    """The storefront's tables; the same rows for the same seed, on every machine."""
    rng = random.Random(seed)
    customers = _customers(rng)
    lines = pl.DataFrame(list(_order_lines(rng, customers["customer_email"].to_list())))
    order_lines = lines.cast(DTYPES).select(DTYPES.names())
    products = pl.DataFrame(_PRODUCTS, schema=["sku", "name", "category", "price"], orient="row")
    return Storefront(
        products=products,
        customers=customers,
        order_lines=order_lines,
        payments=_payments(rng, order_lines),
    )


def _customers(rng: random.Random) -> pl.DataFrame:
    rows = []
    for number in range(400):
        first, last = _FIRST[number % 10], _LAST[number // 10 % 10]
        email = f"{first}.{last}{number // 100 or ''}@example.com"
        country = rng.choice(_COUNTRIES)
        rows.append((email, f"{first.title()} {last.title()}", country, _signup(rng)))
    rows[17] = (*rows[17][:2], "Germany", rows[17][3])  # a name, not a code
    rows[251] = (*rows[251][:2], "Denmark", rows[251][3])
    return pl.DataFrame(rows, schema=list(Customers.columns()), orient="row")


def _signup(rng: random.Random) -> dt.date:
    return dt.date(2022, 1, 1) + dt.timedelta(days=rng.randrange(850))


def _order_lines(rng: random.Random, emails: list[str]) -> Iterator[dict[str, object]]:
    item = 700_000
    for number in range(ORDERS):
        order_id = f"ORD-{30_001 + number}"
        email = rng.choice(emails)
        status = rng.choice(_STATUS)
        day = FIRST_DAY + dt.timedelta(days=number * DAYS // ORDERS)
        ordered_at = dt.datetime.combine(day, dt.time(rng.randrange(7, 23), rng.randrange(60)))
        ordered_at = ordered_at.replace(tzinfo=dt.timezone.utc)
        shipped = status == "shipped" or (status == "refunded" and rng.random() < 0.5)
        shipped_on = day + dt.timedelta(days=rng.randrange(4)) if shipped else None
        for line in range(1, rng.choice([1, 1, 1, 2, 2, 3]) + 1):
            item += 1
            sku, _, _, price = rng.choice(_PRODUCTS)
            amount = None if status == "pending" and rng.random() < 0.4 else price
            row = {
                "order_id": order_id,
                "line": line,
                "line_item_id": item,
                "sku": sku,
                "customer_email": email,
                "status": status,
                "amount": amount,
                "ordered_at": ordered_at,
                "shipped_on": shipped_on,
                "note": rng.choice(_NOTES) if rng.random() < 0.12 else None,
            }
            yield from _with_defect(rng, row)


def _with_defect(rng: random.Random, row: dict[str, object]) -> Iterator[dict[str, object]]:
    """`row`, possibly broken by one defect (or repeated, for a retried load)."""
    draw, defect = rng.random(), None
    for name, rate in _DEFECTS.items():
        if draw < rate:
            defect = name
            break
        draw -= rate
    if defect == "capitalised_email":
        row["customer_email"] = str(row["customer_email"]).capitalize()
    elif defect == "missing_email":
        row["customer_email"] = None
    elif defect == "short_order_id":
        row["order_id"] = str(row["order_id"])[:-1]
    elif defect == "unpriced_paid_line":
        row |= {"status": "paid", "amount": None, "shipped_on": None}
    elif defect == "negative_refund":
        row["amount"] = -abs(float(row["amount"] or 20.0))  # type: ignore[arg-type]
        row["status"] = "shipped"
        row["shipped_on"] = row["shipped_on"] or FIRST_DAY + dt.timedelta(days=DAYS)
    elif defect == "bulk_order":
        row |= {"sku": "DESK-OAK", "amount": 1299.0 * rng.randrange(4, 8)}
    elif defect == "long_note":
        row["note"] = _LONG_NOTE
    elif defect == "early_carrier_date":
        ordered = row["ordered_at"].date()  # type: ignore[attr-defined]
        row |= {"status": "shipped", "shipped_on": ordered - dt.timedelta(days=1)}
        row["amount"] = row["amount"] or 24.0
    yield row
    if defect == "retried_load":
        yield dict(row)


def _payments(rng: random.Random, order_lines: pl.DataFrame) -> pl.DataFrame:
    """One payment per charged order: the sum of its priced lines."""
    charged = (
        order_lines.filter(pl.col("status").is_in(["paid", "shipped", "refunded"]))
        .group_by("order_id", maintain_order=True)
        .agg(
            pl.col("amount").filter(pl.col("amount") > 0).sum().round(2),
            pl.col("ordered_at").first(),
        )
        .filter(pl.col("amount") > 0)
    )
    methods = [rng.choice(["card", "card", "paypal", "invoice"]) for _ in range(charged.height)]
    minutes = [rng.randrange(1, 120) for _ in range(charged.height)]
    return charged.select(
        payment_id=pl.format("PAY-{}", pl.int_range(100_001, 100_001 + pl.len()).cast(pl.String)),
        order_id="order_id",
        method=pl.Series(methods),
        amount="amount",
        captured_at=pl.col("ordered_at") + pl.duration(minutes=pl.lit(pl.Series(minutes))),
    )
