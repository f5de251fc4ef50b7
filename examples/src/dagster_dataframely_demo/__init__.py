"""The dagster-dataframely demo: storefront orders, checked by their schema.

`definitions.py` is a Dagster code location (`dagster dev -m dagster_dataframely_demo.definitions`);
`python -m dagster_dataframely_demo` materializes it once and prints what the checks found.
"""
