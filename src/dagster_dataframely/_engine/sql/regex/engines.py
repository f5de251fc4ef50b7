"""A polars regex written for a database's regex engine, where that engine reads it alike.

Polars' `str.contains` searches with Rust's `regex` crate: Unicode classes, `.` short of a
newline, `^`/`$` at the ends of the text. An engine is given a pattern only when every node
of the parsed tree has one meaning in both, written so the engine reads that meaning: `.` as
a class without the newline, a class as its exact set of code points (ranges, POSIX classes
and set operations computed here), a group as `(?:...)`. Laziness is dropped: it moves a
match, never decides whether there is one. A node without such a form, a count past the
engine's limit or a pattern past its size raises `NotExact` naming the construct.
"""

from __future__ import annotations

from typing import ClassVar

from ..exactness import NotExact
from .parse import RegexSyntaxError, parse
from .sets import ASCII_CLASSES, CharSet, complement, interval, operate, union
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

_ANCHORS = {"start_line": "^", "start_text": "^", "end_line": "$", "end_text": "$"}
_PERL_NAMES = {"d": "digits", "s": "white space", "w": "word characters"}


class RegexEngine:
    """RE2 (DuckDB's `REGEXP_MATCHES`, BigQuery's `REGEXP_CONTAINS`): `.` and `^ $` as in
    polars, classes of code points, `\\x{...}` escapes; `\\d \\s \\w \\b` are ASCII."""

    name: ClassVar[str] = "RE2"
    #: The largest count of `{n,m}`; RE2 also bounds the product of nested counts by it.
    repetition_limit: ClassVar[int] = 1000
    nested_counts_limited: ClassVar[bool] = True
    #: The largest pattern, counted in atoms after expanding counted repetitions, that the
    #: engine compiles within its memory limit (measured with room to spare).
    size_limit: ClassVar[int] = 20_000
    #: Whether characters past ASCII must stay in polars.
    ascii_only: ClassVar[bool] = False
    #: What `\\d \\s \\w` and `\\b` mean there.
    classes_mean: ClassVar[str] = "ASCII"
    #: Whether `^` and `$` are read as polars reads them only at the pattern's ends: DuckDB's
    #: RE2 finds no match for `^^` or `$$` and one for `^a^` in "a" (differential test).
    anchors_at_ends_only: ClassVar[bool] = True
    any_char: ClassVar[str] = "(?s:.)"
    #: How `.` (any character but a newline) is written, None for a class.
    dot: ClassVar[str | None] = "."
    _meta: ClassVar[str] = "\\.+*?()|[]{}^$"

    def search_pattern(self, pattern: str) -> str:
        """The engine's pattern that finds a match in a string exactly where polars'
        `str.contains(pattern)` does; `NotExact` names the construct that prevents it."""
        try:
            tree = parse(pattern)
        except RegexSyntaxError as error:
            raise NotExact(f"regex not read: {error}") from None
        try:
            if self.anchors_at_ends_only and _inner_anchor(tree, leading=True, trailing=True):
                raise NotExact(f"regex ^ or $ inside the pattern: {self.name} reads it otherwise")
            text, size = self._render(tree, 1)
        except RecursionError:
            raise NotExact("regex nested too deeply") from None
        if size > self.size_limit:
            raise NotExact(f"regex over {self.name}'s size limit once its counts expand")
        return text

    def _render(self, node: Node, product: int) -> tuple[str, int]:
        """`node` written for the engine, and its size once counted repetitions expand."""
        if isinstance(node, Empty):
            return "", 0
        if isinstance(node, Literal):
            return self._literal(node), 1
        if isinstance(node, Dot):
            self._flags(node.flags, ".")
            excluded = {"\n", "\r"} if node.flags.crlf else {"\n"}
            if node.flags.dot_matches_new_line:
                return self.any_char, 1
            if self.dot is not None and not node.flags.crlf:
                return self.dot, 1
            return self._class(complement(union(interval(c, c) for c in excluded)), "."), 1
        if isinstance(node, Assertion):
            return self._assertion(node), 1
        if isinstance(node, (PerlClass, UnicodeClass, Bracketed)):
            return self._class(_class_set(node, self), _text(node)), 1
        if isinstance(node, Group):
            text, size = self._render(node.node, product)
            return f"(?:{text})", size
        if isinstance(node, Concat):
            parts = [self._render(child, product) for child in node.nodes]
            return "".join(text for text, _ in parts), sum(size for _, size in parts)
        if isinstance(node, Alternation):
            parts = [self._render(child, product) for child in node.branches]
            return "|".join(text for text, _ in parts), sum(size for _, size in parts)
        return self._repetition(node, product)

    def _repetition(self, node: Repetition, product: int) -> tuple[str, int]:
        low, high = node.low, node.high
        for count in (low, high):
            if count is not None and count > self.repetition_limit:
                raise NotExact(
                    f"regex {{{count}}} over {self.name}'s repetition limit of "
                    f"{self.repetition_limit}"
                )
        counted = max(1, high if high is not None else low)
        if self.nested_counts_limited and product * counted > self.repetition_limit:
            raise NotExact(
                f"regex nested counts over {self.name}'s repetition limit of "
                f"{self.repetition_limit}"
            )
        text, size = self._render(node.node, product * counted)
        if not isinstance(node.node, (Literal, Dot, PerlClass, UnicodeClass, Bracketed, Group)):
            text = f"(?:{text})"  # `a**`, `^*`: a repeated repetition or assertion
        operator = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
        if operator is None:
            operator = (
                f"{{{low},}}"
                if high is None
                else f"{{{low}}}"
                if low == high
                else f"{{{low},{high}}}"
            )
        copies = low + 1 if high is None else low + 2 * (high - low)
        return text + operator, size * copies

    def _flags(self, flags: Flags, construct: str) -> None:
        if not flags.unicode:
            raise NotExact(f"regex (?-u) {construct}: bytes in polars, characters in {self.name}")

    def _literal(self, node: Literal) -> str:
        c = node.char
        if node.flags.case_insensitive and not (c.isascii() and not c.isalpha()):
            raise NotExact(f"regex (?i): Unicode case folding in polars, not in {self.name}")
        if not c.isascii():
            self._flags(node.flags, "literal")
        return self._char(c)

    def _assertion(self, node: Assertion) -> str:
        anchor = _ANCHORS.get(node.kind)
        if anchor is not None and not (node.flags.multi_line and node.kind.endswith("line")):
            return anchor
        if anchor is not None:
            raise NotExact(f"regex (?m) {node.text}: line anchors differ in {self.name}")
        if node.kind.endswith("angle"):
            side = "start" if node.text == "\\<" else "end"
            raise NotExact(
                f"regex {node.text}: a word {side} in polars, a literal {node.text[1]} "
                f"in {self.name}"
            )
        raise NotExact(f"regex {node.text}: a Unicode word boundary in polars, not in {self.name}")

    def _class(self, chars: CharSet, construct: str) -> str:
        """A class matching exactly `chars`, code point by code point."""
        if not chars:
            raise NotExact(f"regex {construct}: an empty class, {self.name} cannot write it")
        rest = complement(chars)
        if not rest:
            return self.any_char
        if chars[-1][1] < 0x80:
            return "[" + self._items(chars) + "]"
        if rest[-1][1] < 0x80:
            return "[^" + self._items(rest) + "]"
        if self.ascii_only:
            raise NotExact(f"regex {construct}: characters past ASCII in {self.name}")
        return "[" + self._items(chars) + "]"

    def _items(self, chars: CharSet) -> str:
        write = self._class_char
        return "".join(
            write(chr(lo)) + ("" if lo == hi else "-" + write(chr(hi))) for lo, hi in chars
        )

    def _char(self, c: str) -> str:
        """`c` outside a class."""
        if c in self._meta:
            return "\\" + c
        return c if " " <= c <= "~" else f"\\x{{{ord(c):X}}}"

    def _class_char(self, c: str) -> str:
        """`c` inside a class."""
        if c.isascii() and c.isalnum():
            return c
        return "\\" + c if " " <= c <= "~" else f"\\x{{{ord(c):X}}}"


class PostgresRegexEngine(RegexEngine):
    """PostgreSQL's advanced regular expressions (`~`): `.` and negated classes match a
    newline (so `.` is written `[^[.newline.]]`), counts up to 255, `\\d \\s \\w` follow the
    locale. Patterns are written without a backslash (`[.]`, `[[.circumflex.]]`), so the
    string literal means the same whatever `standard_conforming_strings` says; characters
    past ASCII stay in polars, as the database's encoding decides what they are."""

    name = "PostgreSQL"
    repetition_limit = 255
    nested_counts_limited = False
    anchors_at_ends_only = False
    size_limit = 10_000
    ascii_only = True
    classes_mean = "the locale's"
    any_char = "."
    dot = None
    #: Characters that `[c]` would not write (`]`, `^` first, `\\` an escape, `[.`, `-`),
    #: written as POSIX collating elements.
    _named: ClassVar[dict[str, str]] = {
        "]": "right-square-bracket",
        "[": "left-square-bracket",
        "^": "circumflex",
        "\\": "backslash",
        "-": "hyphen",
        "\0": "NUL",
        "\t": "tab",
        "\n": "newline",
        "\v": "vertical-tab",
        "\f": "form-feed",
        "\r": "carriage-return",
    }

    def _char(self, c: str) -> str:
        written = self._class_char(c)
        if c == "-" or (written == c and c not in self._meta):
            return c
        return "[" + written + "]"

    def _class_char(self, c: str) -> str:
        if not c.isascii():
            raise NotExact(f"regex {c!r}: a character past ASCII in {self.name}")
        name = self._named.get(c)
        return c if name is None else f"[.{name}.]"


class DeclinedRegexEngine(RegexEngine):
    """Snowflake's `REGEXP_LIKE`: it matches the whole string and reads POSIX EREs, and no
    test runs it (fakesnow runs DuckDB's engine); every regex stays in polars."""

    name = "Snowflake"
    #: Why no pattern is written for the engine.
    reason: ClassVar[str] = (
        "regex: Snowflake's REGEXP_LIKE matches the whole string with POSIX EREs"
    )

    def search_pattern(self, pattern: str) -> str:
        raise NotExact(self.reason)


class RedshiftRegexEngine(DeclinedRegexEngine):
    """Redshift's `~`: a POSIX engine whose documentation lists its operators but not how
    `.`, a negated class or an anchor treat a newline, nor the collating elements
    (`[.newline.]`) PostgreSQL's writing relies on; every regex stays in polars."""

    name = "Redshift"
    reason = "regex: Redshift's POSIX engine is not documented construct by construct"


class TrinoRegexEngine(RegexEngine):
    """Trino's `regexp_like` (a search), run by joni with Java's syntax by default or by
    RE2J (`regex-library`): only what both read alike is written. The ends are `\\A` and
    `\\z` (joni's `^`/`$` follow Ruby's line rules), `.` is the class of all but the
    newline, characters are ASCII written `\\xHH` (the one escape all of Java's syntax,
    joni and RE2J read), and an anchor inside the pattern stays in polars.
    https://trino.io/docs/current/functions/regexp.html"""

    name = "Trino"
    ascii_only = True
    classes_mean = "its library's"
    any_char = "(?:[^\\x0A]|\\x0A)"
    dot = None
    _ENDS: ClassVar[dict[str, str]] = {"^": "\\A", "$": "\\z"}

    def _assertion(self, node: Assertion) -> str:
        written = super()._assertion(node)
        return self._ENDS.get(written, written)

    def _char(self, c: str) -> str:
        if not c.isascii():
            raise NotExact(f"regex {c!r}: a character past ASCII in {self.name}")
        return super()._char(c) if " " <= c <= "~" else f"\\x{ord(c):02X}"

    def _class_char(self, c: str) -> str:
        if c.isascii() and not " " <= c <= "~":
            return f"\\x{ord(c):02X}"
        return super()._class_char(c)


class JavaRegexEngine(RegexEngine):
    """`java.util.regex` (Spark's `RLIKE`, a search): `$` also matches before a final line
    terminator, so the end is written `\\z`; `.` also stops at `\\r`, `\\u0085`,
    `\\u2028` and `\\u2029`, so it is written as the class of every code point but the
    newline. Classes are sets of code points (`\\x{...}` past the BMP too); `\\d \\s \\w \\b`
    are ASCII. It backtracks: a repeated group over a very long value can exhaust the JVM's
    stack, which fails the query (an error, never a wrong count)."""

    name = "Java"
    anchors_at_ends_only = False
    dot = None

    def _assertion(self, node: Assertion) -> str:
        written = super()._assertion(node)
        return "\\z" if written == "$" else written


RE2 = RegexEngine()
POSTGRES_ARE = PostgresRegexEngine()
SNOWFLAKE_ERE = DeclinedRegexEngine()
REDSHIFT_POSIX = RedshiftRegexEngine()
JAVA = JavaRegexEngine()
TRINO = TrinoRegexEngine()


def _inner_anchor(node: Node, *, leading: bool, trailing: bool) -> bool:
    """Whether `node` has a `^` (`\\A`) that something may precede or a `$` (`\\z`) that
    something may follow (`leading`/`trailing`: nothing comes before/after `node`)."""
    if isinstance(node, Assertion):
        if node.kind in ("start_line", "start_text"):
            return not leading
        return node.kind in ("end_line", "end_text") and not trailing
    if isinstance(node, Group):
        return _inner_anchor(node.node, leading=leading, trailing=trailing)
    if isinstance(node, Alternation):
        return any(
            _inner_anchor(branch, leading=leading, trailing=trailing) for branch in node.branches
        )
    if isinstance(node, Concat):
        last = len(node.nodes) - 1
        return any(
            _inner_anchor(child, leading=leading and i == 0, trailing=trailing and i == last)
            for i, child in enumerate(node.nodes)
        )
    if isinstance(node, Repetition):
        return _inner_anchor(node.node, leading=False, trailing=False)
    return False


def _text(node: PerlClass | UnicodeClass | Bracketed) -> str:
    if isinstance(node, PerlClass):
        return "\\" + (node.kind.upper() if node.negated else node.kind)
    if isinstance(node, UnicodeClass):
        return ("\\P" if node.negated else "\\p") + "{" + node.name + "}"
    return "[...]"


def _class_set(node: ClassItem, engine: RegexEngine) -> CharSet:
    """The code points `node` matches in polars, or `NotExact` where they depend on
    Unicode tables (`\\d`, `\\p{...}`) or on case folding."""
    if isinstance(node, str):
        return interval(node, node)
    if isinstance(node, Range):
        return interval(node.start, node.end)
    if isinstance(node, AsciiClass):
        chars = ASCII_CLASSES[node.name]
        return complement(chars) if node.negated else chars
    if isinstance(node, PerlClass):
        engine._flags(node.flags, _text(node))
        raise NotExact(
            f"regex {_text(node)}: Unicode {_PERL_NAMES[node.kind]} in polars, "
            f"{engine.classes_mean} in {engine.name}"
        )
    if isinstance(node, UnicodeClass):
        raise NotExact(
            f"regex {_text(node)}: Unicode tables differ between polars and {engine.name}"
        )
    if isinstance(node, SetOperation):
        return operate(node.operator, _set(node.lhs, engine), _set(node.rhs, engine))
    if node.flags.case_insensitive:
        raise NotExact(f"regex (?i) class: Unicode case folding in polars, not in {engine.name}")
    engine._flags(node.flags, "class")
    chars = _set(node.items, engine)
    return complement(chars) if node.negated else chars


def _set(items: ClassSet, engine: RegexEngine) -> CharSet:
    if isinstance(items, SetOperation):
        return _class_set(items, engine)
    return union(_class_set(item, engine) for item in items)
