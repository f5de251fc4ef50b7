"""The Component's definition-time refusals through the real `dg check defs`, in the `dg`
project of tests/test_cli_runs.py (the assets in `defs/orders.py`, the checks in
`defs/quality/defs.yaml`)."""

from __future__ import annotations

from test_cli_runs import Project, project

__all__ = ["project"]  # the project fixture, shared with the CLI runs


def test_dg_check_defs_fails_for_a_key_the_defs_folder_does_not_declare(project: Project) -> None:
    project.configure(
        """\
        checks:
          - asset: order
            schema: dagster_dataframely.data:OrdersSchema
        """
    )

    checked = project.run("dg", "check", "defs")

    output = checked.stdout + checked.stderr
    assert checked.returncode != 0, output
    assert (
        f"{project.quality / 'defs.yaml'}: checks[0] (asset order, schema OrdersSchema): asset "
        "order is not declared in this project's defs folder (2 assets are). Closest declared "
        "keys: orders." in " ".join(output.split())
    ), output
    assert "UnknownAssetError" in output


def test_dg_check_defs_passes_once_the_key_is_fixed(project: Project) -> None:
    project.configure(
        """\
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
        """
    )

    checked = project.run("dg", "check", "defs")

    assert checked.returncode == 0, checked.stdout + checked.stderr
