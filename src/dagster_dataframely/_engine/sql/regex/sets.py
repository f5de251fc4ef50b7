"""Sets of Unicode code points, as sorted disjoint `(first, last)` intervals.

A regex class (`[a-z&&[^aeiou]]`, `[[:punct:]]`, `.`) is evaluated here to the exact code
points polars matches, so an engine can be given that set however it writes classes.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Sorted, disjoint, non-adjacent intervals of code points.
CharSet = list[tuple[int, int]]

#: Every Unicode scalar value: code points but the surrogates.
SCALARS: CharSet = [(0, 0xD7FF), (0xE000, 0x10FFFF)]


def interval(first: str, last: str) -> CharSet:
    return [(ord(first), ord(last))]


def union(sets: Iterable[CharSet]) -> CharSet:
    merged: CharSet = []
    for lo, hi in sorted(pair for chars in sets for pair in chars):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def intersection(a: CharSet, b: CharSet) -> CharSet:
    found: CharSet = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            found.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return union([found])


def complement(chars: CharSet) -> CharSet:
    """The scalar values not in `chars`, as a negated class in polars matches."""
    gaps: CharSet = []
    start = 0
    for lo, hi in chars:
        if lo > start:
            gaps.append((start, lo - 1))
        start = hi + 1
    if start <= 0x10FFFF:
        gaps.append((start, 0x10FFFF))
    return intersection(gaps, SCALARS)


def operate(operator: str, lhs: CharSet, rhs: CharSet) -> CharSet:
    """`lhs && rhs`, `lhs -- rhs` or `lhs ~~ rhs` (intersection, difference, symmetric)."""
    if operator == "&&":
        return intersection(lhs, rhs)
    if operator == "--":
        return intersection(lhs, complement(rhs))
    return union([intersection(lhs, complement(rhs)), intersection(rhs, complement(lhs))])


def _ascii(*ranges: str) -> CharSet:
    return union(interval(r[0], r[-1]) for r in ranges)


#: POSIX classes as the Rust `regex` crate defines them: ASCII only, whatever the flags.
ASCII_CLASSES: dict[str, CharSet] = {
    "alnum": _ascii("09", "AZ", "az"),
    "alpha": _ascii("AZ", "az"),
    "ascii": _ascii("\x00\x7f"),
    "blank": _ascii("\t", " "),
    "cntrl": _ascii("\x00\x1f", "\x7f"),
    "digit": _ascii("09"),
    "graph": _ascii("!~"),
    "lower": _ascii("az"),
    "print": _ascii(" ~"),
    "punct": _ascii("!/", ":@", "[`", "{~"),
    "space": _ascii("\t\r", " "),
    "upper": _ascii("AZ"),
    "word": _ascii("09", "AZ", "_", "az"),
    "xdigit": _ascii("09", "AF", "af"),
}
