"""The `dagster-dataframely` console script.

`dagster-dataframely migrate-pandera package.module:Model [--output FILE]` prints (or writes)
the Dataframely source for a Pandera polars model.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Exit status for a command line that names something that cannot be imported.
USAGE_ERROR = 2
#: Exit status for a model that cannot be migrated.
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
    args = parser.parse_args(argv)
    return _migrate_pandera(args.model, args.output)


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
    if output is None:
        sys.stdout.write(source)
    else:
        output.write_text(source, encoding="utf-8")
        print(f"Wrote {output}", file=sys.stderr)
    return 0


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
