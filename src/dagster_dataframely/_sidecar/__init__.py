"""The sidecar: checks on assets defined elsewhere, read back through `sources`.

`schema_checks` and `collection_checks` build the checks, `with_schemas` attaches them to a
`Definitions`, `checks_job` runs them from the CLI, and `SchemaChecksComponent` does the same
from YAML. Imports the engine, `_checks` and `sources`.
"""
