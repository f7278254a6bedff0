"""The docs stay true: the hook reference is generated and current, every hook is in it, and
the author guide's example plugin is the one the tests install and run."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from hermes_sdk import hookspecs

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "reference" / "hooks.md"
EXAMPLE = REPO / "docs" / "examples" / "hermes-plugin-hello"


def declared_hooks() -> set[str]:
    return {
        name
        for name, value in vars(hookspecs).items()
        if name.startswith("hermes_") and hasattr(value, "hermes_spec")
    }


def test_every_declared_hook_is_grouped_and_documented():
    hooks = declared_hooks()
    assert hooks == (
        set(hookspecs.REGISTRATION_HOOKS)
        | set(hookspecs.CONTRIBUTION_HOOKS)
        | set(hookspecs.LIFECYCLE_HOOKS)
        | set(hookspecs.GATE_HOOKS)
        | set(hookspecs.TURN_HOOKS)
    )
    reference = REFERENCE.read_text(encoding="utf-8")
    missing = [name for name in sorted(hooks) if f"### `{name}`" not in reference]
    assert missing == [], (
        f"undocumented hooks; run: python scripts/gen_hook_reference.py ({missing})"
    )
    for name in hooks:
        doc = getattr(hookspecs, name).__doc__ or ""
        assert "Example::" in doc and "Called" in doc, (
            f"{name}'s docstring must say when and show how"
        )


def test_hook_reference_is_current():
    generator = runpy.run_path(str(REPO / "scripts" / "gen_hook_reference.py"))
    assert REFERENCE.read_text(encoding="utf-8") == generator["render"](), (
        "docs/reference/hooks.md is stale; run: python scripts/gen_hook_reference.py"
    )


def test_author_guide_shows_the_tested_example_plugin_verbatim():
    guide = (REPO / "docs" / "authors" / "guide.md").read_text(encoding="utf-8")
    for relative in [
        "pyproject.toml",
        "src/hermes_plugin_hello/__init__.py",
        "src/hermes_plugin_hello/hermes-help.toml",
        "tests/test_hello.py",
    ]:
        text = (EXAMPLE / relative).read_text(encoding="utf-8").strip()
        assert text in guide, f"docs/authors/guide.md must include {relative} verbatim"


def test_plugin_controls_page_covers_every_control():
    page = (REPO / "docs" / "user" / "plugins.md").read_text(encoding="utf-8")
    for control in [
        "HERMES_LOAD_PLUGINS",
        "HERMES_DISABLE_PLUGINS",
        "--safe-mode",
        "HERMES_TRACE_PLUGINS",
        "plugins list --json",
        "plugins.enabled",
        "plugins.disabled",
        "--strict-plugins",
        "load_timeout_seconds",
    ]:
        assert control in page, control


def test_cli_reference_is_current():
    generator = runpy.run_path(str(REPO / "scripts" / "gen_cli_reference.py"))
    assert (REPO / "docs" / "reference" / "cli.md").read_text(encoding="utf-8") == generator[
        "render"
    ](), "docs/reference/cli.md is stale; run: python scripts/gen_cli_reference.py"


def test_tutorial_shows_the_tested_dice_plugin_verbatim():
    tutorial = (REPO / "docs" / "authors" / "tutorial.md").read_text(encoding="utf-8")
    dice = REPO / "docs" / "examples" / "hermes-plugin-dice"
    for relative in ["src/hermes_plugin_dice/__init__.py", "tests/test_dice.py"]:
        text = (dice / relative).read_text(encoding="utf-8").strip()
        assert text in tutorial, f"docs/authors/tutorial.md must include {relative} verbatim"
    manifest = (dice / "pyproject.toml").read_text(encoding="utf-8")
    assert '"tool.roll_dice" = "hermes_plugin_dice"' in manifest
    assert '"tool.roll_dice" = "hermes_plugin_dice"' in tutorial


def test_the_tutorial_done_as_written_passes_the_scaffolds_lint_and_tests(tmp_path):
    """Steps 1 to 4 of the tutorial, followed literally: the generated package, the code
    blocks pasted over its files, the manifest line changed. The scaffold's own ruff settings
    must accept the result, and its tests must pass."""
    import re
    import subprocess
    import sys

    from hermes_sdk.scaffold import new_plugin

    tutorial = (REPO / "docs" / "authors" / "tutorial.md").read_text(encoding="utf-8")
    module, tests = re.findall(r"```python\n(.*?)```", tutorial, re.S)[:2]
    command = re.search(
        r"hermes-sdk new-plugin --kind tools dice --description \"([^\"]+)\"", tutorial
    )
    assert command, "the tutorial's step 1 scaffolds the dice plugin"
    folder = new_plugin("tools", "dice", tmp_path, description=command.group(1))
    (folder / "src" / "hermes_plugin_dice" / "__init__.py").write_text(module, encoding="utf-8")
    (folder / "tests" / "test_dice.py").write_text(tests, encoding="utf-8")
    pyproject = folder / "pyproject.toml"
    manifest = '"tool.roll_dice" = "hermes_plugin_dice"'
    assert manifest in tutorial
    generated = pyproject.read_text(encoding="utf-8")
    assert generated.count('"tool.count_words" = "hermes_plugin_dice"') == 1
    pyproject.write_text(generated.replace('"tool.count_words" = "hermes_plugin_dice"', manifest))
    for args in (["check", "--quiet", "."], ["format", "--check", "--quiet", "."]):
        linted = subprocess.run(
            [sys.executable, "-m", "ruff", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        assert linted.returncode == 0, f"ruff {args[0]} on the tutorial's code:\n{linted.stdout}"
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_author_guide_shows_the_tested_example_front_end_verbatim():
    guide = (REPO / "docs" / "authors" / "guide.md").read_text(encoding="utf-8")
    inbox = REPO / "docs" / "examples" / "hermes-plugin-inbox"
    for relative in ["src/hermes_plugin_inbox/__init__.py", "tests/test_inbox.py"]:
        text = (inbox / relative).read_text(encoding="utf-8").strip()
        assert text in guide, f"docs/authors/guide.md must include {relative} verbatim"
    manifest = (inbox / "pyproject.toml").read_text(encoding="utf-8")
    assert '"service.inbox" = "hermes_plugin_inbox"' in manifest


def test_the_shared_pieces_example_in_the_author_guide_runs(tmp_path):
    """The guide's example of the SDK's shared pieces, run as written."""
    import re

    guide = (REPO / "docs" / "authors" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## 13. Shared pieces", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)[:1]
    example: dict[str, Any] = {}
    exec(compile(code, "guide.md#13", "exec"), example)  # the doc's own code, as written
    home = tmp_path
    (home / ".env").write_text('BOOKMARKS_TOKEN="tok-4242-secret"\n', encoding="utf-8")
    assert example["add_bookmark"](home, "https://a.example") == ["https://a.example"]
    assert example["add_bookmark"](home, "https://b.example") == [
        "https://a.example",
        "https://b.example",
    ]
    shown = example["sync_failed"](home, "HTTP 401 for tok-4242-secret")
    assert shown == "sync failed: HTTP 401 for <redacted>"
    proposal = example["propose_bookmark"](home, "https://c.example", "cli")
    assert (home / "bookmarks" / "pending" / f"{proposal}.json").exists()


def test_the_author_guides_pending_writes_example_runs(tmp_path):
    """The guide's queue of pending bookmarks, run as written on top of §13's example."""
    import re

    import pytest

    from hermes_commons.proposals import UnknownProposal
    from hermes_sdk.pending_writes import PendingContext

    guide = (REPO / "docs" / "authors" / "guide.md").read_text(encoding="utf-8")
    shared, queues = guide.split("## 13. Shared pieces", 1)[1].split(
        "### Offering pending writes to every front-end", 1
    )
    namespace: dict[str, Any] = {}
    for code in (re.findall(r"```python\n(.*?)```", part, re.S)[0] for part in (shared, queues)):
        exec(compile(code, "guide.md#13", "exec"), namespace)  # the doc's own code, as written
    (spec,) = namespace["hermes_pending_writes"]()
    assert spec.name == "bookmarks"
    queue = spec.factory(PendingContext(home=str(tmp_path)))
    namespace["add_bookmark"](tmp_path, "https://a.example")
    first = namespace["propose_bookmark"](tmp_path, "https://b.example", "cli")
    second = namespace["propose_bookmark"](tmp_path, "https://c.example", "cli")
    writes = queue.pending()
    assert {w.id for w in writes} == {first, second}
    (write,) = [w for w in writes if w.id == first]
    assert write.title == "bookmark https://b.example"
    assert '+ "https://b.example"\n' in write.diff
    assert queue.approve(first) == "bookmarked https://b.example"
    assert queue.reject(second) == f"dropped {second}"
    assert queue.pending() == []
    with pytest.raises(UnknownProposal):
        queue.approve(second)
    marks = (tmp_path / "bookmarks" / "bookmarks.json").read_text(encoding="utf-8")
    assert "https://b.example" in marks and "https://c.example" not in marks


def test_the_author_guides_plugin_storage_example_runs(tmp_path, capsys):
    guide = (REPO / "docs" / "authors" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("### Keeping state: plugin storage", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/authors/guide.md", "exec"), {"home": str(tmp_path)})
    assert capsys.readouterr().out.strip() == "[('hello',)]"
