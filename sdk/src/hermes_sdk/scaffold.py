"""``hermes-sdk new-plugin``: write a working plugin package to start from.

    hermes-sdk new-plugin --kind tools word-count      # -> ./hermes-plugin-word-count/

The package has a pyproject with the entry point and manifest, one module of ``@hookimpl``
functions, a README, and tests that subclass the SDK's conformance suite for its kind; they
pass as generated, offline (``pytest`` in the new folder).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from hermes_sdk._version import __version__

__all__ = ["KINDS", "main", "new_plugin"]


@dataclass(frozen=True)
class _Kind:
    manifest_kind: str  # the hermes.provides prefix of what the template registers
    summary: str
    modules: tuple[str, ...] = ()  # more modules beside __init__.py (heavy imports go there)
    test_helpers: tuple[str, ...] = ()  # modules beside the tests (a fake of a service)
    commons: str | None = None  # hermes-commons, with its extras ("[http]"), if used
    dependencies: tuple[str, ...] = ()  # beside hermes-sdk


KINDS = {
    "provider": _Kind(
        "provider",
        "a model provider",
        modules=("client",),
        commons="[http]",  # the httpx plumbing model providers share
    ),
    "backend": _Kind("backend", "a terminal backend", modules=("backend",)),
    "platform": _Kind(
        "platform",
        "a chat platform for the gateway",
        modules=("adapter",),
        test_helpers=("fake_chat",),
        commons="",  # receiving files (hermes_commons.platform_files)
        dependencies=("httpx>=0.27,<1",),
    ),
    "memory": _Kind("memory", "a memory provider"),
    "tools": _Kind("tool", "tools the model can call"),
    "skills": _Kind("skill_source", "a source of SKILL.md skills"),
    "frontend": _Kind("service", "a front-end: a folder the agent answers"),
    "context": _Kind("context_engine", "a context engine that summarizes long sessions"),
}
# What a template registers under a name of its own rather than the plugin's: a tool is
# named for what it does, so two plugins' tools never both take the plugin's name.
_PROVIDED_NAME = {"tools": "count_words"}
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
# It lands inside Python and TOML strings, on lines that must stay within 100 characters.
_DESCRIPTION = re.compile(r'^[^"\\\x00-\x1f]{1,72}$')


class ScaffoldError(Exception):
    """The name or folder is unusable; the message says what to change."""


def _template(kind: str, file: str) -> Template:
    path = resources.files("hermes_sdk").joinpath("templates", kind, f"{file}.tmpl")
    text = path.read_text("utf-8")
    return Template(text)


def new_plugin(kind: str, name: str, parent: Path, description: str | None = None) -> Path:
    """Write plugin ``name`` of ``kind`` into ``parent/hermes-plugin-NAME``; return the folder."""
    if kind not in KINDS:
        raise ScaffoldError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}")
    if not _NAME.match(name) or name.endswith("-") or "--" in name:
        raise ScaffoldError(
            f"{name!r} is not a plugin name: use up to 41 lower-case letters, digits and single "
            "hyphens, starting with a letter (for example: word-count)"
        )
    if description is not None and not _DESCRIPTION.match(description):
        raise ScaffoldError(
            "the description must be one line of at most 72 characters, "
            'without quotes (") or backslashes'
        )
    snake = name.replace("-", "_")
    module = f"hermes_plugin_{snake}"
    dist = f"hermes-plugin-{name}"
    folder = parent / dist
    if folder.exists() and any(folder.iterdir()):
        raise ScaffoldError(
            f"{folder} already exists and is not empty; pick another name or folder"
        )
    spec = KINDS[kind]
    provided = _PROVIDED_NAME.get(kind, snake)
    major, minor = (int(part) for part in __version__.split(".")[:2])
    ceiling = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    requirements = [f"hermes-sdk>={major}.{minor},<{ceiling}"]
    if spec.commons is not None:
        requirements.append(f"hermes-commons{spec.commons}>={major}.{minor},<{ceiling}")
    requirements.extend(spec.dependencies)
    values = {
        "name": name,
        "snake": snake,
        "upper": snake.upper(),
        "module": module,
        "dist": dist,
        "kind": kind,
        "skill": f"{name}-release-notes",
        "description": description or f"A Hermes plugin providing {spec.summary}.",
        "dependencies": ", ".join(f'"{requirement}"' for requirement in requirements),
        # The test kit: the conformance suites and fixtures the generated tests use.
        "dev_dependencies": f'"pytest>=8", "hermes-testkit>={major}.{minor},<{ceiling}"',
        "provides": f'"{spec.manifest_kind}.{provided}" = "{module}"',
        "provides_list": f"- `{spec.manifest_kind}.{provided}`",
    }
    files = {
        "pyproject.toml": _template("common", "pyproject.toml"),
        "README.md": _template("common", "README.md"),
        f"src/{module}/__init__.py": _template(kind, "plugin.py"),
        f"tests/test_{snake}.py": _template(kind, "test_plugin.py"),
    }
    for extra in spec.modules:
        files[f"src/{module}/{extra}.py"] = _template(kind, f"{extra}.py")
    for helper in spec.test_helpers:
        files[f"tests/{helper}.py"] = _template(kind, f"{helper}.py")
    if kind == "skills":
        files[f"src/{module}/skills/{values['skill']}/SKILL.md"] = _template(kind, "SKILL.md")
    for relative, template in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hermes-sdk", description="Tools for plugin authors.")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("new-plugin", help="write a working plugin package to start from")
    create.add_argument("--kind", required=True, choices=list(KINDS), help="what it provides")
    create.add_argument("name", help="the plugin name, for example word-count")
    create.add_argument("--dir", default=".", help="where to create it (default: here)")
    create.add_argument("--description", help="one line for pyproject and README")
    options = parser.parse_args(argv)
    try:
        folder = new_plugin(options.kind, options.name, Path(options.dir), options.description)
    except ScaffoldError as exc:
        print(f"hermes-sdk: error: {exc}", file=sys.stderr)
        return 1
    print(f"created {folder}")
    print(f"next: cd {folder} && python -m pytest   (with the Python Hermes runs in)")
    # The one install recipe, as the README, the tutorial and the author guide give it.
    print("then: hermes plugins install . --enable --yes && hermes plugins list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
