"""`make screenshots`: the docs' pictures of the real Dagster UI over the demo's instance.

Run after `make demo` (the Makefile target does both). Starts `dagster-webserver` on
127.0.0.1 over `DEMO_DIR/dagster_home`, waits until it answers, and has Debian's headless
chromium render each page to a PNG under docs/images/ (shrunk with pngquant when present).
The UI is a JavaScript app: `--virtual-time-budget` lets it fetch and render before the shot.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import dagster as dg
from dagster_dataframely_demo._webserver import webserver

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


#: A failing check of orders whose sample holds nulls.
NULLS_CHECK = "dy_rule__customer_email__nullability"
#: A failing check of an "error" rule of orders: its rows went to the quarantine (`dy_quarantine`).
QUARANTINED_CHECK = "dy_rule__amount__min"
#: A failing check of customers, whose failing rows are kept in DuckDB (`dy_failing_rows`).
KEPT_CHECK = "dy_rule__country__regex"


def pages(instance: dg.DagsterInstance) -> dict[str, str]:
    """File name -> page of the UI (a path under the webserver's root)."""
    storefront = next(
        run
        for run in instance.get_runs()
        if run.asset_selection and dg.AssetKey("orders") in run.asset_selection
    )
    return {
        "columns.png": "/assets/orders?view=overview",
        "checks.png": "/assets/customers?view=checks&checkDetail=dy_rule__country__regex",
        "samples.png": f"/assets/orders?view=checks&checkDetail={NULLS_CHECK}",
        # Reading the Checks tab: a rule check of the gated orders, its rows in the quarantine.
        "checks-tab.png": f"/assets/orders?view=checks&checkDetail={QUARANTINED_CHECK}",
        # The failing rows kept: the query for them, run as it is in the warehouse.
        "failing-rows.png": f"/assets/customers?view=checks&checkDetail={KEPT_CHECK}",
        "materialization.png": "/assets/orders?view=events",
        "quarantine.png": "/assets/orders_quarantine?view=overview",
        "lineage.png": "/assets/orders_quarantine?view=lineage&lineageScope=neighbors",
        "run.png": f"/runs/{storefront.run_id}",
    }


def main() -> int:
    demo = Path(os.environ.get("DEMO_DIR") or ROOT / ".demo")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with webserver(demo) as url:
        _dismiss_welcome(url)
        instance = dg.DagsterInstance.from_config(str(demo / "dagster_home"))
        for name, page in pages(instance).items():
            _shoot(url + page, IMAGES / name)
            print(f"  {IMAGES / name} ({(IMAGES / name).stat().st_size // 1024} KB)")
    return 0


def _dismiss_welcome(url: str) -> None:
    """Mark the UI's first-visit "join the community" dialog as seen, as its Skip button does
    (a flag in the instance), so it does not cover the pictures."""
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": "mutation { setNuxSeen }"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=60).close()


def _shoot(url: str, target: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                "chromium",
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1400,1100",
                "--virtual-time-budget=30000",
                f"--screenshot={target}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    if shutil.which("pngquant"):
        subprocess.run(
            ["pngquant", "--force", "--skip-if-larger", "--output", str(target), str(target)],
            check=False,
        )


if __name__ == "__main__":
    sys.exit(main())
