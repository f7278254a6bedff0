"""``hermes-sdk new-plugin`` writes packages whose own tests pass as generated, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_sdk.scaffold import KINDS, ScaffoldError, main, new_plugin


def run_tests(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def lint(folder: Path) -> str:
    """ruff's complaints about the generated code, with the generated pyproject's settings."""
    problems = ""
    for command in (["check", "--quiet", "."], ["format", "--check", "--quiet", "."]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        problems += done.stdout + done.stderr
    return problems


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_generated_with_passing_conformance_tests(tmp_path, kind):
    folder = new_plugin(kind, f"demo-{kind}", tmp_path)
    assert folder == tmp_path / f"hermes-plugin-demo-{kind}"
    module = f"hermes_plugin_demo_{kind}"
    assert (folder / "src" / module / "__init__.py").exists()
    assert f'demo-{kind} = "{module}"' in (folder / "pyproject.toml").read_text()
    done = run_tests(folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "skipped" not in done.stdout
    assert lint(folder) == ""


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_longest_name_and_description_still_give_lint_clean_code(tmp_path, kind):
    name = f"{kind}-{'x' * 40}"[:41]
    folder = new_plugin(kind, name, tmp_path, description="d" * 72)
    assert lint(folder) == ""


def test_the_conformance_suite_fails_when_the_manifest_drifts(tmp_path):
    folder = new_plugin("tools", "drift", tmp_path)
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"tool.count_words"', '"tool.renamed"'))
    done = run_tests(folder)
    assert done.returncode == 1
    assert "missing ['tool.count_words'], extra ['tool.renamed']" in done.stdout


def test_bad_names_and_occupied_folders_are_refused_with_what_to_do(tmp_path, capsys):
    with pytest.raises(
        ScaffoldError, match="use up to 41 lower-case letters, digits and single hyphens"
    ):
        new_plugin("tools", "My_Tools", tmp_path)
    new_plugin("skills", "taken", tmp_path)
    assert main(["new-plugin", "--kind", "skills", "taken", "--dir", str(tmp_path)]) == 1
    assert "already exists and is not empty" in capsys.readouterr().err
    with pytest.raises(ScaffoldError, match="one line of at most 72 characters"):
        new_plugin("tools", "quoted", tmp_path, description='say "hi"')
    with pytest.raises(SystemExit):
        main(["new-plugin", "--kind", "widgets", "x"])
