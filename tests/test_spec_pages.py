"""Every code example of `spec/validation.md` and `spec/hand-wiring.md` runs, unchanged, against
this package: each page's setup block, then the example, in a fresh namespace; the assets an
example defines are materialized for real, so the pages and the package cannot drift apart."""

import re
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

from dagster_dataframely.data import defective_orders, storefront_orders

#: CI runs in a fresh clone with a copy of `shared/` beside it, as in the workspace.
SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"
PAGES = ("validation.md", "hand-wiring.md")
_FENCE = re.compile(r"^```\s*python\s*\n(.*?)^```", re.S | re.M)


def _examples(page: str) -> tuple[str, list[tuple[str, str]]]:
    """The page's setup block and its other blocks, each with the heading it stands under."""
    path = SPEC / page
    if not path.is_file():
        raise FileNotFoundError(
            f"The spec page {path} is missing. The tests expect the shared spec directory "
            "beside the repository (../shared/spec); copy it there before running them."
        )
    text = path.read_text()
    found = []
    for match in _FENCE.finditer(text):
        headings = re.findall(r"^#+ (.+)$", text[: match.start()], re.M)
        found.append((headings[-1] if headings else page, match.group(1)))
    (_, setup), *examples = found
    return setup, examples


EXAMPLES = [
    pytest.param(page, setup, code, id=f"{page}:{index}:{heading[:40]}")
    for page in PAGES
    for setup, blocks in [_examples(page)]
    for index, (heading, code) in enumerate(blocks, start=1)
]


def _run(setup: str, code: str, **overrides: Any) -> dict[str, Any]:
    """Execute the setup block, then the example, in one fresh namespace."""
    namespace: dict[str, Any] = {"__name__": "spec_example"}
    exec(compile(setup, "<setup>", "exec"), namespace)
    namespace.update(overrides)
    before = set(namespace)
    exec(compile(code, "<example>", "exec"), namespace)
    return {name: value for name, value in namespace.items() if name not in before}


def _definitions(defined: dict[str, Any]) -> list[Any]:
    kinds = (dg.AssetsDefinition, dg.AssetChecksDefinition)
    return [value for value in defined.values() if isinstance(value, kinds)]


@dg.asset
def raw_orders() -> pl.DataFrame:
    """The upstream the pages' `raw_orders` input names: valid rows, one undeclared column."""
    return storefront_orders().with_columns(channel=pl.lit("web"))


def _with_upstream(definitions: list[Any]) -> list[Any]:
    inputs = {
        key
        for definition in definitions
        if isinstance(definition, dg.AssetsDefinition)
        for key in definition.keys_by_input_name.values()
    }
    return [*definitions, raw_orders] if dg.AssetKey("raw_orders") in inputs else definitions


def test_every_example_block_is_found():
    pages = Counter(param.values[0] for param in EXAMPLES)
    assert pages == {"validation.md": 3, "hand-wiring.md": 4}


@pytest.mark.parametrize(("page", "setup", "code"), EXAMPLES)
def test_every_example_runs_and_writes_its_table(filesystem, page, setup, code):
    definitions = _definitions(_run(setup, code))
    assert definitions, "every example on these pages defines an asset"

    result = filesystem.materialize(_with_upstream(definitions))

    assert result.success
    written = filesystem.read("orders")
    assert written is not None and written.height == 12
    assert result.get_asset_check_evaluations()
    assert all(e.passed for e in result.get_asset_check_evaluations())


def test_without_the_package_at_all_writes_both_tables(filesystem):
    setup, blocks = _examples("hand-wiring.md")
    (code,) = [code for heading, code in blocks if heading == "Without the package at all"]
    defined = _run(setup, code, orders_frame=lambda: defective_orders().lazy())

    result = filesystem.materialize(_definitions(defined))

    assert result.success
    valid, quarantined = filesystem.read("orders"), filesystem.read("orders_quarantine")
    # `Schema.filter` knows no severities: warn-only rows leave the table there too.
    assert valid is not None and valid.height == 3
    assert quarantined is not None and quarantined.height == 10
