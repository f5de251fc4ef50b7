"""Bracketed classes of a Rust `regex` pattern (`[a-z]`, `[^\\d[:punct:]]`, nested
classes and the set operations `&&`, `--`, `~~`), read into `tree` nodes.
"""

from __future__ import annotations

from .scanner import NEST_LIMIT, Scanner
from .sets import ASCII_CLASSES
from .tree import AsciiClass, Assertion, Bracketed, ClassItem, ClassSet, Range, SetOperation


class ClassReader(Scanner):
    """Reads a bracketed class at `[`."""

    def bracketed(self) -> Bracketed:
        self.pos += 1  # `[`
        self.depth += 1
        if self.depth > NEST_LIMIT:
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
