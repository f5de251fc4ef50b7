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

from .sets import ASCII_CLASSES
from .tree import (
    Alternation,
    AsciiClass,
    Assertion,
    Bracketed,
    ClassItem,
    ClassSet,
    Concat,
    Dot,
    Empty,
    Flags,
    Group,
    Literal,
    Node,
    PerlClass,
    Range,
    Repetition,
    SetOperation,
    UnicodeClass,
)

#: Characters `\\` makes literal; any other ASCII character but a letter, a digit, `<` or `>`
#: may be escaped too, as a literal (`is_escapeable_character` in regex-syntax).
_META = frozenset("\\.+*?()|[]{}^$#&-~")
_SPECIAL_ESCAPES = {"a": "\x07", "f": "\x0c", "t": "\t", "n": "\n", "r": "\r", "v": "\x0b"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_ASSERTION_ESCAPES = {"A": "start_text", "z": "end_text", "B": "not_word_boundary"}
_ANGLE_ASSERTIONS = {"<": "word_start_angle", ">": "word_end_angle"}
_SPECIAL_WORD_BOUNDARIES = ("start", "end", "start-half", "end-half")
_FLAG_NAMES = {
    "i": "case_insensitive",
    "m": "multi_line",
    "s": "dot_matches_new_line",
    "U": "swap_greed",
    "u": "unicode",
    "R": "crlf",
}
#: Deeper nesting is refused (regex-syntax's own limit is 250) so that parsing never recurses
#: past Python's stack.
_NEST_LIMIT = 100


class RegexSyntaxError(ValueError):
    """The pattern is not one this parser reads as the Rust `regex` crate does."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.message = message
        self.position = position


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


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.flags = Flags()
        self.depth = 0
        self.names: set[str] = set()

    def error(self, message: str) -> RegexSyntaxError:
        return RegexSyntaxError(message, self.pos)

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def char(self) -> str:
        if self.at_end():
            raise self.error("unexpected end of pattern")
        return self.text[self.pos]

    def peek(self, offset: int = 1) -> str | None:
        at = self.pos + offset
        return self.text[at] if at < len(self.text) else None

    def take(self, prefix: str) -> bool:
        if self.text.startswith(prefix, self.pos):
            self.pos += len(prefix)
            return True
        return False

    # Expressions

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
        if self.depth > _NEST_LIMIT:
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

    def escape(self) -> str | Assertion | PerlClass | UnicodeClass:
        """A `\\` sequence: a literal character, an assertion or a class."""
        start = self.pos
        self.pos += 1
        c = self.char()
        if c.isdigit():
            raise self.error("backreferences and octal escapes are not supported")
        if c in _HEX_DIGITS:
            return self.hex(c)
        if c in "pP":
            return self.unicode_class(negated=c == "P")
        self.pos += 1
        if c in "dswDSW":
            return PerlClass(c.lower(), c.isupper(), self.flags)
        if c in _META or (c.isascii() and not c.isalnum() and c not in "<>"):
            return c
        if c in _SPECIAL_ESCAPES:
            return _SPECIAL_ESCAPES[c]
        if c in _ASSERTION_ESCAPES:
            return Assertion(_ASSERTION_ESCAPES[c], "\\" + c, self.flags)
        if c in _ANGLE_ASSERTIONS:
            return Assertion(_ANGLE_ASSERTIONS[c], "\\" + c, self.flags)
        if c == "b":
            return self.word_boundary(start)
        raise self.error(f"unrecognized escape \\{c}")

    def word_boundary(self, start: int) -> Assertion:
        """`\\b`, or `\\b{start}` and its kin (but `\\b{2}` is `\\b` repeated)."""
        if not self.at_end() and self.char() == "{":
            after = self.peek()
            if after is not None and ((after.isascii() and after.isalpha()) or after == "-"):
                end = self.text.find("}", self.pos)
                name = self.text[self.pos + 1 : end] if end >= 0 else None
                if name not in _SPECIAL_WORD_BOUNDARIES:
                    raise self.error("unrecognized special word boundary")
                self.pos = end + 1
                assert name is not None
                kind = "word_" + name.replace("-", "_")
                return Assertion(kind, self.text[start : self.pos], self.flags)
        return Assertion("word_boundary", "\\b", self.flags)

    def hex(self, kind: str) -> str:
        self.pos += 1
        if not self.at_end() and self.char() == "{":
            end = self.text.find("}", self.pos)
            digits = self.text[self.pos + 1 : end] if end >= 0 else ""
            if end < 0 or not digits:
                raise self.error("invalid hexadecimal escape")
            self.pos = end + 1
        else:
            digits = self.text[self.pos : self.pos + _HEX_DIGITS[kind]]
            if len(digits) != _HEX_DIGITS[kind]:
                raise self.error("invalid hexadecimal escape")
            self.pos += len(digits)
        if any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise self.error("invalid hexadecimal digit")
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise self.error("hexadecimal escape is not a Unicode scalar value")
        return chr(code)

    def unicode_class(self, *, negated: bool) -> UnicodeClass:
        self.pos += 1
        if self.char() == "{":
            end = self.text.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed Unicode class")
            name = self.text[self.pos + 1 : end]
            self.pos = end + 1
        else:
            name = self.char()
            if name == "\\":
                raise self.error("invalid Unicode class")
            self.pos += 1
        return UnicodeClass(name, negated, self.flags)

    # Classes

    def bracketed(self) -> Bracketed:
        self.pos += 1  # `[`
        self.depth += 1
        if self.depth > _NEST_LIMIT:
            raise self.error("nested too deeply")
        negated = self.take("^")
        union: list[ClassItem] = []
        while self.take("-"):
            union.append("-")
        if not union and self.take("]"):
            union.append("]")
        result: ClassSet | None = None
        operator = ""
        while True:
            c = self.char()
            if c == "]":
                self.pos += 1
                break
            pair = self.text[self.pos : self.pos + 2]
            if pair in ("&&", "--", "~~"):
                self.pos += 2
                result = _combine(result, operator, tuple(union))
                operator, union = pair, []
            elif c == "[":
                union.append(self.ascii_class() or self.bracketed())
            else:
                union.append(self.class_range())
        self.depth -= 1
        return Bracketed(_combine(result, operator, tuple(union)), negated, self.flags)

    def ascii_class(self) -> AsciiClass | None:
        """`[:name:]` or `[:^name:]` at `[`, else None (then `[` opens a nested class)."""
        if not self.text.startswith("[:", self.pos):
            return None
        end = self.text.find(":]", self.pos + 2)
        name = self.text[self.pos + 2 : end] if end >= 0 else ""
        negated = name.startswith("^")
        if name.removeprefix("^") not in ASCII_CLASSES:
            return None
        self.pos = end + 2
        return AsciiClass(name.removeprefix("^"), negated)

    def class_range(self) -> ClassItem:
        first = self.class_item()
        if self.char() != "-" or self.peek() in ("]", "-"):
            return first
        self.pos += 1
        last = self.class_item()
        if not isinstance(first, str) or not isinstance(last, str):
            raise self.error("invalid class range endpoint")
        if last < first:
            raise self.error("invalid class range")
        return Range(first, last)

    def class_item(self) -> ClassItem:
        if self.char() != "\\":
            self.pos += 1
            return self.text[self.pos - 1]
        item = self.escape()
        if isinstance(item, Assertion):
            raise self.error("invalid escape in a class")
        return item


def _combine(lhs: ClassSet | None, operator: str, rhs: tuple[ClassItem, ...]) -> ClassSet:
    return rhs if lhs is None else SetOperation(operator, lhs, rhs)
