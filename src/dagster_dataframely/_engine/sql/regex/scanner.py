"""The reading position in a Rust `regex` pattern and its escapes (`\\n`, `\\x{..}`,
`\\d`, `\\p{..}`, `\\b`), which a pattern and a bracketed class read alike; the parser
(`parse`) and the class reader (`classes`) build on it.
"""

from __future__ import annotations

from .tree import Assertion, Flags, PerlClass, UnicodeClass

#: Characters `\\` makes literal; any other ASCII character but a letter, a digit, `<` or `>`
#: may be escaped too, as a literal (`is_escapeable_character` in regex-syntax).
_META = frozenset("\\.+*?()|[]{}^$#&-~")
_SPECIAL_ESCAPES = {"a": "\x07", "f": "\x0c", "t": "\t", "n": "\n", "r": "\r", "v": "\x0b"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_ASSERTION_ESCAPES = {"A": "start_text", "z": "end_text", "B": "not_word_boundary"}
_ANGLE_ASSERTIONS = {"<": "word_start_angle", ">": "word_end_angle"}
_SPECIAL_WORD_BOUNDARIES = ("start", "end", "start-half", "end-half")
#: Deeper nesting is refused (regex-syntax's own limit is 250) so that parsing never recurses
#: past Python's stack.
NEST_LIMIT = 100


class RegexSyntaxError(ValueError):
    """The pattern is not one this parser reads as the Rust `regex` crate does."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.message = message
        self.position = position


class Scanner:
    """A pattern, the position read up to, and the flags in force there."""

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
