"""A parser of the Rust `regex` crate's syntax (what polars' `str.contains` reads) into a tree.

The SQL backend pushes a `regex` rule down only where the database's engine reads the pattern
as polars does; deciding that needs the pattern's structure, not its text. This parser follows
`regex-syntax` 0.8 (literals, escapes, classes with ranges, nesting and set operations, Perl,
POSIX and Unicode classes, assertions, groups, flags, alternation, greedy and lazy repetition)
and records on each node the flags in force there, so no later step tracks flag scopes. A
pattern it cannot read raises `RegexSyntaxError`: the rule then stays in polars, which
reports a pattern that is really invalid itself. Verbose mode (`(?x)`) is not read.
"""

from __future__ import annotations

from dataclasses import replace

from .classes import ClassReader
from .scanner import NEST_LIMIT, RegexSyntaxError
from .tree import (
    Alternation,
    Assertion,
    Concat,
    Dot,
    Empty,
    Flags,
    Group,
    Literal,
    Node,
    Repetition,
)

__all__ = ["RegexSyntaxError", "parse"]

_FLAG_NAMES = {
    "i": "case_insensitive",
    "m": "multi_line",
    "s": "dot_matches_new_line",
    "U": "swap_greed",
    "u": "unicode",
    "R": "crlf",
}


def parse(pattern: str) -> Node:
    """The tree of `pattern`, read as the Rust `regex` crate reads it."""
    parser = _Parser(pattern)
    try:
        node = parser.alternation()
    except RecursionError:
        raise RegexSyntaxError("nested too deeply", parser.pos) from None
    if not parser.at_end():
        raise parser.error("unopened group")
    return node


class _FlagsMarker:
    """A `(?i)` in a concatenation: nothing to match, and nothing to repeat."""


class _Parser(ClassReader):
    """Reads a whole pattern: alternations, concatenations, repetitions, groups, flags."""

    def alternation(self) -> Node:
        branches = [self.concat()]
        while not self.at_end() and self.char() == "|":
            self.pos += 1
            branches.append(self.concat())
        return branches[0] if len(branches) == 1 else Alternation(tuple(branches))

    def concat(self) -> Node:
        items: list[Node | _FlagsMarker] = []
        while not self.at_end() and self.char() not in "|)":
            c = self.char()
            if c in "?*+":
                self.pos += 1
                low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[c]
                items.append(self.repeat(items, low, high))
            elif c == "{":
                low, high = self.counts()
                items.append(self.repeat(items, low, high))
            elif c == "(":
                items.append(self.group())
            elif c == "[":
                items.append(self.bracketed())
            else:
                items.append(self.primitive())
        nodes = tuple(item for item in items if not isinstance(item, _FlagsMarker))
        if not nodes:
            return Empty()
        return nodes[0] if len(nodes) == 1 else Concat(nodes)

    def repeat(self, items: list[Node | _FlagsMarker], low: int, high: int | None) -> Node:
        if not items or isinstance(items[-1], _FlagsMarker):
            raise self.error("repetition operator missing expression")
        greedy = not self.take("?")
        node = items.pop()
        assert not isinstance(node, _FlagsMarker)
        return Repetition(node, low, high, greedy != self.flags.swap_greed)

    def counts(self) -> tuple[int, int | None]:
        self.pos += 1  # `{`
        low = self.decimal()
        if self.at_end():
            raise self.error("unclosed counted repetition")
        high: int | None = low
        if self.take(","):
            high = None if not self.at_end() and self.char() == "}" else self.decimal()
        if not self.take("}"):
            raise self.error("unclosed counted repetition")
        if high is not None and high < low:
            raise self.error("invalid counted repetition")
        return low, high

    def decimal(self) -> int:
        while not self.at_end() and self.char().isspace():
            self.pos += 1
        start = self.pos
        while not self.at_end() and "0" <= self.char() <= "9":
            self.pos += 1
        digits = self.text[start : self.pos]
        while not self.at_end() and self.char().isspace():
            self.pos += 1
        if not digits or int(digits) >= 2**32:
            raise self.error("invalid decimal in counted repetition")
        return int(digits)

    def group(self) -> Node | _FlagsMarker:
        self.pos += 1  # `(`
        if any(self.take(prefix) for prefix in ("?=", "?!", "?<=", "?<!")):
            raise self.error("look-around is not supported")
        name = None
        outer = self.flags
        if self.take("?P<") or self.take("?<"):
            name = self.capture_name()
        elif self.take("?"):
            flags = self.flag_items()
            if self.take(")"):
                self.flags = flags
                return _FlagsMarker()
            self.pos += 1  # `:`
            self.flags = flags
        self.depth += 1
        if self.depth > NEST_LIMIT:
            raise self.error("nested too deeply")
        node = self.alternation()
        self.depth -= 1
        self.flags = outer
        if not self.take(")"):
            raise self.error("unclosed group")
        return Group(node, name)

    def capture_name(self) -> str:
        start = self.pos
        while self.char() != ">":
            c = self.char()
            first = self.pos == start
            if not (c == "_" or c.isalpha() or (not first and (c in ".[]" or c.isalnum()))):
                raise self.error("invalid capture group name")
            self.pos += 1
        name = self.text[start : self.pos]
        self.pos += 1
        if not name or name in self.names:
            raise self.error("empty or duplicate capture group name")
        self.names.add(name)
        return name

    def flag_items(self) -> Flags:
        flags, negated, seen, dangling = self.flags, False, set(), False
        if self.char() == ")":
            raise self.error("repetition operator missing expression")
        while self.char() not in ":)":
            c = self.char()
            if c == "-":
                if negated:
                    raise self.error("repeated flag negation")
                negated = dangling = True
            elif c == "x":
                raise self.error("verbose mode (?x) is not read")
            elif c in _FLAG_NAMES and c not in seen:
                seen.add(c)
                dangling = False
                flags = replace(flags, **{_FLAG_NAMES[c]: not negated})
            else:
                raise self.error(f"unrecognized or duplicate flag {c!r}")
            self.pos += 1
        if dangling:
            raise self.error("dangling flag negation")
        return flags

    # Primitives

    def primitive(self) -> Node:
        c = self.char()
        if c == "\\":
            node = self.escape()
            if isinstance(node, str):
                return Literal(node, self.flags)
            return node
        self.pos += 1
        if c == ".":
            return Dot(self.flags)
        if c in "^$":
            return Assertion("start_line" if c == "^" else "end_line", c, self.flags)
        return Literal(c, self.flags)
