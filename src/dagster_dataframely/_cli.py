"""The `dagster-dataframely` console script: Dataframely schema source from what exists.

- `migrate-pandera package.module:Model` prints the Dataframely source for a Pandera model;
- `infer TABLE [--duckdb FILE | --postgres CONNINFO] [--profile] [--adopt] [--is-in-limit N]`
  prints a schema inferred from a database table, or from a parquet or Delta path;
  `infer --defs package.module:defs --asset KEY [--partition P]` from an asset's stored table;
- `infer-dbt target/manifest.json [--select SELECTOR ...] [--duckdb FILE | --postgres
  CONNINFO] [--output-dir DIR] [--profile] [--adopt] [--is-in-limit N]` writes a schema
  module per dbt model from its tests and contract (and, profiled, its table's rows);
- `dbt-contract package.module:Schema [--dialect D]` prints a dbt model's enforced contract;
- `report [--format html|markdown|json] [--instance DIR] [--select SELECTION] [--since AGE]
  [--partition P] [--defs package.module:defs]` writes the report of the checks' history in
  a Dagster instance (DAGSTER_HOME's by default).

`--output FILE` writes the source (or the report) to a file instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Exit status for a command line that names something that cannot be imported.
USAGE_ERROR = 2
#: Exit status for a model that cannot be migrated, a table a schema cannot be inferred for,
#: or a report with nothing to read.
MIGRATION_ERROR = 1


class _ImportFailure(Exception):
    """An import path that does not lead to an object; the message is one line."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dagster-dataframely", description="Tools for dagster-dataframely."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    migrate = commands.add_parser(
        "migrate-pandera",
        help="Write a Pandera polars model as a Dataframely schema (source code).",
        description=(
            "Print the Dataframely source for a Pandera polars DataFrameModel or "
            "DataFrameSchema. Rule names are kept, so Dagster check names stay the same."
        ),
    )
    migrate.add_argument("model", help="the model, as package.module:Model")
    migrate.add_argument("--output", "-o", type=Path, help="write the source to this file")
    infer = commands.add_parser(
        "infer",
        help="Write a Dataframely schema for a table, a parquet or a Delta path.",
        description=(
            "Print Dataframely source for a table as dagster-dataframely's sources read it: "
            "column types, NOT NULL, the primary key. With --profile, one aggregate query "
            "proposes more, as comments."
        ),
    )
    infer.add_argument(
        "table", nargs="?", help="a table name with --duckdb/--postgres/--resource, else a path"
    )
    where = infer.add_mutually_exclusive_group()
    where.add_argument("--duckdb", type=Path, metavar="FILE", help="a DuckDB database file")
    where.add_argument("--postgres", metavar="CONNINFO", help="a PostgreSQL connection string")
    where.add_argument(
        "--defs",
        metavar="MODULE:ATTR",
        help="Definitions whose --asset (DAGSTER_HOME) or --resource is read",
    )
    infer.add_argument("--asset", help="with --defs: the asset's key, as 'prefix/name'")
    infer.add_argument(
        "--resource", metavar="KEY", help="with --defs and TABLE: the resource that connects"
    )
    infer.add_argument(
        "--dialect", help="with --resource: sqlglot's name of its SQL (snowflake, bigquery)"
    )
    infer.add_argument("--partition", help="with --asset: its partition (default: the latest)")
    _profile_arguments(infer)
    infer.add_argument("--name", help="the schema class's name (default: the table's)")
    infer.add_argument("--output", "-o", type=Path, help="write the source to this file")
    dbt = commands.add_parser(
        "infer-dbt",
        help="Write a Dataframely schema module per dbt model, from its tests and contract.",
        description=(
            "Write <model>.py for each selected model of a dbt project's manifest.json: "
            "not_null, unique, accepted_values, expression_is_true and "
            "unique_combination_of_columns tests, severities and warn_if/error_if, the "
            "contract's data_type and constraints."
        ),
    )
    dbt.add_argument("manifest", type=Path, help="the project's target/manifest.json")
    dbt.add_argument(
        "--select",
        "-s",
        nargs="+",
        help="models in dbt's selector syntax: names, globs, tag:, path:, + (default: all)",
    )
    warehouse = dbt.add_mutually_exclusive_group()
    warehouse.add_argument("--duckdb", type=Path, metavar="FILE", help="read column types here")
    warehouse.add_argument("--postgres", metavar="CONNINFO", help="or in this PostgreSQL")
    dbt.add_argument("--output-dir", "-o", type=Path, default=Path("."), help="default: .")
    _profile_arguments(dbt)
    contract = commands.add_parser(
        "dbt-contract",
        help="Write a dbt model's enforced contract (YAML) from a Dataframely schema.",
        description=(
            "Print the schema.yml entry of a dbt model whose enforced contract declares the "
            "schema's columns: data_type per dialect, not_null, unique and primary_key."
        ),
    )
    contract.add_argument("schema", help="the schema, as package.module:Schema")
    contract.add_argument("--model", help="the dbt model's name (default: the class's)")
    contract.add_argument("--dialect", default="duckdb", help="dbt's adapter (default: duckdb)")
    contract.add_argument("--output", "-o", type=Path, help="write the YAML to this file")
    report = commands.add_parser(
        "report",
        help="Write the report of the checks' history in a Dagster instance.",
        description=(
            "Write one report of every check's latest figures and its history, read from a "
            "Dagster instance: a self-contained HTML file (no network), Markdown for a pull "
            "request or a CI log, or JSON for tools."
        ),
    )
    report.add_argument(
        "--format", "-f", choices=("html", "markdown", "json"), default="html", help="default: html"
    )
    report.add_argument(
        "--instance",
        type=Path,
        metavar="DIR",
        help="the instance's directory (default: DAGSTER_HOME)",
    )
    report.add_argument(
        "--select",
        metavar="SELECTION",
        help="assets, in Dagster's selection syntax ('key:sales/*'; lineage, group: and tag: "
        "need --defs)",
    )
    report.add_argument(
        "--since", metavar="AGE_OR_TIME", help="only evaluations since: '7d', '12h', '30min' or ISO"
    )
    report.add_argument("--partition", help="only the evaluations of this partition key")
    report.add_argument(
        "--defs",
        metavar="MODULE:ATTR",
        help="the code location's Definitions: the asset graph for --select, declared columns",
    )
    report.add_argument(
        "--last", type=int, default=20, help="evaluations per check in the plots (default: 20)"
    )
    report.add_argument("--output", "-o", type=Path, help="write the report to this file")
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "dbt-contract":
        return _dbt_contract(args)
    if args.command == "infer":
        return _infer(args)
    if args.command == "infer-dbt":
        return _infer_dbt(args)
    return _migrate_pandera(args.model, args.output)


def _profile_arguments(command: argparse.ArgumentParser) -> None:
    """`--profile`, `--adopt` and `--is-in-limit N` of `infer` and `infer-dbt`."""
    command.add_argument("--profile", action="store_true", help="propose rules from the rows")
    command.add_argument(
        "--adopt",
        action="store_true",
        help="profile, and write the proposed rules as rules, marked as learned from the data",
    )
    command.add_argument(
        "--is-in-limit",
        type=int,
        metavar="N",
        help="propose is_in for text with at most N distinct values (default: 10)",
    )


def _profiling(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of `infer_schema` and `dbt_schemas` that `_profile_arguments` set."""
    limit = {} if args.is_in_limit is None else {"is_in_limit": args.is_in_limit}
    return {"profile": args.profile, "adopt": args.adopt, **limit}


def _infer(args: argparse.Namespace) -> int:
    from .errors import DagsterDataframelyError
    from .infer import infer_schema
    from .infer._connect import opened

    named = (args.defs is not None, args.table is not None, args.asset, args.resource)
    by_asset = named[:2] == (True, False) and args.asset is not None and args.resource is None
    by_resource = named[:2] == (True, True) and args.resource is not None and args.asset is None
    plain = named == (False, True, None, None)
    if not (by_asset or by_resource or plain):
        print(
            "dagster-dataframely: error: infer reads a TABLE (with --duckdb/--postgres, or "
            "--defs package.module:defs --resource KEY; or a path) or an asset (--defs "
            "package.module:defs --asset KEY): give one of them.",
            file=sys.stderr,
        )
        return USAGE_ERROR
    try:
        definitions = None if args.defs is None else _definitions(args.defs)
        resource = (definitions, args.resource) if definitions is not None and by_resource else None
        with opened(args.duckdb, args.postgres, resource) as (connection, dialect):
            source = infer_schema(
                args.table,
                connection=connection,
                dialect=dialect or args.dialect,
                asset=args.asset,
                definitions=definitions if by_asset else None,
                partition=args.partition,
                schema_name=args.name,
                **_profiling(args),
            )
    except (DagsterDataframelyError, _ImportFailure) as error:
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return MIGRATION_ERROR
    return _written(source, args.output)


def _report(args: argparse.Namespace) -> int:
    from ._report import check_report

    return _text_command(
        lambda: check_report(
            format=args.format,
            instance=args.instance,
            select=args.select,
            since=args.since,
            partition=args.partition,
            definitions=None if args.defs is None else _definitions(args.defs),
            last=args.last,
        ),
        args.output,
    )


def _definitions(path: str) -> Any:
    """The `dg.Definitions` at `package.module:defs`."""
    import dagster as dg

    definitions = _load(path)
    if not isinstance(definitions, dg.Definitions):
        raise _ImportFailure(
            f"--defs {path} is a {type(definitions).__name__}, not a dg.Definitions: name the "
            "module attribute that holds the code location's Definitions"
        )
    return definitions


def _infer_dbt(args: argparse.Namespace) -> int:
    from .errors import DagsterDataframelyError
    from .infer import dbt_schemas
    from .infer._connect import opened
    from .infer._dbt import write_modules

    try:
        with opened(args.duckdb, args.postgres) as (connection, dialect):
            sources = dbt_schemas(
                args.manifest,
                select=args.select,
                connection=connection,
                dialect=dialect,
                **_profiling(args),
            )
    except (DagsterDataframelyError, _ImportFailure) as error:
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return MIGRATION_ERROR
    for path in write_modules(sources, args.output_dir):
        print(f"Wrote {path}", file=sys.stderr)
    return 0


def _dbt_contract(args: argparse.Namespace) -> int:
    from .infer import dbt_contract

    return _text_command(
        lambda: dbt_contract(_load(args.schema), model=args.model, dialect=args.dialect),
        args.output,
    )


def _text_command(make: Callable[[], str], output: Path | None) -> int:
    """Write the text `make` returns; an import path that leads nowhere is a usage error, the
    package's own errors a failure, each printed as one line."""
    from .errors import DagsterDataframelyError

    try:
        text = make()
    except _ImportFailure as error:
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except DagsterDataframelyError as error:
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return MIGRATION_ERROR
    return _written(text, output)


def _written(source: str, output: Path | None) -> int:
    if output is None:
        sys.stdout.write(source)
    else:
        output.write_text(source, encoding="utf-8")
        print(f"Wrote {output}", file=sys.stderr)
    return 0


def _migrate_pandera(path: str, output: Path | None) -> int:
    try:
        model = _load(path)
    except _ImportFailure as failure:
        print(f"dagster-dataframely: error: {failure}", file=sys.stderr)
        return USAGE_ERROR
    try:
        from .errors import UnsupportedSchemaError
        from .pandera import migrate
    except ImportError as error:  # Pandera is not installed
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return MIGRATION_ERROR
    try:
        source = migrate(model, import_path=path)
    except UnsupportedSchemaError as error:
        print(f"dagster-dataframely: error: {error}", file=sys.stderr)
        return MIGRATION_ERROR
    return _written(source, output)


def _load(path: str) -> Any:
    """The object at `package.module:name` (the name may be dotted)."""
    module_name, colon, attribute = path.partition(":")
    if not colon or not module_name or not attribute:
        raise _ImportFailure(f"{path!r} is not an import path of the form package.module:Model")
    if os.getcwd() not in sys.path:  # like `python -m`: the project in the current directory
        sys.path.insert(0, os.getcwd())
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise _ImportFailure(f"cannot import module {module_name!r}: {reason}") from error
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise _ImportFailure(f"cannot import {attribute!r} from module {module_name!r}")
        value = getattr(value, part)
    return value


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
