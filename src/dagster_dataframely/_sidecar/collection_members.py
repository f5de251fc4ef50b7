"""What a collection's checks evaluate: its members and the assets that store them, resolved
at definition time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg
import dataframely as dy

from .._engine.catalogue import Rule
from .._engine.read_dtypes import ReadDtypes
from .._engine.settings import CheckSettings


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


@dataclass(frozen=True)
class CollectionRun:
    """What a collection's checks evaluate, resolved at definition time."""

    collection: type[dy.Collection]
    members: Sequence[Member]
    filters: Sequence[Rule]
    settings: CheckSettings
    read_dtypes: ReadDtypes = "strict"
