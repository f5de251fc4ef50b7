"""Definitions declared in YAML: `dg.load_defs` turns each `defs.yaml` below into Dagster
definitions (here, the payments tables' `dd.SchemaChecksComponent`)."""
