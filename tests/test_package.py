"""The public surface DESIGN.md names: every name importable from where users look for it."""

import subprocess
import sys

import pytest

import dagster_dataframely as dd

ROOT = [
    "asset",
    "schema_checks",
    "with_schemas",
    "warn",
    "ParquetIOManager",
    "collection_checks",
    "testing",
    "check_report",
]
WIRING = [
    "schema_metadata",
    "table_schema",
    "check_specs",
    "check_results",
    "validation_results",
    "AssetYield",
    "QuarantineWriter",
    "delegating_writer",
    "file_writer",
    "validate_quarantine_key",
    "quarantine_frame",
    "quarantine_path",
    "check_name",
    "rules",
]
ERRORS = [
    "DagsterDataframelyError",
    "ColumnSchemaError",
    "ValidationAbortError",
    "NoValidRowsError",
    "QuarantineKeyCollisionError",
    "ReservedColumnError",
    "CheckNameCollisionError",
    "InvalidSeverityError",
    "InvalidSettingError",
    "UnsupportedSchemaError",
    "CollectionMemberError",
    "MemberPartitionsError",
]


@pytest.mark.parametrize("name", [*ROOT, "SchemaChecksComponent", "data", "errors", "wiring"])
def test_root_names(name: str) -> None:
    assert name in dd.__all__
    assert getattr(dd, name) is not None


@pytest.mark.parametrize("name", WIRING)
def test_wiring_names(name: str) -> None:
    assert name in dd.wiring.__all__
    assert getattr(dd.wiring, name) is not None


@pytest.mark.parametrize("name", ERRORS)
def test_every_error_derives_from_the_base(name: str) -> None:
    error = getattr(dd.errors, name)
    assert issubclass(error, dd.errors.DagsterDataframelyError)


def test_pandera_is_a_submodule_loaded_on_first_use() -> None:
    code = (
        "import sys, dagster_dataframely as dd\n"
        "assert 'pandera' not in sys.modules, 'importing the package must not import pandera'\n"
        "assert callable(dd.pandera.to_dataframely) and callable(dd.pandera.migrate)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_unknown_attributes_still_raise() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        dd.nope  # type: ignore[attr-defined]  # noqa: B018
