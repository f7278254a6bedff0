"""Configuration errors: each problem is one line naming file, line and key, and the fix."""

from __future__ import annotations


class ConfigError(Exception):
    """One or more problems in a configuration file; ``problems`` holds one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
