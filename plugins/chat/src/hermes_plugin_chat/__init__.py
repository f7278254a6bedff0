"""``chat``: the terminal chat, ``hermes chat`` (interactive, or once with ``-q``).

It drives the agent through the SDK's runtime contract, as any front-end can. Importing this
is cheap: click, prompt_toolkit and rich load when the command runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, hookimpl


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="chat",
        description="Chat with the agent in this terminal, or ask once with -q.",
        factory="hermes_plugin_chat.command:chat",
        default=True,
        ask_parameter="query",
        continue_parameter="continue_last",
        resume_parameter="resume",
        model_parameter="model",
        toolsets_parameter="toolsets",
        preload_parameter="skills",
    )
    yield CommandSpec(
        name="completion",
        description="Print the shell completion script for hermes (bash, zsh or fish).",
        factory="hermes_plugin_chat.completion:completion",
    )
