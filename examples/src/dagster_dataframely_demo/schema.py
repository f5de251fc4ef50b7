"""The demo's table schema: the storefront order lines of `dagster_dataframely.data`.

Re-exported, not redefined, so the demo, the docs and the tests check one and the same schema.
"""

from dagster_dataframely.data import OrdersSchema as Orders

__all__ = ["Orders"]
