"""What the Dagster UI shows after `make demo`, read from a real `dagster-webserver` over
GraphQL: the Columns tab, and each check with its status, severity and counts."""

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from dagster_dataframely_demo._data import generate
from dagster_dataframely_demo._webserver import webserver as serve
from dagster_dataframely_demo.payments_migrated import Payments
from dagster_dataframely_demo.schema import Orders
from demo_run import DemoRun

pytestmark = pytest.mark.xdist_group("demo")

_QUERY = """
{ assetNodes {
    assetKey { path } dependencyKeys { path }
    metadataEntries { label ... on TableSchemaMetadataEntry {
        schema { columns { name type constraints { nullable unique other } }
                 constraints { other } } } }
    assetChecksOrError { ... on AssetChecks { checks {
        name description blocking
        executionForLatestMaterialization { status evaluation {
            severity success
            metadataEntries { label
                ... on TextMetadataEntry { text }
                ... on IntMetadataEntry { intValue } } } } } } }
} }
"""


@pytest.fixture(scope="module")
def webserver(demo: DemoRun) -> Iterator[str]:
    """`dagster-webserver` over the instance `make demo` wrote, as `make ui` serves it."""
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    with serve(demo.folder) as url:
        yield url


def _asset_nodes(url: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": _QUERY}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        nodes = json.load(response)["data"]["assetNodes"]
    return {"/".join(node["assetKey"]["path"]): node for node in nodes}


def _columns_tab(node: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [e for e in node["metadataEntries"] if e["label"] == "dagster/column_schema"]
    return entry["schema"]


def _checks(node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in node["assetChecksOrError"]["checks"]}


def _latest(check: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Status, severity and metadata of the check's latest execution, as the UI shows it."""
    execution = check["executionForLatestMaterialization"]
    evaluation = execution["evaluation"]
    metadata = {
        entry["label"]: entry.get("text", entry.get("intValue"))
        for entry in evaluation["metadataEntries"]
    }
    return execution["status"], evaluation["severity"], metadata


def test_gated_sidecar_and_component_checked_assets_show_the_schema_in_the_columns_tab(
    webserver: str,
) -> None:
    nodes = _asset_nodes(webserver)
    orders = _columns_tab(nodes["orders"])
    columns = {column["name"]: column for column in orders["columns"]}
    assert list(columns) == Orders.column_names()
    assert columns["amount"]["type"] == "Float64"
    assert columns["ordered_at"]["type"] == "Datetime(us, UTC)"
    assert columns["amount"]["constraints"]["nullable"] is True
    assert "amount >= 0" in columns["amount"]["constraints"]["other"]
    assert columns["line_item_id"]["constraints"]["unique"] is True
    assert columns["order_id"]["constraints"]["other"][0] == "part of primary key"
    assert "primary key (order_id, line) is unique" in orders["constraints"]["other"]
    quarantine = nodes["orders_quarantine"]  # declared, beside orders, with its own columns
    assert quarantine["dependencyKeys"] == nodes["orders"]["dependencyKeys"]
    assert _columns_tab(quarantine)["columns"][-1]["name"].startswith("dy_rule__")
    customers = {c["name"]: c for c in _columns_tab(nodes["customers"])["columns"]}
    assert customers["customer_email"]["constraints"]["other"][0] == "primary key"
    assert not [e for e in nodes["raw_orders"]["metadataEntries"] if "column" in e["label"]]
    # Declared in the defs folder and checked by the Component: the folder's YAML fills it.
    for payments in ("card_payments", "invoice_payments"):
        names = [column["name"] for column in _columns_tab(nodes[payments])["columns"]]
        assert names == Payments.column_names()


def test_each_rule_is_a_check_with_its_description_and_blocking(webserver: str) -> None:
    nodes = _asset_nodes(webserver)
    gated = _checks(nodes["orders"])
    assert gated["dy_schema__columns"]["blocking"] is True
    assert gated["dy_rule__amount__min"]["description"] == "amount >= 0"
    assert gated["dy_rule__amount__min"]["blocking"] is False  # the asset quarantines
    sidecar = _checks(nodes["customers"])
    assert sidecar["dy_rule__country__regex"]["blocking"] is True
    # The Pandera model and its migrated twin: the same checks.
    assert set(_checks(nodes["card_payments"])) == set(_checks(nodes["invoice_payments"]))


def test_a_failing_check_shows_status_severity_and_counts(webserver: str) -> None:
    nodes = _asset_nodes(webserver)
    status, severity, metadata = _latest(_checks(nodes["customers"])["dy_rule__country__regex"])
    assert (status, severity) == ("FAILED", "ERROR")
    assert next(iter(metadata)) == "dy_assessment"  # the UI's first row
    assert metadata["dy_assessment"] == "failed at severity ERROR: 2 of 400 rows, 0.5%"
    assert metadata["dy_constraint"] == "country matches /^[A-Z]{2}$/"
    assert (metadata["dy_failed_count"], metadata["dy_row_count"]) == (2, 400)

    rows = generate().order_lines
    failed = Orders.filter(rows, cast=False).failure.counts()["amount|max"]
    status, severity, metadata = _latest(_checks(nodes["orders"])["dy_rule__amount__max"])
    assert (status, severity) == ("FAILED", "WARN")
    assert metadata["dy_failed_count"] == failed
    assert metadata["dy_assessment"].startswith(
        f"failed at severity WARN: {failed} of {rows.height:,}"
    )

    status, _, metadata = _latest(_checks(nodes["products"])["dy_rule__price__min_exclusive"])
    assert status == "SUCCEEDED" and metadata["dy_failed_count"] == 0
