"""The dbt project of `dbt_shop`, copied with data tests and a contract on its models, and a
project-local `dbt_utils` package (the two generic tests the suite needs, written here: the
suite runs offline, so `dbt deps` cannot fetch the real one)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from dbt_shop import DATABASE, DBT, PROJECT

SCHEMA_YML = """
version: 2
models:
  - name: customers
    config:
      contract: {enforced: true}
      tags: [core]
    columns:
      - name: customer_id
        data_type: integer
        constraints: [{type: not_null}]
        data_tests: [unique, not_null]
      - name: name
        data_type: varchar
  - name: orders
    data_tests:
      - dbt_utils.unique_combination_of_columns:
          arguments: {combination_of_columns: [order_id, customer_id]}
      - dbt_utils.expression_is_true:
          arguments: {expression: "amount >= 0"}
          config: {severity: warn}
      - dbt_utils.recency:
          arguments: {datepart: day, field: order_date, interval: 1}
    columns:
      - name: order_id
        data_tests: [not_null, unique]
      - name: customer_id
        data_tests:
          - not_null
          - relationships: {arguments: {to: "ref('customers')", field: customer_id}}
          - accepted_values:
              arguments: {values: [1, 2], quote: false}
              config: {severity: warn}
          - dbt_utils.expression_is_true:
              arguments: {expression: "<= 2"}
      - name: status
        data_tests:
          - accepted_values:
              arguments: {values: [open, paid, shipped]}
              config: {warn_if: ">= 1", error_if: "> 5"}
      - name: amount
        data_tests:
          - dbt_utils.expression_is_true:
              arguments: {expression: "< 1000"}
"""
DBT_UTILS_PROJECT = """
name: dbt_utils
version: "0.0.1"
config-version: 2
macro-paths: ["macros"]
"""
DBT_UTILS_TESTS = """
{% test expression_is_true(model, expression, column_name=None) %}
select * from {{ model }}
where not ({{ column_name ~ ' ' if column_name else '' }}{{ expression }})
{% endtest %}

{% test unique_combination_of_columns(model, combination_of_columns) %}
select {{ combination_of_columns | join(', ') }}
from {{ model }}
group by {{ combination_of_columns | join(', ') }}
having count(*) > 1
{% endtest %}

{% test recency(model, datepart, field, interval) %}
select max({{ field }}) from {{ model }}
having max({{ field }}) < current_date - {{ interval }}
{% endtest %}
"""


def project_with_tests(folder: Path, schema_yml: str = SCHEMA_YML) -> Path:
    """The shop project with `schema_yml` (default: `SCHEMA_YML`'s tests), parsed in
    `folder`; it builds into `folder / "shop.duckdb"`."""
    project = folder / "dbt_project"
    shutil.copytree(PROJECT, project)
    (project / "models" / "schema.yml").write_text(schema_yml)
    utils = project / "dbt_packages" / "dbt_utils"
    (utils / "macros").mkdir(parents=True)
    (utils / "dbt_project.yml").write_text(DBT_UTILS_PROJECT)
    (utils / "macros" / "tests.sql").write_text(DBT_UTILS_TESTS)
    (project / "packages.yml").write_text("packages:\n  - local: dbt_packages/dbt_utils\n")
    dbt("parse", project)
    return project


def dbt(command: str, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, DATABASE: str(project.parent / "shop.duckdb")}
    return subprocess.run(
        [DBT, command, "--project-dir", str(project), "--profiles-dir", str(project), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
