"""What a collection's checks evaluate: its members and the assets that store them, resolved
at definition time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg
import dataframely as dy

from .._engine.catalogue import Rule
from .._engine.read_dtypes import ReadDtypes
from .._engine.settings import CheckSettings
from .._engine.table_checks import NO_TABLE_CHECKS, TableChecks
from .._engine.tolerance import Tolerance


@dataclass(frozen=True)
class Member:
    """A collection member and the asset that stores it."""

    name: str
    key: dg.AssetKey
    schema: type[dy.Schema]
    #: Whether these checks report the member's own schema checks.
    own_checks: bool
    #: Whether filters remove rows from it (not `ignored_in_filters`).
    in_filters: bool
    #: Its schema's table checks (`dd.expect_rows`, `dd.expect_fresh`), reported with its
    #: own checks.
    table: TableChecks = NO_TABLE_CHECKS
    #: `tolerate=`'s tolerances for its rules, over its schema's (`dd.tolerate`).
    tolerate: Mapping[str, Tolerance] = field(default_factory=dict)


@dataclass(frozen=True)
class CollectionRun:
    """What a collection's checks evaluate, resolved at definition time."""

    collection: type[dy.Collection]
    members: Sequence[Member]
    filters: Sequence[Rule]
    settings: CheckSettings
    read_dtypes: ReadDtypes = "strict"
