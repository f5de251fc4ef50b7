"""The engine's rules as Dagster sees them: asset keys, check specs, the Columns tab and check
results.

The only reader of Dagster's private step API is `step_internals`; the only hook into how
Dagster builds the asset graph is `graph_internals`. Imports the engine and
`errors`; nothing here knows which entry point (gated asset or sidecar) it serves.
"""
