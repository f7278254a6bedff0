"""Which calls change files inside the working folder (no git involved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_checkpoints.writes import change_of, command_writes

FOLDER = Path("/work/project")


@pytest.mark.parametrize(
    "command",
    [
        "echo x > f",
        "echo x >> notes.txt",
        "cat > src/app.py <<'EOF'\nprint(1)\nEOF",
        "printf 'a' | tee out.txt",
        "sed -i 's/a/b/' notes.txt",
        "perl -pi -e 's/a/b/' notes.txt",
        "rm -rf build",
        "mv a.txt b.txt",
        "cp /etc/hosts .",
        "git checkout -- notes.txt",
        "git reset --hard HEAD~1",
        "git -C sub apply fix.diff",
        "cd src && echo x > f",
        "bash -c 'echo x > f'",
        "ls && rm notes.txt",
        "find . -name '*.tmp' -delete",
        "black .",
        "curl -o page.html http://example.invalid/",
        "rm $TARGET",  # unknown: counts as inside
        "echo 'unclosed",  # unreadable: counts as writing
        "sudo -u root touch /work/project/x",
        "echo $(rm notes.txt)",
    ],
)
def test_commands_that_write_inside(command):
    assert command_writes(command, FOLDER, FOLDER)


@pytest.mark.parametrize(
    "command",
    [
        "ls",
        "ls -la > /dev/null 2>&1",
        "cat notes.txt | grep hello",
        "git status && git diff",
        "git log --oneline | head",
        "rm -rf /tmp/scratch",
        "echo x > /tmp/out.txt",
        "cd /tmp && echo x > f",
        "sed 's/a/b/' notes.txt",
        "black --check .",
        "python -c 'print(1)' 2>&1",
        "echo 'a > b'",
        "git -C /elsewhere checkout main",
        "curl -s http://example.invalid/",
    ],
)
def test_commands_that_do_not(command):
    assert not command_writes(command, FOLDER, FOLDER)


def test_file_tools_name_their_file_inside_the_folder_only():
    assert change_of("write_file", {"path": "src/app.py"}, FOLDER) == "src/app.py"
    assert change_of("patch", {"path": "/work/project/notes.txt"}, FOLDER) == "notes.txt"
    assert change_of("write_file", {"path": "/tmp/elsewhere.txt"}, FOLDER) is None
    assert change_of("write_file", {"path": "../other/x"}, FOLDER) is None
    assert change_of("read_file", {"path": "notes.txt"}, FOLDER) is None


def test_a_terminal_workdir_elsewhere_is_not_the_folder():
    assert change_of("terminal", {"command": "echo x > f"}, FOLDER) == "echo x > f"
    assert change_of("terminal", {"command": "echo x > f", "workdir": "/tmp"}, FOLDER) is None
    assert change_of("terminal", {"command": "ls"}, FOLDER) is None
    assert change_of("execute_code", {"code": "open('f', 'w')"}, FOLDER) == "(a script)"


def test_a_token_in_the_command_is_not_kept_in_the_description():
    command = "curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz123456' -o out.json x"
    described = change_of("terminal", {"command": command}, FOLDER)
    assert described is not None and described.startswith("curl -H")
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in described
