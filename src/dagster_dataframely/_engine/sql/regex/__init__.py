"""The pattern of a `regex` rule, read as polars reads it (Rust's `regex` syntax, `parse` into
a `tree`, its escapes read by `scanner` and its bracketed classes by `classes`) and written
for each database's regex engine where that engine reads it alike (`engines`, with classes
evaluated to exact code point `sets`); elsewhere `NotExact`.
"""

from .engines import (
    JAVA,
    POSTGRES_ARE,
    RE2,
    REDSHIFT_POSIX,
    SNOWFLAKE_ERE,
    TRINO,
    RegexEngine,
)
from .parse import RegexSyntaxError, parse

__all__ = [
    "JAVA",
    "POSTGRES_ARE",
    "RE2",
    "REDSHIFT_POSIX",
    "SNOWFLAKE_ERE",
    "TRINO",
    "RegexEngine",
    "RegexSyntaxError",
    "parse",
]
