"""The demo's table schemas.

`Orders` is re-exported, not redefined, so the demo, the docs and the tests check one and the
same schema. The other tables of the storefront are declared here.
"""

import dataframely as dy
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema as Orders
from dagster_dataframely.data import is_lowercase

__all__ = ["CATEGORIES", "Customers", "DailySales", "Orders", "Products"]

CATEGORIES = ["kitchen", "apparel", "home", "furniture", "prints"]


class Products(dy.Schema):
    """The catalogue: one row per stock-keeping unit."""

    sku = dy.String(primary_key=True, min_length=4, max_length=12, description="The product.")
    name = dy.String(min_length=1, description="The product's name in the shop.")
    category = dy.String(
        regex="^(" + "|".join(CATEGORIES) + ")$", description="Where the shop lists it."
    )
    price = dy.Float64(min_exclusive=0, description="The list price in EUR.")


class Customers(dy.Schema):
    """The customer register, one row per email address."""

    customer_email = dy.String(
        primary_key=True,
        check=is_lowercase,
        description="The customer's email address, lower case.",
        metadata={"pii": True},
    )
    name = dy.String(description="The customer's name.", metadata={"pii": True})
    country = dy.String(
        regex=r"^[A-Z]{2}$", description="ISO 3166 code of the delivery country, e.g. DE."
    )
    signed_up_on = dy.Date(description="When the customer registered.")


@dd.warn("within_catalogue_prices")
class DailySales(dy.Schema):
    """Revenue per product and day, from the valid order lines; one partition per day."""

    day = dy.Date(primary_key=True, description="The day the lines were ordered.")
    sku = dy.String(primary_key=True, description="The product.")
    lines = dy.UInt32(min=1, description="Order lines of the product that day.")
    revenue = dy.Float64(min=0, description="Sum of the lines' amounts in EUR.")

    @dy.rule()
    def within_catalogue_prices(cls) -> pl.Expr:
        """On average, a line costs at most the dearest product (1,299 EUR): more is a bulk
        order worth a look."""
        return cls.revenue.col <= cls.lines.col * 1_299
