"""What the approval check costs per command: ``classify`` over every command of the
approval tables (plugins/approvals/tests/test_commands.py, and the rules by class of issue 62
in test_rule_classes.py: attacks and look-alikes), against a floor measured in the same
run: tree-sitter-bash parsing the same text, which every check must do first.

    uv run python tests/bench/approvals.py [--rounds 30]

Prints the median µs per command of both, their ratio, and the slowest commands. Target
(issue 40): at most 2x the 140 µs per command measured before it, so 280 µs; issue 62's
rules by class must keep it under 300 µs.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import tree_sitter_bash
from hermes_plugin_approvals.commands import classify
from hermes_plugin_approvals.shell import prepare
from tree_sitter import Language, Parser

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "plugins" / "approvals" / "tests" / "test_commands.py"
CLASSES = REPO / "plugins" / "approvals" / "tests" / "test_rule_classes.py"
TARGET_US = 280.0


def _table(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands() -> list[str]:
    table: Any = _table(TABLE)
    classes: Any = _table(CLASSES)
    cases = [*table.CASES, *table.PARSED_CASES, *classes.ATTACKS, *classes.REVIEWED]
    found = [command for command, _ in cases]
    return found + list(classes.LOOK_ALIKES)


def per_command(work: list[str], run: object, rounds: int) -> tuple[float, dict[str, float]]:
    assert callable(run)
    totals: list[float] = []
    each: dict[str, list[float]] = {command: [] for command in work}
    for _ in range(rounds):
        started = time.perf_counter()
        for command in work:
            one = time.perf_counter()
            run(command)
            each[command].append(time.perf_counter() - one)
        totals.append((time.perf_counter() - started) / len(work))
    return statistics.median(totals) * 1e6, {c: statistics.median(t) * 1e6 for c, t in each.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    work = commands()
    grammar = Parser(Language(tree_sitter_bash.language()))
    for command in work:  # warm: caches, the grammar loaded
        classify(command)
    floor, _ = per_command(work, lambda c: grammar.parse(prepare(c).encode()), args.rounds)
    cost, each = per_command(work, classify, args.rounds)
    print(f"{len(work)} commands of the approval table, {args.rounds} rounds")
    print(
        f"classify: {cost:,.0f} µs per command; floor (parse only) {floor:,.0f} µs; "
        f"ratio {cost / floor:.2f}x"
    )
    for command, micros in sorted(each.items(), key=lambda item: -item[1])[:5]:
        print(f"    {micros:7,.0f} µs  {command[:70]}")
    print(f"target: at most {TARGET_US:.0f} µs per command (2x the 140 µs before issue 40)")
    return 0 if cost <= TARGET_US else 1


if __name__ == "__main__":
    sys.exit(main())
