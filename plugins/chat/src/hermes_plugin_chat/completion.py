"""``hermes completion bash|zsh|fish``: the script that completes hermes's commands and
options in that shell, made by click's own completion for the whole ``hermes`` command
(plugins' commands included)."""

from __future__ import annotations

import sys

import click

COMPLETE_VAR = "_HERMES_COMPLETE"
INSTALL = {
    "bash": 'add to ~/.bashrc:  eval "$(hermes completion bash)"',
    "zsh": 'add to ~/.zshrc:  eval "$(hermes completion zsh)"',
    "fish": "save it:  hermes completion fish > ~/.config/fish/completions/hermes.fish",
}


@click.command()
@click.argument("shell", type=click.Choice(sorted(INSTALL)))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL; how to install it goes to stderr."""
    from click.shell_completion import ShellComplete, get_completion_class

    found: type[ShellComplete] | None = get_completion_class(shell)
    assert found is not None  # click ships bash, zsh and fish
    root: click.Command = ctx.find_root().command
    maker: ShellComplete = found(root, {}, "hermes", COMPLETE_VAR)
    script = maker.source()
    click.echo(script)
    if sys.stdout.isatty():  # someone reading it, not eval: say how to install it
        click.echo(INSTALL[shell], err=True)
