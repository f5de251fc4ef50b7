"""The Component's definition-time refusals through the real `dg check defs`, in the `dg`
project of tests/test_cli_runs.py (the assets in `defs/orders.py`, the checks in
`defs/quality/defs.yaml`)."""

from __future__ import annotations

from test_cli_runs import Project, project

__all__ = ["project"]  # the project fixture, shared with the CLI runs


def _check_defs(project: Project, asset: str) -> tuple[int, str]:
    """`dg check defs` with one entry checking `asset`: its exit code and output."""
    project.configure(
        f"""\
        checks:
          - asset: {asset}
            schema: dagster_dataframely.data:OrdersSchema
        """
    )
    checked = project.run("dg", "check", "defs")
    return checked.returncode, checked.stdout + checked.stderr


def test_dg_check_defs_fails_for_a_key_the_defs_folder_does_not_declare(project: Project) -> None:
    code, output = _check_defs(project, "order")

    assert code != 0, output
    assert (
        f"{project.quality / 'defs.yaml'}: checks[0] (asset order, schema OrdersSchema): asset "
        "order is not declared in this project's defs folder, which declares 2 asset(s). "
        "Closest declared keys: orders." in " ".join(output.split())
    ), output
    assert "UnknownAssetError" in output


def test_dg_check_defs_passes_once_the_key_is_fixed(project: Project) -> None:
    code, output = _check_defs(project, "orders")

    assert code == 0, output
