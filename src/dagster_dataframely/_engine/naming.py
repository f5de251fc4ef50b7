"""Check names, the reserved `dy_` namespace, and the guards that keep names unique.

Check names are derived, never configured: `dy_rule__` + the Dataframely rule name with `|`
replaced by `__`. Dagster names hold only ASCII letters, digits and `_`, so a rule or column
name with other characters (`"order id"`, `"größe"`) is spelled in those (`dagster_name`);
two names that spell the same are refused, never merged. The quarantine frame uses the same
names for its rule columns, so data columns must stay out of the `dy_` namespace.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from ..errors import CheckNameCollisionError, ReservedColumnError

RESERVED_PREFIX = "dy_"
COLUMN_SCHEMA_CHECK = "dy_schema__columns"
SCHEMA_RULES_CHECK = "dy_schema__rules"
#: Table checks (`dd.expect_rows`, `dd.expect_fresh`): the `dy_table__` prefix no rule's
#: (`dy_rule__`), column's (`dy_col__`) or schema's (`dy_schema__`) check name starts with.
ROW_COUNT_CHECK = "dy_table__row_count"
FRESHNESS_CHECK = "dy_table__freshness"
TRENDS_CHECK = "dy_table__trends"

_DAGSTER_NAME = re.compile(r"^[A-Za-z0-9_]+$")
# Latin letters Unicode does not decompose into a base letter and a mark.
_LATIN = str.maketrans(
    {
        "ß": "ss",
        "ẞ": "SS",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "TH",
        "ł": "l",
        "Ł": "L",
        "\N{LATIN SMALL LETTER DOTLESS I}": "i",
    }
)


def dagster_name(text: str) -> str:
    """`text` as a Dagster name (ASCII letters, digits, `_`); a valid name is itself.

    Deterministic and readable where it can be: accents are dropped (`größe` -> `grosse`),
    each run of spaces or punctuation becomes one `_` (`order id` -> `order_id`), and a letter
    of another script becomes its code point (`数量` -> `u6570u91cf`). Different texts can
    spell the same, so callers guard the names they derive.
    """
    if _DAGSTER_NAME.match(text):
        return text
    spelled: list[str] = []
    for char in unicodedata.normalize("NFKD", text.translate(_LATIN)):
        if char.isascii() and (char.isalnum() or char == "_"):
            spelled.append(char)
        elif unicodedata.combining(char):
            continue
        elif char.isalnum():
            spelled.append(f"u{ord(char):04x}")
        elif not spelled or spelled[-1] != "_":
            spelled.append("_")
    return "".join(spelled) or "_"


def check_name(rule: str) -> str:
    """The check name of a Dataframely rule: `amount|min` -> `dy_rule__amount__min`,
    `order id|min` -> `dy_rule__order_id__min`."""
    return "dy_rule__" + dagster_name(rule.replace("|", "__"))


def column_check_name(column: str) -> str:
    """The check name that collects every rule of `column` (column granularity)."""
    return "dy_col__" + dagster_name(column)


def guard_columns(schema_name: str, columns: Iterable[str]) -> None:
    """Refuse data columns in the reserved namespace, which quarantine rule columns use."""
    reserved = sorted(c for c in columns if c.startswith(RESERVED_PREFIX))
    if reserved:
        raise ReservedColumnError(
            f"Schema {schema_name} has columns in the reserved `{RESERVED_PREFIX}` namespace: "
            f"{', '.join(map(repr, reserved))}. dagster-dataframely names checks and quarantine "
            f"rule columns `{RESERVED_PREFIX}…`; rename these columns (`dy.Column(alias=...)` "
            "keeps the attribute name)."
        )


def guard_check_names(schema_name: str, names: Mapping[str, str]) -> None:
    """Refuse two rules (or columns) that share one check name.

    `names` maps each rule (or column) to the check name derived from it.
    """
    owners: dict[str, list[str]] = {}
    for rule, name in names.items():
        owners.setdefault(name, []).append(rule)
    clashes = {name: rules for name, rules in owners.items() if len(rules) > 1}
    if clashes:
        listed = "; ".join(f"{name!r} <- {', '.join(map(repr, r))}" for name, r in clashes.items())
        raise CheckNameCollisionError(
            f"Schema {schema_name} has rules or columns that map to the same check name: "
            f"{listed}. A check name keeps only ASCII letters, digits and `_` (`|` becomes "
            "`__`, spaces and punctuation `_`, accents are dropped), so these names differ "
            "only in characters it cannot hold. Rename one of them so each keeps a check of "
            "its own."
        )
