"""Where a custom Pandera check's function lives, and how migrated source can call it.

A `@pa.check` / `@pa.dataframe_check` method of a model becomes a `Check` whose function is
an adapter Pandera creates (`BaseCheckInfo.to_check`); the method itself, and so its name,
docstring and the attribute that reaches it, is found through that adapter's closure. This
is Pandera's private structure, pinned by `tests/pandera/test_pandera_private.py`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pandera.api.checks import Check
from pandera.api.dataframe.model_components import CHECK_KEY, DATAFRAME_CHECK_KEY

from .._writing.literals import string


@dataclass(frozen=True)
class Origin:
    """The user's function behind a custom check."""

    #: The function the user wrote (for a model method: the undecorated function).
    function: Callable[..., Any]
    #: The model that declares it as a method, if it is one.
    model: type | None
    #: The model attribute that holds it (`Orders.amount_is_round` -> `amount_is_round`).
    attribute: str | None

    @property
    def label(self) -> str:
        """How a reader names the check: `Orders.amount_is_round`, `is_positive`."""
        if self.model is not None and self.attribute is not None:
            return f"{self.model.__name__}.{self.attribute}"
        return getattr(self.function, "__qualname__", None) or repr(self.function)


@dataclass(frozen=True)
class Reference:
    """An import path that reaches the check's function, or the `Check` itself."""

    module: str
    attributes: tuple[str, ...]  # `("Orders", "amount_is_round")`
    #: Set when the path reaches a `Check` in a schema object: the check's column (None for
    #: a dataframe check) and its position. A `Check` carries its own flags.
    column: str | None = None
    index: int | None = None

    @property
    def is_check(self) -> bool:
        return self.index is not None

    def text(self, alias: str) -> str:
        """The path as source, starting from the module imported as `alias`."""
        text = ".".join((alias, *self.attributes))
        if self.column is not None:
            text += f".columns[{string(self.column)}]"
        return text if self.index is None else f"{text}.checks[{self.index}]"

    def resolve(self) -> Any:
        value: Any = importlib.import_module(self.module)
        for name in self.attributes:
            value = getattr(value, name)
        if self.column is not None:
            value = value.columns[self.column]
        return value if self.index is None else value.checks[self.index]


def origin(check: Check) -> Origin:
    """The function behind `check`."""
    function = check._check_fn
    if getattr(function, "__qualname__", "").endswith("to_check.<locals>._adapter"):
        captured = inspect.getclosurevars(function).nonlocals
        info, model = captured.get("self"), captured.get("model_cls")
        method = getattr(info, "check_fn", None)
        if isinstance(model, type) and callable(method):
            return Origin(method, model, _attribute(model, info))
    return Origin(function, None, None)


def function_reference(found: Origin) -> Reference | None:
    """An importable path to the function, or None (a lambda, a local function, `__main__`)."""
    if found.model is not None:
        if found.attribute is None:
            return None
        return _checked(Reference(found.model.__module__, (*_dotted(found.model), found.attribute)))
    module = getattr(found.function, "__module__", None)
    qualname = getattr(found.function, "__qualname__", "")
    if module is None or "<" in qualname:
        return None
    reference = _checked(Reference(module, tuple(qualname.split("."))))
    if reference is None or reference.resolve() is not found.function:
        return None
    return reference


def check_reference(
    location: tuple[str, str] | None, column: str | None, index: int, check: Check
) -> Reference | None:
    """A path to `check` through the schema object at `location` (module, dotted name)."""
    if location is None:
        return None
    module, name = location
    reference = _checked(Reference(module, tuple(name.split(".")), column, index))
    if reference is None or reference.resolve() is not check:
        return None
    return reference


def _dotted(model: type) -> tuple[str, ...]:
    return tuple(model.__qualname__.split("."))


def _attribute(model: type, info: Any) -> str | None:
    for base in model.__mro__:
        for name, value in vars(base).items():
            if info in (getattr(value, CHECK_KEY, None), getattr(value, DATAFRAME_CHECK_KEY, None)):
                return name
    return None


def _checked(reference: Reference) -> Reference | None:
    if reference.module == "__main__" or "<locals>" in reference.attributes:
        return None
    try:
        reference.resolve()
    except Exception:
        return None
    return reference
