"""Read a YAML mapping and remember the line of every key, so errors can point at it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_kernel.config.errors import ConfigError

if TYPE_CHECKING:
    import yaml

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data, and the 1-based line of each key path."""

    path: Path
    data: dict[str, Any]
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "data": self.data,
            "lines": [[list(path), line] for path, line in self.lines.items()],
        }

    @classmethod
    def from_json(cls, path: Path, stored: dict[str, Any]) -> YamlDocument:
        lines = {tuple(key_path): line for key_path, line in stored["lines"]}
        return cls(path, stored["data"], lines)

    def line_of(self, key_path: KeyPath) -> int:
        """The line of the deepest known prefix of ``key_path``; 0 if none is known."""
        for end in range(len(key_path), 0, -1):
            line = self.lines.get(key_path[:end])
            if line is not None:
                return line
        return 0

    def where(self, key_path: KeyPath) -> str:
        """``file:line`` for the deepest known prefix of ``key_path`` (file alone if none)."""
        line = self.line_of(key_path)
        return f"{self.path}:{line}" if line else str(self.path)


def _index_lines(
    node: yaml.Node, prefix: KeyPath, lines: dict[KeyPath, int], repeats: list[str]
) -> None:
    """Record the line of every key path; note keys that repeat within one mapping (PyYAML
    would silently keep the last, so half of what the user wrote would be ignored)."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            path = (*prefix, key)
            line = key_node.start_mark.line + 1
            if path in lines and key != "<<":
                dotted = ".".join(str(part) for part in path)
                repeats.append(f"{line}: key {dotted!r} repeats line {lines[path]}; merge the two")
            lines[path] = line
            _index_lines(value_node, path, lines, repeats)
    elif isinstance(node, yaml.SequenceNode):
        for position, item in enumerate(node.value):
            path = (*prefix, position)
            lines[path] = item.start_mark.line + 1
            _index_lines(item, path, lines, repeats)


def parse_yaml_mapping(path: Path, text: str) -> YamlDocument:
    """Parse ``text`` (the content of ``path``) as a YAML mapping; empty text is ``{}``.

    Raises ConfigError with one line naming the file, line and column of a syntax error,
    or saying that the top level must be a mapping.
    """
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(
            [f"{where}: YAML syntax error: {problem}; fix the line (indentation, quotes or ':')"]
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: YAML syntax error: {exc}"]) from None
    finally:
        loader.dispose()
    if data is None or node is None:
        return YamlDocument(path, {})
    if not isinstance(data, dict):
        raise ConfigError(
            [
                f"{path}:1: the top level must be a mapping of keys (like 'plugins:'), "
                f"got a {type(data).__name__}"
            ]
        )
    lines: dict[KeyPath, int] = {}
    repeats: list[str] = []
    _index_lines(node, (), lines, repeats)
    if repeats:
        raise ConfigError([f"{path}:{repeat}" for repeat in repeats])
    return YamlDocument(path, data, lines)
