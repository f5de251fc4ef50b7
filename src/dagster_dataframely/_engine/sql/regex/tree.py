"""The tree of a regex as the Rust `regex` crate reads it: one node per construct, each
carrying the inline flags in force where it stands, so no later step tracks flag scopes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Flags:
    """The inline flags in force at a node (`(?imsURu)`), with the crate's defaults."""

    case_insensitive: bool = False
    multi_line: bool = False
    dot_matches_new_line: bool = False
    swap_greed: bool = False
    unicode: bool = True
    crlf: bool = False


@dataclass(frozen=True)
class Empty:
    """Matches the empty string: an empty pattern, group or alternative."""


@dataclass(frozen=True)
class Literal:
    char: str
    flags: Flags


@dataclass(frozen=True)
class Dot:
    flags: Flags


@dataclass(frozen=True)
class Assertion:
    """A zero-width test: `^ $ \\A \\z \\b \\B \\< \\>` and `\\b{start}` etc.; `kind` names it,
    `text` is how the pattern wrote it."""

    kind: str
    text: str
    flags: Flags


@dataclass(frozen=True)
class Range:
    start: str
    end: str


@dataclass(frozen=True)
class AsciiClass:
    """`[:alpha:]` inside a bracket: ASCII characters whatever the flags."""

    name: str
    negated: bool


@dataclass(frozen=True)
class PerlClass:
    """`\\d \\s \\w` (`negated` for `\\D \\S \\W`)."""

    kind: str
    negated: bool
    flags: Flags


@dataclass(frozen=True)
class UnicodeClass:
    """`\\pL`, `\\p{Greek}`, `\\P{...}`: a Unicode property."""

    name: str
    negated: bool
    flags: Flags


@dataclass(frozen=True)
class SetOperation:
    """`lhs && rhs`, `lhs -- rhs` or `lhs ~~ rhs` inside a bracket."""

    operator: str
    lhs: ClassSet
    rhs: ClassSet


@dataclass(frozen=True)
class Bracketed:
    """`[...]` or `[^...]`: a union of items, or a set operation on such unions."""

    items: ClassSet
    negated: bool
    flags: Flags


ClassItem = str | Range | AsciiClass | PerlClass | UnicodeClass | Bracketed | SetOperation
#: A union of class items (one character each, as `str`) or one set operation.
ClassSet = tuple[ClassItem, ...] | SetOperation


@dataclass(frozen=True)
class Group:
    node: Node
    name: str | None = None


@dataclass(frozen=True)
class Concat:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    branches: tuple[Node, ...]


@dataclass(frozen=True)
class Repetition:
    """`node` repeated `low` to `high` times (`high` None: unbounded); laziness is kept for
    completeness, a match's existence does not depend on it."""

    node: Node
    low: int
    high: int | None
    greedy: bool


Node = (
    Empty
    | Literal
    | Dot
    | Assertion
    | PerlClass
    | UnicodeClass
    | Bracketed
    | Group
    | Concat
    | Alternation
    | Repetition
)
