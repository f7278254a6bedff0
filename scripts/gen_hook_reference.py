"""Generate docs/reference/hooks.md from sdk/src/hermes_sdk/hookspecs.py.

Usage: python scripts/gen_hook_reference.py [--check]
With --check, exit 1 if the committed file is stale (tests/test_docs.py does the same).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "hooks.md"


def render() -> str:
    from hermes_sdk import hookspecs

    lines = [
        "# Hook reference",
        "",
        "<!-- Generated from sdk/src/hermes_sdk/hookspecs.py by scripts/gen_hook_reference.py;",
        "     do not edit by hand. -->",
        "",
        inspect.cleandoc(hookspecs.__doc__ or ""),
        "",
    ]
    groups = [
        ("Registration hooks", list(hookspecs.REGISTRATION_HOOKS)),
        ("Contribution hooks", list(hookspecs.CONTRIBUTION_HOOKS)),
        ("Lifecycle hooks", list(hookspecs.LIFECYCLE_HOOKS)),
        ("Gate hooks", list(hookspecs.GATE_HOOKS)),
        ("Turn hooks", list(hookspecs.TURN_HOOKS)),
    ]
    for title, names in groups:
        lines += [f"## {title}", ""]
        for name in names:
            function = getattr(hookspecs, name)
            signature = str(inspect.signature(function)).replace("'", "")  # unquote annotations
            lines += [
                f"### `{name}`",
                "",
                "```python",
                f"def {name}{signature}",
                "```",
                "",
                inspect.cleandoc(function.__doc__ or "").replace("Example::", "Example:"),
                "",
            ]
    text = "\n".join(lines)
    # Indented example blocks become fenced code so every renderer shows them as code.
    return _fence_examples(text).rstrip() + "\n"


def _fence_examples(text: str) -> str:
    out: list[str] = []
    in_block = False
    for line in text.split("\n"):
        if line == "Example:":
            out += ["Example:", "", "```python"]
            in_block = True
            continue
        if in_block:
            if not line.strip() and out[-1] == "```python":
                continue
            if line.startswith("    ") or not line.strip():
                out.append(line[4:] if line.startswith("    ") else line)
                continue
            while out and not out[-1].strip():
                out.pop()
            out += ["```", ""]
            in_block = False
        out.append(line)
    if in_block:
        while out and not out[-1].strip():
            out.pop()
        out.append("```")
    return "\n".join(out)


def main() -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    from _generated import write_or_check

    return write_or_check(REFERENCE, render(), "python scripts/gen_hook_reference.py")


if __name__ == "__main__":
    sys.exit(main())
