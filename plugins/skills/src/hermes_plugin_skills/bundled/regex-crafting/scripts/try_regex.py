#!/usr/bin/env python3
"""Test a Python regular expression against strings that must and must not match.

usage: try_regex.py PATTERN MUST... [--not MUST_NOT...]
Exit 0 when every string behaves as expected, 1 otherwise.
"""

import re
import sys


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pattern, rest = argv[0], argv[1:]
    cut = rest.index("--not") if "--not" in rest else len(rest)
    must, must_not = rest[:cut], rest[cut + 1 :]
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        print(f"the pattern does not compile: {exc}", file=sys.stderr)
        return 2
    failures = 0
    for text, wanted in [(t, True) for t in must] + [(t, False) for t in must_not]:
        hit = compiled.fullmatch(text)
        ok = bool(hit) == wanted
        failures += not ok
        groups = f" groups={hit.groupdict() or hit.groups()}" if hit else ""
        print(f"{'ok ' if ok else 'BAD'} {'match   ' if hit else 'no match'} {text!r}{groups}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
