"""A one-shot imports only what it uses: aiohttp's pool is the gateway's, httpx's own
command line is never loaded inside hermes (it pulls in rich's widgets and pygments), and
pydantic only when a config must be validated (not on a start whose config is cached, even
though a loaded provider declares a config section), and nothing of the media layer's
libraries for a turn without files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hermes_testkit import Reply


def imported_modules(stderr: str) -> set[str]:
    return {
        line.split("|")[-1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_one_shot_does_not_import_aiohttp_or_httpx_command_line(tmp_path: Path, openai_server):
    openai_server.queue(Reply.say("Hello!"), Reply.say("Hello!"))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    hermes = Path(sys.executable).parent / "hermes"
    for _ in range(2):  # the second start reads the config from its cache, as most do
        done = subprocess.run(
            [sys.executable, "-X", "importtime", str(hermes), "chat", "-q", "hi"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "Hello!"
    modules = imported_modules(done.stderr)
    assert "httpx" in modules and "hermes_plugin_provider_openai.client" in modules
    assert not {m for m in modules if m.split(".")[0] == "aiohttp"}
    assert "httpx._main" not in modules and "pygments" not in modules
    assert "pydantic" not in modules
    # Media costs a text-only turn nothing: no image, document or type-sniffing library, and
    # no transcriber plugin.
    heavy = {"PIL", "pypdf", "docx", "filetype", "hermes_plugin_voice"}
    assert not {m for m in modules if m.split(".")[0] in heavy}
    # Nothing of the full-screen interface, the @-references or the goal and background
    # machinery's commands loads for a one-shot that uses none of them (issue 74).
    later = {"textual", "hermes_plugin_tui", "trafilatura"}
    assert not {m for m in modules if m.split(".")[0] in later}
    assert not {"hermes_commons.references", "hermes_plugin_chat.attach"} & modules
    assert not {"hermes_kernel.runtime.turn_commands", "hermes_plugin_chat.worktree"} & modules
    goals = {"hermes_kernel.runtime.goals", "hermes_kernel.runtime.follow_ups"}
    assert not {*goals, "hermes_kernel.runtime.background", "hermes_kernel.runtime.branching"} & (
        modules
    )
