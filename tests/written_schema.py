"""The schema class a written module (inferred, migrated) defines, by executing its source:
what the tests check is that the text runs, not only that it reads right."""

from __future__ import annotations

from typing import Any

import dataframely as dy


def load(source: str, name: str) -> type[dy.Schema]:
    """The schema class `name` that `source` defines, by executing it."""
    namespace: dict[str, Any] = {}
    exec(compile(source, f"{name}.py", "exec"), namespace)
    schema = namespace[name]
    assert issubclass(schema, dy.Schema)
    return schema
