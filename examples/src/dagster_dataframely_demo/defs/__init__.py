"""Definitions declared in the defs folder: `dg.load_defs` loads each module and `defs.yaml`
below (here, the payments tables, their `dd.SchemaChecksComponent`, and the folder that gives
them their Columns tab)."""
