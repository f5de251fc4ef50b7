"""Materialize the demo once and print what was written and what each check found."""

import sys
from collections import defaultdict

import dagster as dg

from .definitions import STORAGE, defs


def main() -> int:
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    print(f"\nRun {'succeeded' if result.success else 'failed'}; tables under {STORAGE}\n")
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        metadata = materialization.metadata
        rows = metadata["dagster/row_count"].value if "dagster/row_count" in metadata else "?"
        line = f"  wrote {materialization.asset_key.to_user_string():<14} {rows:>3} rows"
        if "dy_quarantine" in metadata:
            line += f"; invalid rows quarantined at {metadata['dy_quarantine'].value}"
        print(line)

    by_asset = defaultdict(list)
    for evaluation in result.get_asset_check_evaluations():
        by_asset[evaluation.asset_key.to_user_string()].append(evaluation)
    for asset, evaluations in by_asset.items():
        failed = [e for e in evaluations if not e.passed]
        print(f"\n{asset}: {len(evaluations) - len(failed)} checks passed, {len(failed)} failed")
        for e in failed:
            count = e.metadata["dy_failed_count"].value if "dy_failed_count" in e.metadata else ""
            print(f"  {e.severity.value:<5} {e.check_name:<46} {count:>3} rows  {e.description}")
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
