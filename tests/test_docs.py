"""Every Python block of `docs/*.md` and `README.md` runs, and does what its page says.

A page's first Python block is its setup. Each later block runs after it in a fresh namespace,
as a reader pastes them; what the block defines (assets, checks, `Definitions`) is materialized
in a real run, and the outcome the page states for it (`STATED` below: tables written and
their row counts, failing checks and their severities, the error that fails the run) is
asserted. A block not meant to run starts with `# Not run: <why>`, visibly, on the page. The
Component page's `defs.yaml` block is loaded as a real Component.

A block the site executes at build time (markdown-exec: ```` ```python exec="on" session="x" ````,
its printed output rendered below it) runs here as it runs there: after the page's setup and
the earlier blocks of its session, in one namespace. A hidden block (`exec="on"` without
`source=`) is the build's scaffolding, one of `SCAFFOLDING`: it moves the build into a
temporary folder and back, so examples that write to relative paths leave the repository
clean. The test skips it, because it runs every block in its own temporary folder.
"""

from __future__ import annotations

import io
import pickle
import re
from collections.abc import Callable, Mapping
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
import yaml
from dagster.components.testing import create_defs_folder_sandbox
from support import evaluations, materialization, step_error

import dagster_dataframely as dd
from dagster_dataframely.data import (
    OrdersSchema,
    defective_orders,
    mistyped_orders,
    storefront_orders,
)

ROOT = Path(__file__).resolve().parents[1]
#: Pages whose blocks build on each other in one namespace: each is run whole by its own test.
RUN_WHOLE = {
    "docs/collections.md": "tests/test_collection_docs.py",
    "docs/sources.md": "tests/test_sources_dbt.py",
    "docs/infer.md": "tests/test_infer_docs.py",
    "docs/report.md": "tests/test_report.py",
}
PAGES = sorted(
    page
    for page in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    if page.relative_to(ROOT).as_posix() not in RUN_WHOLE
)
_FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.S | re.M)
_SESSION = re.compile(r'\bsession="([^"]+)"')
_ANY_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_NOT_RUN = re.compile(r"\A# Not run: (\S.*)")
#: The hidden blocks a page may have: into a temporary folder at a session's start, and back.
SCAFFOLDING = {
    "import os, tempfile\n\n_cwd = os.getcwd()\n"
    "os.chdir(tempfile.mkdtemp())  # the build writes aside\n",
    "os.chdir(_cwd)\n",
}

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


@dataclass(frozen=True)
class Block:
    page: str
    heading: str
    code: str
    #: The earlier blocks of its markdown-exec session, which run before it.
    before: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.page}: {self.heading}"


def _blocks(path: Path) -> tuple[str, list[Block]]:
    """The page's setup code and its other Python blocks, each named by the heading it stands
    under (`#2`, `#3` for a heading's later blocks)."""
    text = path.read_text()
    page = path.relative_to(ROOT).as_posix()
    found: list[tuple[str, str, str | None]] = []
    for match in _FENCE.finditer(text):
        prose = _ANY_FENCE.sub("", text[: match.start()])  # a `# comment` is no heading
        headings = re.findall(r"^#+ (.+)$", prose, re.M)
        session = _SESSION.search(match.group(1))
        if 'exec="on"' in match.group(1) and "source=" not in match.group(1):
            assert match.group(2) in SCAFFOLDING, f"{page}: a hidden block that is no scaffolding"
            continue
        found.append(
            (headings[-1] if headings else page, match.group(2), session and session.group(1))
        )
    if not found:
        return "", []
    (_, setup, _), *examples = found
    blocks: list[Block] = []
    sessions: dict[str, list[str]] = {}
    for heading, code, session in examples:
        seen = sum(block.heading.split(" #")[0] == heading for block in blocks)
        before = tuple(sessions.setdefault(session, [])) if session else ()
        blocks.append(Block(page, f"{heading} #{seen + 1}" if seen else heading, code, before))
        if session:
            sessions[session].append(code)
    return setup, blocks


SETUPS = {page.relative_to(ROOT).as_posix(): _blocks(page)[0] for page in PAGES}
BLOCKS = [block for page in PAGES for block in _blocks(page)[1]]
RUNNABLE = [block for block in BLOCKS if not _NOT_RUN.match(block.code)]


def _run(block: Block, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Execute the page's setup, then the block, in one fresh namespace, and return it.
    `overrides` replace names the setup defined (the data an example reads)."""
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(SETUPS[block.page], f"<{block.page} setup>", "exec", dont_inherit=True), namespace)
    namespace.update(overrides or {})
    for index, code in enumerate(block.before):
        exec(compile(code, f"<{block.id} before #{index}>", "exec", dont_inherit=True), namespace)
    exec(compile(block.code, f"<{block.id}>", "exec", dont_inherit=True), namespace)
    return namespace


# ------------------------------------ a real run ------------------------------------ #


@dataclass(frozen=True)
class Run:
    """What a page says a run of its example does.

    - `tables`: asset key -> rows the stored table holds (None: not written);
    - `failed`: the failing checks and their severities; every other check passes;
    - `error`: the class of the error that fails the run; `message`: words its message has;
    - `upstream`: what an upstream asset the example reads (`raw_orders`) holds;
    - `overrides`: names of the page's setup replaced for this run (the example's data);
    - `columns`: the written table's columns; `metadata`: entries its materialization carries;
    - `described`: assets whose definition carries the Columns tab.
    """

    tables: Mapping[str, int | None]
    failed: Mapping[str, dg.AssetCheckSeverity] = field(default_factory=dict)
    error: str | None = None
    upstream: Callable[[], pl.DataFrame] = storefront_orders
    overrides: Mapping[str, Any] = field(default_factory=dict)
    message: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None
    metadata: Mapping[str, frozenset[str]] = field(default_factory=dict)
    described: tuple[str, ...] = ()


def _definitions(defined: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The assets and checks a block defined, and the resources of its `Definitions`."""
    for value in defined.values():
        if isinstance(value, dg.Definitions):
            return [*(value.assets or ()), *(value.asset_checks or ())], dict(value.resources or {})
    kinds = (dg.AssetsDefinition, dg.AssetChecksDefinition)
    return [value for value in defined.values() if isinstance(value, kinds)], {}


def _upstreams(definitions: list[Any], frame: Callable[[], pl.DataFrame]) -> list[Any]:
    """An asset for every input key the block reads but does not define, holding `frame()`."""
    defined = {key for d in definitions if isinstance(d, dg.AssetsDefinition) for key in d.keys}
    wanted = {
        key
        for d in definitions
        if isinstance(d, dg.AssetsDefinition)
        for key in d.keys_by_input_name.values()
    }

    def upstream(key: dg.AssetKey) -> dg.AssetsDefinition:
        @dg.asset(key=key)
        def _upstream() -> pl.DataFrame:
            return frame()

        return _upstream

    return [upstream(key) for key in sorted(wanted - defined, key=str)]


def _stored(resources: Mapping[str, Any], key: str) -> pl.DataFrame | None:
    """The table the run's IO manager stored for `key`, None if it wrote none."""
    manager = resources["io_manager"]
    asset_key = dg.AssetKey.from_user_string(key)
    if isinstance(manager, dd.ParquetIOManager):
        path = manager.path_for(asset_key)
        return pl.read_parquet(str(path)) if path.exists() else None
    file = Path(manager.base_dir).joinpath(*asset_key.path)
    if not file.is_file():
        return None
    with file.open("rb") as stream:
        stored = pickle.load(stream)
    return stored.collect() if isinstance(stored, pl.LazyFrame) else stored


def materialize(defined: Mapping[str, Any], run: Run, tmp_path: Path) -> dg.ExecuteInProcessResult:
    """Materialize what a block defined, and assert the outcome `run` states."""
    definitions, resources = _definitions(defined)
    assert definitions, "the block defines nothing to run"
    resources.setdefault("io_manager", dg.FilesystemIOManager(base_dir=str(tmp_path / "storage")))
    result = dg.materialize(
        [*definitions, *_upstreams(definitions, run.upstream)],
        resources=resources,
        raise_on_error=False,
    )

    assert result.success is (run.error is None)
    if run.error is not None:
        error, message = step_error(result)
        assert error == run.error
        assert all(word in message for word in run.message), message
    for key, rows in run.tables.items():
        stored = _stored(resources, key)
        assert (stored.height if stored is not None else None) == rows, key
        if run.columns is not None and stored is not None and not key.endswith("_quarantine"):
            assert tuple(stored.columns) == run.columns
    checks = evaluations(result)
    assert checks, "the run reported no check"
    failing = {name: e.severity for name, e in checks.items() if not e.passed}
    assert failing == dict(run.failed)
    for key, entries in run.metadata.items():
        assert entries <= set(materialization(result, key)), key
    specs = {
        key.to_user_string(): spec
        for d in definitions
        if isinstance(d, dg.AssetsDefinition)
        for key, spec in d.specs_by_key.items()
    }
    for key in run.described:
        assert "dagster/column_schema" in specs[key].metadata, key
    return result


# --------------------------------- what each page states -------------------------------- #

ORDERS_COLUMNS = tuple(OrdersSchema.column_names())
#: The checks `defective_orders()` fails, and their rules' severities.
DEFECTIVE_FAILS = {
    "dy_rule__primary_key": ERROR,
    "dy_rule__line_item_id__unique": ERROR,
    "dy_rule__order_id__regex": ERROR,
    "dy_rule__customer_email__nullability": ERROR,
    "dy_rule__customer_email__check__is_lowercase": ERROR,
    "dy_rule__amount__min": ERROR,
    "dy_rule__paid_orders_have_amount": ERROR,
    "dy_rule__amount__max": WARN,
    "dy_rule__note__max_length": WARN,
    "dy_rule__shipped_after_ordered": WARN,
}

ORDERS_FAILS_AS_WARN = dict.fromkeys(DEFECTIVE_FAILS, WARN)
#: The checks `payments_frame()` of the Pandera page fails: a zero amount, a long reference.
PAYMENTS_FAILS = {
    "dy_rule__amount__min_exclusive": ERROR,
    "dy_rule__reference__check__str_length": WARN,
}
DEFECTIVE_LAZY = {"orders_frame": lambda: defective_orders().lazy()}


def _stdout(block: Block) -> tuple[dict[str, Any], str]:
    """Run the block; return its namespace and what it printed."""
    printed = io.StringIO()
    with redirect_stdout(printed):
        namespace = _run(block)
    return namespace, printed.getvalue()


def _direct_invocation_writes_the_quarantine_to_parquet(block: Block, tmp_path: Path) -> None:
    events = _run(block)["events"]

    (materialized,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    assert materialized.value.height == 6
    assert pl.read_parquet(tmp_path / "quarantine" / "orders_quarantine.parquet").height == 7
    checks = [e for e in events if isinstance(e, dg.AssetCheckResult)]
    assert len(checks) == len(dd.wiring.check_specs(OrdersSchema, asset="orders"))


def _the_catalogue_prints_one_line_per_rule(block: Block, tmp_path: Path) -> None:
    lines = _stdout(block)[1].splitlines()

    assert len(lines) == len(dd.wiring.rules(OrdersSchema))
    assert "dy_rule__amount__min                          error amount >= 0" in lines


def _migrated_source_has_the_translations_rules(block: Block, tmp_path: Path) -> None:
    namespace, printed = _stdout(block)
    translated, source = namespace["PaymentsSchema"], namespace["source"]

    assert namespace["to_dataframely"](namespace["Payments"]) is translated
    assert printed == f"{source}\n"
    migrated: dict[str, Any] = {"__name__": "migrated"}
    exec(compile(source, "<migrated>", "exec", dont_inherit=True), migrated)
    catalogue = [(r.name, r.severity) for r in dd.wiring.rules(translated)]
    assert [(r.name, r.severity) for r in dd.wiring.rules(migrated["Payments"])] == catalogue
    assert catalogue == [
        ("payment_id|nullability", "error"),
        ("payment_id|unique", "error"),
        ("payment_id|min", "error"),
        ("amount|nullability", "error"),
        ("amount|min_exclusive", "error"),
        ("amount|nan", "error"),
        ("reference|check__str_length", "warn"),
    ]


def _read_dtypes_casts_what_duckdb_changed(block: Block, tmp_path: Path) -> None:
    result = materialize(_run(block), Run({}), tmp_path / "cast")
    casts = evaluations(result)["dy_schema__columns"].metadata["dy_casts"].value
    assert [row.data["column"] for row in casts.records] == ["status", "ordered_at"]  # type: ignore[attr-defined]

    strict = Block(block.page, block.heading, block.code.replace(', read_dtypes="cast"', ""))
    definitions, resources = _definitions(_run(strict))
    result = dg.materialize(definitions, resources=resources, raise_on_error=False)
    error, message = step_error(result)
    assert error == "ColumnSchemaError" and 'read_dtypes="cast"' in message


def _checks_job_checks_one_partition(block: Block, tmp_path: Path) -> None:
    defs = _run(block)["defs"]
    dg.Definitions.validate_loadable(defs)

    result = defs.resolve_job_def("events_checks").execute_in_process(partition_key="2024-01-02")

    evaluated = result.get_asset_check_evaluations()
    assert {(e.asset_key.to_user_string(), e.partition) for e in evaluated} == {
        ("events", "2024-01-02")
    }
    assert all(e.passed for e in evaluated)
    assert result.get_asset_materialization_events() == []
    schedule = defs.resolve_schedule_def("events_checks_schedule")
    assert schedule.cron_schedule == "0 0 * * *"


def _prints(*lines: str) -> Callable[[Block, Path], None]:
    """The block prints these lines (each a whole line, or the start of one), in this order."""

    def check(block: Block, tmp_path: Path) -> None:
        printed = _stdout(block)[1].splitlines()
        found = [next((i for i, p in enumerate(printed) if p.startswith(x)), -1) for x in lines]
        assert -1 not in found and found == sorted(found), "\n".join(printed)

    return check


#: The install page's orders: a duplicate order id, a negative amount, an email without `@`.
FIRST_CHECKS = Run(
    {"orders": 4},
    failed=dict.fromkeys(
        ["dy_rule__primary_key", "dy_rule__amount__min", "dy_rule__email__regex"], ERROR
    ),
    error="DagsterAssetCheckFailedError",
)


def _the_pages_test_passes(block: Block, tmp_path: Path) -> None:
    _run(block)["test_negative_amounts_are_quarantined"](tmp_path)
    assert (tmp_path / "checked_orders_quarantine.parquet").is_file()


Expectation = Run | list[Run] | Callable[[Block, Path], None]

STATED: dict[str, Expectation] = {
    "docs/testing.md: A test of the quarantine": _the_pages_test_passes,
    "docs/testing.md: What a call returns": _prints(
        "shape: (2, 2)",
        "[{'order_id': 2, 'amount': -1.0, 'dy_rule__primary_key': 'valid',",
        "{'dy_rule__amount__min': 1}",
    ),
    "docs/checks-tab.md: Reading the Checks tab": _prints(
        "severity: WARN",
        "dy_assessment      failed at severity WARN: 1 of 13 rows, 7.7%",
        "dy_constraint      amount >= 0",
        'dy_expression      pl.col("amount") >= 0',
        "dy_failed_count    1",
        "dy_failed_sample",
        "dy_quarantine      ",
        "dy_row_count       13",
        "dy_rule            amount|min",
    ),
    "docs/failing-rows.md: Query the kept rows": _prints(
        'kept in: "finance"."payments__dy_failures"',
        "rows kept: 3",
        'query: SELECT * FROM "finance"."payments__dy_failures" WHERE',
        "│ 2          ┆ -5.0   ┆ true                 │",
        "│ 3          ┆ -1.0   ┆ true                 │",
        "│ 2            ┆ 1              ┆ 3       │",
    ),
    "docs/failing-rows.md: In the graph": _prints(
        "downstream of: ['payments']",
        "Columns tab:",
        "  payment_id                       Int64",
        "  dy_rule__amount__min             Boolean",
        "  dy_asset_key                     String",
        "  dy_run_id                        String",
        "  dy_partition_key                 String",
        "written as declared: True",
    ),
    "docs/install.md: A minimal `Definitions` with checks": FIRST_CHECKS,
    "docs/install.md: Run it": _prints(
        "dy_schema__columns           passed",
        "dy_rule__primary_key         FAILED ERROR  2 of 4 rows",
        "dy_rule__amount__min         FAILED ERROR  1 of 4 rows",
        "dy_rule__email__regex        FAILED ERROR  1 of 4 rows",
    ),
    "docs/install.md: The three commonest mistakes": _prints(
        "with_schemas names asset(s) these Definitions do not declare: order.",
    ),
    "docs/install.md: The three commonest mistakes #2": _prints(
        "The frame does not match Orders",
        "  - amount: Int64, expected Float64",
        "The package never casts.",
    ),
    "docs/install.md: The three commonest mistakes #3": _prints(
        "The function of asset pandas_orders returned a pandas.DataFrame.",
    ),
    "README.md: dagster-dataframely": Run(
        {"orders": 13}, failed=DEFECTIVE_FAILS, error="DagsterAssetCheckFailedError"
    ),
    "README.md: dagster-dataframely #2": Run({"orders": 12, "orders_quarantine": 0}),
    "docs/asset.md: Declare one": Run({"sales/orders": 12}),
    "docs/asset.md: A `MaterializeResult` carries your metadata": Run(
        {"orders": 12}, metadata={"orders": frozenset({"source", "dagster/row_count"})}
    ),
    "docs/asset.md: Dagster's drift checks": _prints(
        "column_schema_change            passed The asset has been materialized fewer than 2",
        "dagster_row_count_bounds_check  passed Value `12` is within range",
        "column_schema_change            FAILED Added columns: channel",
        "dagster_row_count_bounds_check  FAILED Value `5` is less than 10",
    ),
    "docs/asset.md: A `MaterializeResult` carries your metadata #2": _prints(
        "written: 12 rows; checks failed: 0 of 22",
        "dagster/column_schema  the 10 columns written",
        "dagster/row_count      12",
        "dy_row_sample          a table of 5 rows",
        "dy_statistics          a table of 10 rows",
        "source                 storefront export",
    ),
    "docs/asset.md: `None` skips the run": Run(
        {"orders": None}, upstream=lambda: storefront_orders().clear()
    ),
    "docs/validation.md: Every row valid": Run({"orders": 12}),
    'docs/validation.md: A row breaks an `"error"` rule': Run(
        {"orders": None},
        failed=DEFECTIVE_FAILS,
        error="ValidationAbortError",
        message=("primary_key", "paid_orders_have_amount", "amount|min"),
    ),
    'docs/validation.md: A row breaks an `"error"` rule #2': _prints(
        'Asset orders was not written: rows failed 7 "error" rule(s) of OrdersSchema.',
        "  - primary_key: 2 row(s)",
        "  - amount|min: 1 row(s)",
        "The asset's checks show samples of the failing rows.",
    ),
    "docs/validation.md: Drop the failing rows yourself": Run(
        {"orders": 3}, upstream=defective_orders
    ),
    "docs/validation.md: The package never casts": Run(
        {"orders": None},
        failed={"dy_schema__columns": ERROR},
        error="ColumnSchemaError",
        message=("amount: Decimal", "line: Int32", "OrdersSchema.cast"),
    ),
    "docs/validation.md: Extra columns are not a mismatch": Run(
        {"orders": 12},
        upstream=lambda: storefront_orders().with_columns(channel=pl.lit("web")),
        columns=ORDERS_COLUMNS,
    ),
    "docs/validation.md: Casting is your call": Run({"orders": 12}, upstream=mistyped_orders),
    "docs/quarantine.md: Valid rows to the table, the others aside": Run(
        {"orders": 6, "orders_quarantine": 7},
        failed=ORDERS_FAILS_AS_WARN,
        metadata={
            "orders": frozenset({"dy_quarantine", "dy_quarantined_rows", "invalid_by_rules"})
        },
    ),
    "docs/quarantine.md: Valid rows to the table, the others aside #2": _prints(
        "written: 6 rows, quarantined: 7 rows",
        "dy_rule__primary_key                         WARN 2 rows",
        "dy_rule__amount__min                         WARN 1 rows",
        "shape: (7, 5)",
    ),
    "docs/quarantine.md: Where it is written": _direct_invocation_writes_the_quarantine_to_parquet,
    "docs/quarantine.md: When every row is invalid": Run(
        {"orders": None, "orders_quarantine": 2},
        failed={"dy_rule__primary_key": ERROR, "dy_rule__line_item_id__unique": ERROR},
        error="NoValidRowsError",
        message=("orders_quarantine",),
    ),
    "docs/severity.md: On the schema: `@dd.warn`": Run(
        {"payments": 3},
        failed={"dy_rule__amount__max": WARN, "dy_rule__note__max_length": WARN},
    ),
    "docs/severity.md: On the schema: `@dd.warn` #2": _prints(
        "written: 3 rows",
        "dy_rule__amount__max         WARN  1 row(s)",
        "dy_rule__note__max_length    WARN  1 row(s)",
    ),
    "docs/severity.md: For one asset: `warn=`": Run(
        {"orders": 12}, failed={"dy_rule__customer_email__check__is_lowercase": WARN}
    ),
    "docs/tolerances.md: On the schema: `@dd.tolerate`": Run(
        {"payments": 200}, failed={"dy_rule__email__regex": WARN, "dy_rule__amount__min": WARN}
    ),
    "docs/tolerances.md: On the schema: `@dd.tolerate` #2": _prints(
        "dy_rule__email__regex         failed at WARN   1.5% margin  -3  warn above 0 rows, "
        "error above 5%",
        "dy_rule__amount__min          failed at WARN   2.0% margin  -2  warn above 2 rows, "
        "error above 10 rows",
        "dy_rule__amount__nullability  passed           0.0% margin  +0  error above 0 rows",
    ),
    "docs/tolerances.md: A limit's unit is never a guess": _prints(
        "error_above=0.5 for dd.Tolerance is a bare number that reads 2 ways: as 50% of the "
        "rows (a fraction), or as 0.5% (a percentage). Write the unit:",
        "error_above=1.0 for dd.Tolerance is a bare number that reads 3 ways: as 1 row, or as "
        "100% of the rows (a fraction), or as 1% (a percentage). Write the unit:",
    ),
    "docs/tolerances.md: For one asset: `tolerate=`": Run(
        {"payments": 200},
        failed={"dy_rule__email__regex": ERROR},
        error="DagsterAssetCheckFailedError",
    ),
    "docs/tolerances.md: On a gated asset: the circuit breaker": Run(
        {
            "gated_payments": 193,
            "gated_payments_quarantine": 7,
            "strict_payments": None,
            "strict_payments_quarantine": 7,
        },
        # gated_payments' checks fail at WARN (quarantined); strict_payments' amount|min at
        # ERROR, the breaker's: its step runs after gated_payments', so its result is listed.
        failed={"dy_rule__email__regex": WARN, "dy_rule__amount__min": ERROR},
        error="ValidationAbortError",
    ),
    "docs/tolerances.md: On a gated asset: the circuit breaker #2": _prints(
        "gated_payments: success, wrote {'gated_payments_quarantine': 7, 'gated_payments': 193}",
        "strict_payments: failed, wrote {'strict_payments_quarantine': 7}",
    ),
    "docs/tolerances.md: Errors at definition time": _prints(
        "tolerate= names 'amount|mn', neither a rule nor a column of schema Payments. Did you "
        "mean 'amount|min'"
    ),
    "docs/tolerances.md: Volume and freshness: `@dd.expect_rows`, `@dd.expect_fresh`": Run(
        {"sales": 50}, failed={"dy_table__row_count": WARN}
    ),
    "docs/tolerances.md: Volume and freshness: `@dd.expect_rows`, `@dd.expect_fresh` #2": (
        _prints(
            "failed at severity WARN: 50 rows, expected at least 100 rows",
            "freshness passed: True (newest paid_at within 6 h)",
        )
    ),
    "docs/tolerances.md: For one asset: `expect_rows=`, `expect_fresh=`": Run(
        {"sales": 50}, failed={"dy_table__freshness": WARN}
    ),
    "docs/tolerances.md: For one asset: `expect_rows=`, `expect_fresh=` #2": _prints(
        "failed at severity WARN: the newest paid_at is 2 h old at "
    ),
    "docs/tolerances.md: On a gated asset: judged before the write": Run(
        {"gated_sales": None},
        failed={"dy_table__row_count": ERROR},
        error="ValidationAbortError",
        message=("dy_table__row_count: 50 rows, expected at least 100 rows",),
    ),
    "docs/tolerances.md: On a gated asset: judged before the write #2": _prints(
        "success: False, written: 0", "dy_table__row_count failed at ERROR: 50"
    ),
    "docs/tolerances.md: Trends: `trends=dd.Trends(...)`": Run(
        {"sales": 50}, failed={"dy_table__row_count": WARN}
    ),
    "docs/tolerances.md: The failing fraction plotted: `observe_fractions=True`": Run(
        {"payments": 200},
        failed={"dy_rule__email__regex": WARN, "dy_rule__amount__min": WARN},
    ),
    "docs/tolerances.md: The failing fraction plotted: `observe_fractions=True` #2": _prints(
        "dy_failed_fraction/dy_rule__amount__min    0.02",
        "dy_failed_fraction/dy_rule__email__regex   0.015",
        "dy_row_count                               200",
    ),
    "docs/tolerances.md: Errors at definition time #2": _prints(
        "The freshness check of schema Sales names column 'amount' of dtype Int64: freshness "
        "reads a dy.Datetime or dy.Date column."
    ),
    "docs/settings.md: Check granularity": Run(
        {"orders": None},
        failed={
            "dy_col__order_id": ERROR,
            "dy_col__line_item_id": ERROR,
            "dy_col__customer_email": ERROR,
            "dy_col__amount": ERROR,
            "dy_col__note": WARN,
            "dy_schema__rules": ERROR,
        },
        error="ValidationAbortError",
    ),
    "docs/settings.md: Check granularity #2": _prints(
        "dy_col__order_id         ERROR 1 rows",
        "dy_col__line_item_id     ERROR 2 rows",
        "dy_col__customer_email   ERROR 2 rows",
        "dy_col__amount           ERROR 2 rows",
        "dy_col__note             WARN  1 rows",
        "dy_schema__rules         ERROR 6 rows",
    ),
    "docs/sidecar.md: Checks beside an asset you have": Run(
        {"orders": 13},
        failed={
            **DEFECTIVE_FAILS,
            "dy_rule__customer_email__nullability": WARN,
            "dy_rule__customer_email__check__is_lowercase": WARN,
        },
        error="DagsterAssetCheckFailedError",
    ),
    "docs/sidecar.md: Checks beside an asset you have #2": _prints(
        "12 of 22 checks passed; the others:",
        "dy_rule__primary_key                           ERROR 2 of 13 rows",
        "dy_rule__customer_email__nullability           WARN  1 of 13 rows",
        "dy_rule__amount__min                           ERROR 1 of 13 rows",
        "dy_rule__note__max_length                      WARN  1 of 13 rows",
    ),
    "docs/sidecar.md: The summary in the run's log": _prints(
        "dagster-dataframely: 22 checks of 1 asset: 5 failed, 5 warned, 12 passed.",
        "asset   rule                                failing rows  fraction  tolerance           "
        "verdict  engine  failing rows kept in",
        "orders  paid_orders_have_amount             2 of 13       15.4%     error above 0 rows  "
        "failed   polars  …",
        "orders  note|max_length                     1 of 13       7.7%      warn above 0 rows   "
        "warned   polars  …",
        "Passed: 12 checks.",
    ),
    "docs/sidecar.md: Dtypes a warehouse changes: `read_dtypes`": (
        _read_dtypes_casts_what_duckdb_changed
    ),
    "docs/sidecar.md: Running the checks from the CLI: `dd.checks_job`": (
        _checks_job_checks_one_partition
    ),
    "docs/sidecar.md: Many tables: how checks become steps": Run(
        {"orders": 12, "returns": 3, "refunds": 5}
    ),
    "docs/sidecar.md: `dd.with_schemas(defs, {key: schema}, **settings)`": Run(
        {"orders": 12, "customers": 8}, described=("orders",)
    ),
    "docs/component.md: Errors at load time": _prints(
        "defs/quality/defs.yaml: checks[0] (asset order, schema OrdersSchema): asset order is not",
        "declared in this project's defs folder, which declares 1 asset(s). Closest declared keys:",
        "orders. Fix the key",
    ),
    "docs/hand-wiring.md: The rule catalogue": _the_catalogue_prints_one_line_per_rule,
    "docs/hand-wiring.md: `dd.asset`, assembled by hand": [
        Run({"orders": 12, "orders_quarantine": 0}, described=("orders",)),
        Run(
            {"orders": 6, "orders_quarantine": 7},
            failed=ORDERS_FAILS_AS_WARN,
            overrides=DEFECTIVE_LAZY,
        ),
    ],
    "docs/hand-wiring.md: Checks in a step of their own": [
        Run({"orders": 12}, described=("orders",)),
        Run({"orders": 13}, failed=ORDERS_FAILS_AS_WARN, overrides=DEFECTIVE_LAZY),
    ],
    "docs/hand-wiring.md: Without this package": [
        Run({"orders": 12, "orders_quarantine": None}, described=("orders",)),
        Run(
            {"orders": 3, "orders_quarantine": 10},
            failed=ORDERS_FAILS_AS_WARN,
            overrides=DEFECTIVE_LAZY,
        ),
    ],
    "docs/hand-wiring.md: Or, with the package": Run({"orders": 12}),
    "docs/hand-wiring.md: Trends from the check history": Run(
        {"orders": 12}, described=("orders",)
    ),
    "docs/hand-wiring.md: Trends from the check history #2": _prints(
        "run 1: passed: 0 of the 5 evaluations a trend needs are in the history, 5 more needed "
        "(0 evaluations read)",
        "run 5: passed: 4 of the 5 evaluations a trend needs are in the history, 1 more needed "
        "(4 evaluations read)",
        "run 6: passed (5 evaluations read)",
    ),
    "docs/pandera.md: Translate, then migrate": _migrated_source_has_the_translations_rules,
    "docs/pandera.md: Checks beside an asset you have": Run(
        {"payments": 4},
        failed=PAYMENTS_FAILS,
        error="DagsterAssetCheckFailedError",
        described=("payments",),
    ),
    "docs/pandera.md: Checks beside an asset you have #2": _prints(
        "dy_rule__amount__min_exclusive           ERROR 1 of 4 rows",
        "dy_rule__reference__check__str_length    WARN  1 of 4 rows",
    ),
    "docs/pandera.md: A gated write": Run(
        {"clean_payments": 3, "clean_payments_quarantine": 1},
        failed=dict.fromkeys(PAYMENTS_FAILS, WARN),
    ),
}


# ----------------------------------------- tests ---------------------------------------- #


def test_every_runnable_block_has_a_stated_outcome_and_every_outcome_a_block():
    assert sorted(block.id for block in RUNNABLE) == sorted(STATED)


def test_a_block_not_run_says_why_and_such_blocks_stay_rare():
    skipped = [block for block in BLOCKS if _NOT_RUN.match(block.code)]
    assert len(skipped) <= 3, [block.id for block in skipped]


def test_every_code_block_is_python_or_marked_as_another_language():
    # An unmarked or `py` fence would be skipped silently: name the language, always.
    for page in PAGES:
        languages = re.findall(r"^```(\S*)[^\n]*\n(?:.*?)^```", page.read_text(), re.S | re.M)
        assert set(languages) <= {"python", "sh", "text", "yaml"}, page


def test_setup_blocks_define_nothing_to_run():
    for page, setup in SETUPS.items():
        namespace: dict[str, Any] = {"__name__": "docs_example"}
        exec(compile(setup, f"<{page} setup>", "exec", dont_inherit=True), namespace)
        assert not _definitions(namespace)[0], page


def test_the_components_defs_yaml_builds_the_checks_its_page_states():
    text = (ROOT / "docs" / "component.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)]
    (defs_yaml,) = [b for b in blocks if b["type"] == "dagster_dataframely.SchemaChecksComponent"]

    with create_defs_folder_sandbox() as sandbox:
        # The assets the entries name, declared in the defs folder as the page says they are.
        (sandbox.defs_folder_path / "assets.py").write_text(
            "import dagster as dg\n\norders = dg.AssetSpec('orders')\n"
            "raw_orders = dg.AssetSpec(['raw', 'orders'])\n"
        )
        path = sandbox.scaffold_component(
            component_cls=dd.SchemaChecksComponent,
            defs_path="quality",
            defs_yaml_contents=defs_yaml,
        )
        with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
            steps = {
                checks.node_def.name: [
                    (spec.asset_key.to_user_string(), spec.name, spec.blocking)
                    for spec in checks.check_specs
                ]
                for checks in defs.asset_checks or []
            }

    ((step, specs),) = steps.items()
    assert step.startswith("dy_checks__io_manager__1_of_1__")
    orders = {name: blocking for key, name, blocking in specs if key == "orders"}
    raw = {name: blocking for key, name, blocking in specs if key == "raw/orders"}
    assert orders["dy_col__amount"] and not orders["dy_col__note"]
    assert "dy_schema__rules" in orders
    assert "dy_rule__amount__min" in raw
    assert {name for name, blocking in raw.items() if blocking} == {"dy_schema__columns"}


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: block.id)
def test_every_block_does_what_its_page_says(block: Block, tmp_path: Path, monkeypatch):
    # Relative paths in an example (a `base_dir`, a `quarantine_dir`) land in the test's folder.
    monkeypatch.chdir(tmp_path)
    stated = STATED[block.id]
    if callable(stated):
        stated(block, tmp_path)
        return
    for index, run in enumerate(stated if isinstance(stated, list) else [stated]):
        materialize(_run(block, run.overrides), run, tmp_path / f"run{index}")


def test_every_page_run_whole_has_its_test():
    for page, test in RUN_WHOLE.items():
        assert (ROOT / page).is_file() and (ROOT / test).is_file(), page
        assert page in (ROOT / test).read_text(), f"{test} does not read {page}"
