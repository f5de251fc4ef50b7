"""`check_report`: the report's one entry point, for the CLI and for Python."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal

import dagster as dg

from ..errors import InstanceNotFoundError, InvalidSettingError
from .history import read_history
from .html import render_html
from .markdown import render_markdown
from .model import report_model
from .selection import selector

#: What a Dagster instance's directory holds: its settings, or the default SQLite storage.
_INSTANCE_FILES = ("dagster.yaml", "history")
#: A time window as the CLI writes it: `7d`, `12h`, `30min`.
_AGO = re.compile(r"^(\d+)\s*(d|h|min)$")
_UNITS = {"d": "days", "h": "hours", "min": "minutes"}


def check_report(
    *,
    format: Literal["html", "markdown", "json"] = "html",
    instance: dg.DagsterInstance | str | os.PathLike[str] | None = None,
    select: str | None = None,
    since: datetime | str | None = None,
    partition: str | None = None,
    definitions: dg.Definitions | None = None,
    last: int = 20,
) -> str:
    """The report of every check's history in a Dagster instance, as HTML, Markdown or JSON.

    Args:
        format: `"html"` (one self-contained file), `"markdown"` or `"json"`.
        instance: the instance, or its directory; default `DAGSTER_HOME`'s.
        select: assets in Dagster's selection syntax (`"key:sales/*"`); lineage, groups,
            tags, kinds and owners need `definitions`.
        since: only evaluations after this time: a datetime, an ISO date or time, or an age
            (`"7d"`, `"12h"`, `"30min"`).
        partition: only the evaluations of this partition key.
        definitions: the code location's definitions, to resolve `select` against the asset
            graph and show the columns of assets whose materializations do not record them.
        last: how many evaluations of each check the plots show.

    Raises:
        InstanceNotFoundError: `DAGSTER_HOME` is not set, or names no directory.
        NoCheckHistoryError: the instance holds no check evaluation (within the filters).
        UnmatchedSelectionError: `select` matches no checked asset, or needs `definitions`.
        InvalidSettingError: `since`, `format` or `last` is not one the report takes.
    """
    if last < 1:
        raise InvalidSettingError(
            f"check_report(last={last}): the plots show the last evaluations of each check, "
            "at least one: give a count of 1 or more (default 20)."
        )
    opened, where = _instance(instance)
    start = _since(since)
    history = read_history(
        opened,
        select=selector(select, definitions),
        since=start,
        partition=partition,
        definitions=definitions,
        where=f"The Dagster instance at {where}",
    )
    filters = {
        "select": select,
        "since": None if start is None else start.isoformat(timespec="minutes"),
        "partition": partition,
    }
    model = report_model(history, instance=where, filters=filters, last=last)
    if format == "json":
        return json.dumps(model, indent=2) + "\n"
    if format == "markdown":
        return render_markdown(model)
    if format == "html":
        return render_html(model)
    raise InvalidSettingError(
        f"check_report(format={format!r}): the report is written as 'html', 'markdown' or 'json'."
    )


def _instance(
    given: dg.DagsterInstance | str | os.PathLike[str] | None,
) -> tuple[dg.DagsterInstance, str]:
    """The instance to read and where it is, in words; never a new, empty one."""
    if isinstance(given, dg.DagsterInstance):
        return given, given.root_directory
    home = given if given is not None else os.environ.get("DAGSTER_HOME")
    if not home:
        raise InstanceNotFoundError(
            "No Dagster instance to report on: DAGSTER_HOME is not set. Set it to the "
            "directory your runs write to (DAGSTER_HOME=/path/to/dagster_home), or pass "
            "--instance DIR (instance= in Python)."
        )
    directory = Path(home).expanduser().resolve()
    if not directory.is_dir():
        raise InstanceNotFoundError(
            f"No Dagster instance at {directory}: the directory does not exist. Name the "
            "DAGSTER_HOME your runs wrote to (it holds dagster.yaml or history/)."
        )
    # Opening a directory makes it an instance (Dagster creates its storage there): a
    # mistyped path must not become one.
    if not any((directory / name).exists() for name in _INSTANCE_FILES):
        raise InstanceNotFoundError(
            f"No Dagster instance at {directory}: it holds neither dagster.yaml nor history/. "
            "Name the DAGSTER_HOME your runs wrote to."
        )
    return _opened(directory), str(directory)


def _opened(directory: Path) -> dg.DagsterInstance:
    """The instance in `directory`, through Dagster's public `DagsterInstance.get()`, which
    reads `DAGSTER_HOME`: set to `directory` while it opens, as it was afterwards."""
    before = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(directory)
    try:
        return dg.DagsterInstance.get()
    finally:
        if before is None:
            del os.environ["DAGSTER_HOME"]
        else:
            os.environ["DAGSTER_HOME"] = before


def _since(since: datetime | str | None) -> datetime | None:
    """The start of the time window: an age before now, an ISO time (UTC unless it says)."""
    if since is None or isinstance(since, datetime):
        return since
    ago = _AGO.match(since.strip())
    if ago:
        number, unit = ago.groups()
        return datetime.now(timezone.utc) - timedelta(**{_UNITS[unit]: int(number)})
    try:
        moment = datetime.fromisoformat(since)
    except ValueError:
        raise InvalidSettingError(
            f"since={since!r} is neither an age nor a time: write '7d', '12h', '30min', or an "
            "ISO date or time such as '2026-12-01' or '2026-12-01T08:00+01:00'."
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
