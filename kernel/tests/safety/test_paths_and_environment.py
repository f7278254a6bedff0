from __future__ import annotations

from pathlib import Path

import pytest

from hermes_kernel.safety.environment import command_environment, secret_environment_values
from hermes_kernel.safety.paths import write_refusal


@pytest.mark.parametrize(
    "path",
    [
        "~/.ssh/authorized_keys",
        "~/.ssh/config",
        "~/.aws/credentials",
        "~/.gnupg/pubring.kbx",
        "~/.bashrc",
        "/srv/app/.env",
        "/srv/app/.env.production",
        "~/.netrc",
    ],
)
def test_protected_paths_are_refused(path: str, tmp_path: Path) -> None:
    assert write_refusal(path, local=True, hermes_home=str(tmp_path)) is not None
    assert write_refusal(path, local=False, hermes_home=str(tmp_path)) is not None


@pytest.mark.parametrize("path", ["/srv/app/main.py", "~/notes.md", "/tmp/x/.env.example"])
def test_ordinary_paths_are_allowed(path: str, tmp_path: Path) -> None:
    assert write_refusal(path, local=True, hermes_home=str(tmp_path)) is None


def test_hermes_own_secrets_and_symlinks_into_protected_places(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    assert write_refusal(str(home / ".env"), local=True, hermes_home=str(home))
    assert write_refusal(str(home / "state.db"), local=True, hermes_home=str(home))
    assert write_refusal(str(tmp_path / "notes.md"), local=True, hermes_home=str(home)) is None
    # Anything else in the home is Hermes's own state too (SOUL, memories, skills, config).
    for planted in ("SOUL.md", "config.yaml", "memories/MEMORY.md", "skills/x/SKILL.md"):
        assert "HERMES_HOME" in (
            write_refusal(str(home / planted), local=True, hermes_home=str(home)) or ""
        )
    inside = tmp_path / "project"
    inside.mkdir()
    (inside / "cfg").symlink_to(home / "config.yaml")
    assert write_refusal(str(inside / "cfg"), local=True, hermes_home=str(home))
    link = tmp_path / "innocent"
    link.symlink_to(Path("~/.ssh").expanduser())
    assert "ssh" in (write_refusal(str(link / "keys"), local=True, hermes_home=str(home)) or "")


def test_safe_root_confines_writes(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    home = str(tmp_path / "h")
    assert (
        write_refusal(str(root / "a/b.py"), local=True, hermes_home=home, safe_root=str(root))
        is None
    )
    refusal = write_refusal(
        str(tmp_path / "other.py"), local=True, hermes_home=home, safe_root=str(root)
    )
    assert refusal and "HERMES_WRITE_SAFE_ROOT" in refusal
    escape = str(root / ".." / "other.py")
    assert write_refusal(escape, local=False, hermes_home=home, safe_root=str(root))


def test_commands_get_an_allow_list_and_never_hermes_keys() -> None:
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "OPENAI_API_KEY": "sk-live-0123456789abcdefghij",
        "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "PROJECT_FLAG": "1",
    }
    env, warnings = command_environment(
        environ, passthrough=["PROJECT_FLAG", "OPENAI_API_KEY"], reserved={"OPENAI_API_KEY"}
    )
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "PROJECT_FLAG": "1",
        "HERMES_INSIDE_AGENT": "1",  # a nested hermes knows an agent started it
    }
    assert warnings and "OPENAI_API_KEY" in warnings[0]
    assert set(secret_environment_values(environ)) == {
        environ["OPENAI_API_KEY"],
        environ["GITHUB_TOKEN"],
    }


def test_variables_named_key_or_keys_are_secrets_each_key_of_a_list_too() -> None:
    environ = {
        "API_SERVER_KEY": "server-key-123456",
        "API_SERVER_KEYS": "first-key-abcdef, second-key-ghijkl",
        "SORT_ORDER": "name",
    }
    assert set(secret_environment_values(environ)) == {
        "server-key-123456",
        "first-key-abcdef",
        "second-key-ghijkl",
    }


def test_a_profile_keeps_out_of_its_base_home_and_the_base_out_of_its_profiles(
    tmp_path: Path,
) -> None:
    from hermes_kernel.safety.paths import read_refusal

    base = tmp_path / "hermes"
    profile = base / "profiles" / "work"
    profile.mkdir(parents=True)
    assert write_refusal(str(base / "config.yaml"), local=True, hermes_home=str(profile))
    assert read_refusal(str(base / ".env"), local=True, hermes_home=str(profile))
    assert read_refusal(str(base / "auth.json"), local=True, hermes_home=str(profile))
    assert read_refusal(str(profile / ".env"), local=True, hermes_home=str(base))
    assert read_refusal("/proc/self/environ", local=True, hermes_home=str(base))
    assert read_refusal(str(base / "notes.md"), local=True, hermes_home=str(base)) is None
    assert read_refusal(str(tmp_path / ".env"), local=True, hermes_home=str(base)) is None
