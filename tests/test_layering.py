"""Plugins import hermes_sdk only, never hermes_kernel (ruff's banned-api rule says the same
for linted code; this also covers fixtures, examples and any string-built import)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLUGIN_TREES = [
    REPO / "plugins",
    REPO / "tests" / "fixtures" / "plugins",
    REPO / "docs" / "examples",
]


def kernel_imports(source: str) -> list[int]:
    """Line numbers of imports of hermes_kernel (static or through importlib/__import__)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called not in {"import_module", "__import__"}:
                continue
            names = [str(node.args[0].value)]
        else:
            continue
        if any(name == "hermes_kernel" or name.startswith("hermes_kernel.") for name in names):
            lines.append(node.lineno)
    return lines


def test_the_check_catches_every_form():
    source = (
        "import hermes_kernel\nfrom hermes_kernel.plugins import host\nimport hermes_sdk\n"
        "import importlib\nimportlib.import_module('hermes_kernel.cli')\n__import__('hermes_kernel')\n"
        "from hermes_kernelish import x\n"
    )
    assert kernel_imports(source) == [1, 2, 5, 6]


def test_no_plugin_imports_the_kernel():
    offenders = []
    for tree in PLUGIN_TREES:
        for path in sorted(tree.rglob("*.py")):
            for line in kernel_imports(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(REPO)}:{line}")
    assert offenders == [], "plugins must import hermes_sdk, not hermes_kernel"


def test_plugin_packages_do_not_depend_on_the_kernel():
    import tomllib

    for tree in PLUGIN_TREES:
        for pyproject in tree.rglob("pyproject.toml"):
            deps = tomllib.loads(pyproject.read_text())["project"].get("dependencies", [])
            assert not [d for d in deps if d.startswith("hermes-kernel")], pyproject


FRONT_ENDS = ("gateway", "chat")
"""The front-ends the kernel used to hold: written on the SDK's runtime contract alone."""


@pytest.mark.parametrize("name", FRONT_ENDS)
def test_the_front_end_plugins_import_only_the_sdk(name):
    import subprocess
    import sys

    folder = REPO / "plugins" / name
    sources = sorted((folder / "src").rglob("*.py"))
    assert sources, f"plugins/{name} has no source"
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sources
        for line in kernel_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"plugins/{name} must reach the kernel through hermes_sdk only"
    # Nor through another module: importing every module of the plugin loads no kernel code.
    package = next(p.name for p in (folder / "src").iterdir() if p.name.startswith("hermes_"))
    modules = sorted(
        ".".join(
            (package, *path.relative_to(folder / "src" / package).with_suffix("").parts)
        ).removesuffix(".__init__")
        for path in sources
    )
    probe = (
        "import importlib, sys\n"
        f"for module in {modules!r}:\n"
        "    importlib.import_module(module)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'hermes_kernel'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", f"importing plugins/{name} loads {done.stdout.strip()}"


ENGINES = (
    "tree_sitter",
    "tree_sitter_bash",
    "apsw",
    "sqlite3",
    "psycopg",
    "psycopg_pool",
    "hermes_plugin_",
)
"""What the kernel never imports: a rule set's grammar, a database engine's driver, or any
plugin. The list grows as engines leave the kernel (issue 61)."""


def engine_imports(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        for name in names:
            if any(
                name == e or name.startswith(e if e.endswith("_") else f"{e}.") for e in ENGINES
            ):
                found.append((node.lineno, name))
    return found


def test_the_check_catches_an_engine_import():
    source = (
        "import tree_sitter\nfrom hermes_plugin_approvals import commands\nimport treelib\n"
        "import apsw\nfrom psycopg.rows import dict_row\nimport sqlite3\n"
    )
    assert engine_imports(source) == [
        (1, "tree_sitter"),
        (2, "hermes_plugin_approvals"),
        (4, "apsw"),
        (5, "psycopg.rows"),
        (6, "sqlite3"),
    ]


def test_the_kernel_imports_no_engine_rule_set_or_plugin():
    kernel = REPO / "kernel" / "src" / "hermes_kernel"
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sorted(kernel.rglob("*.py"))
        for line, name in engine_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "the kernel holds mechanisms; engines and rules are plugins"
