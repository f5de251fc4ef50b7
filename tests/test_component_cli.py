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


def test_dg_check_defs_names_the_entry_and_the_fix_of_a_value_dagster_checks_late(
    project: Project,
) -> None:
    """`blocking: sometimes` passes the YAML schema, and `expect_rows: 300000` is no bound:
    both fail with the file, the entry and what to write, not Dagster's ParameterCheckError
    or the YAML schema's "is not valid under any of the given schemas"."""
    project.configure(
        """\
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
            blocking: sometimes
        """
    )
    blocking = project.run("dg", "check", "defs")
    project.configure(
        """\
        checks:
          - asset: orders
            schema: dagster_dataframely.data:OrdersSchema
            expect_rows: 300000
        """
    )
    bound = project.run("dg", "check", "defs")

    blocking_output = " ".join((blocking.stdout + blocking.stderr).split())
    assert blocking.returncode != 0, blocking_output
    assert (
        f"{project.quality / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema): "
        "Invalid setting from argument blocking='sometimes' (the checks of asset orders): "
        "expected true or false." in blocking_output
    ), blocking_output
    bound_output = " ".join((bound.stdout + bound.stderr).split())
    assert bound.returncode != 0, bound_output
    assert f"{project.quality / 'defs.yaml'}:7" in bound_output, bound_output
    assert (
        "InvalidTableCheckError: expect_rows is the number 300000, which says no bound: write "
        "{min: 300000} for at least 300,000 rows, {max: 300000} for at most, or both."
        in bound_output
    ), bound_output
    for output in (blocking_output, bound_output):
        assert "ParameterCheckError" not in output and "not valid under any" not in output
