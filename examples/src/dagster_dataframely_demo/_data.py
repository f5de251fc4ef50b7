"""The demo's source data: the hard-coded storefront order lines, every row valid."""

from dagster_dataframely.data import storefront_orders

__all__ = ["storefront_orders"]
