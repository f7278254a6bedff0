"""Editing config.yaml keeps what the user wrote: comments, indentation, long lines."""

from __future__ import annotations

import os

import pytest

from hermes_kernel.config.edit import set_plugin_enabled
from hermes_kernel.config.errors import ConfigError


def edited(tmp_path, text: str, name: str, enabled: bool) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    set_plugin_enabled(path, name, enabled)
    return path.read_text()


def test_block_lists_with_four_space_indent_keep_their_layout(tmp_path):
    text = "plugins:\n    disabled:\n      - a  # broken since May\n    strict: false\n"
    assert edited(tmp_path, text, "b", False) == (
        "plugins:\n    disabled:\n      - a  # broken since May\n      - b\n    strict: false\n"
    )


def test_long_lines_are_not_rewrapped(tmp_path):
    long_value = "x " * 80
    text = f"note: {long_value.strip()}\nplugins:\n  disabled: [a]\n"
    assert f"note: {long_value.strip()}\n" in edited(tmp_path, text, "b", False)


def test_an_empty_list_with_a_comment_is_reused(tmp_path):
    text = "plugins:\n  disabled: []  # nothing yet\n"
    result = edited(tmp_path, text, "a", False)
    assert result.startswith("plugins:\n  disabled: [a] ") and result.endswith(" # nothing yet\n")


def test_a_file_of_only_comments_keeps_them(tmp_path):
    text = "# my Hermes settings\n# more to come\n"
    result = edited(tmp_path, text, "a", False)
    assert result.startswith("# my Hermes settings\n# more to come\n")
    assert result.endswith("plugins:\n  disabled: [a]\n")


def test_enable_removes_from_disabled_and_adds_to_an_opt_in_list(tmp_path):
    text = "plugins:\n  enabled: [x]\n  disabled: [a, b]\n"
    assert edited(tmp_path, text, "a", True) == "plugins:\n  enabled: [x, a]\n  disabled: [b]\n"


def test_a_symlinked_config_stays_a_symlink_and_keeps_its_mode(tmp_path):
    real = tmp_path / "dotfiles" / "hermes.yaml"
    real.parent.mkdir()
    real.write_text("plugins: {}\n")
    os.chmod(real, 0o600)
    link = tmp_path / "config.yaml"
    link.symlink_to(real)
    set_plugin_enabled(link, "a", False)
    assert link.is_symlink() and "disabled:" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o600


def test_unparseable_file_is_one_line_error(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("plugins:\n  disabled: [a\n")
    with pytest.raises(ConfigError) as raised:
        set_plugin_enabled(path, "a", False)
    [problem] = raised.value.problems
    assert problem.startswith(f"{path}:") and "cannot edit" in problem and "\n" not in problem


def test_the_quotes_of_lines_not_changed_are_kept(tmp_path):
    """A change to one key leaves every other line as the user wrote it, quotes included
    (the indentation guesser's loader dropped them: ['127.0.0.1'] came back bare)."""
    text = (
        "skills_hub:\n  allow_private_hosts: ['127.0.0.1']\n  taps: [\"acme/skills\"]\n"
        "name: 'quoted'\nplugins:\n  disabled: []\n"
    )
    result = edited(tmp_path, text, "a", False)
    assert "  allow_private_hosts: ['127.0.0.1']\n" in result
    assert '  taps: ["acme/skills"]\n' in result
    assert "name: 'quoted'\n" in result
    assert "disabled: [a]" in result
