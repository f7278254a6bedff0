"""What a plugin's child program inherits: what it needs to run, never a key."""

from __future__ import annotations

from hermes_commons.environment import safe_environment

HERMES = {
    "PATH": "/usr/bin",
    "HOME": "/home/ada",
    "LANG": "de_DE.UTF-8",
    "LC_TIME": "de_DE.UTF-8",
    "XDG_RUNTIME_DIR": "/run/user/1000",
    "TZ": "Europe/Berlin",
    "OPENAI_API_KEY": "sk-secret",
    "TELEGRAM_BOT_TOKEN": "123:abc",
    "AWS_SECRET_ACCESS_KEY": "x",
    "DISPLAY": ":0",
}


def test_keys_stay_behind_and_what_a_program_needs_goes_along():
    child = safe_environment(environ=HERMES)
    assert child == {
        "PATH": "/usr/bin",
        "HOME": "/home/ada",
        "LANG": "de_DE.UTF-8",
        "LC_TIME": "de_DE.UTF-8",
        "XDG_RUNTIME_DIR": "/run/user/1000",
        "TZ": "Europe/Berlin",
    }


def test_more_variables_go_along_by_name_only_where_set():
    child = safe_environment(("DISPLAY", "WAYLAND_DISPLAY"), environ=HERMES)
    assert child["DISPLAY"] == ":0" and "WAYLAND_DISPLAY" not in child
    assert "OPENAI_API_KEY" not in child
