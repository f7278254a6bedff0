"""``provider-moa``: a mixture of agents as a model provider (``transport: moa``), and
``/moa`` to send one message through it. Importing this is cheap: the work is in
:mod:`hermes_plugin_provider_moa.mixture`, imported when a mixture is first built."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_sdk import ProviderSpec, SlashCommandSpec, hookimpl


async def _moa(args: str, context: Any) -> Any:
    from hermes_plugin_provider_moa.command import one_turn

    return one_turn(args, context)


@hookimpl
def hermes_providers() -> Iterator[ProviderSpec]:
    yield ProviderSpec(
        name="moa",
        description="Mixture of agents: reference models advise in parallel, an aggregator answers",
        factory="hermes_plugin_provider_moa.mixture:MixtureProvider",
        virtual=True,
    )


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="moa",
        description="Send one message through a mixture of agents, then back to this model",
        handler=_moa,
        usage="/moa [@NAME] TEXT",
        on_platforms=True,
        during_turn=False,
    )
