"""The rungs this plugin walks itself: the ones driven by the command line and config.yaml.
Other plugins add the rest (API keys in the environment, the embedded model) through
``hermes_provider_rungs``."""

from __future__ import annotations

from hermes_plugin_providers.settings import ModelSettings
from hermes_sdk import RungSpec
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungResult

LOCAL_ENDPOINT = "local-endpoint"


def keys_for(
    endpoint: Endpoint, context: LadderContext, settings: ModelSettings
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(variable names, keys) for ``endpoint``: its credential pool when it has one, else
    its own API key variable. Only variables that are set are returned."""
    pool = settings.pools.get(endpoint.name)
    names = pool or (
        (endpoint.api_key_env, *endpoint.other_key_envs) if endpoint.api_key_env else ()
    )
    found = [(name, context.secret(name)) for name in names]
    present = [(name, key) for name, key in found if key]
    if not pool:
        present = present[:1]  # the first of its names that is set: one key, not a pool
    return tuple(n for n, _ in present), tuple(k for _, k in present if k)


def _known(context: LadderContext) -> str:
    return ", ".join(sorted(context.endpoints)) or "none"


def command_line(context: LadderContext) -> RungResult:
    """``--provider`` / ``--model``: checked here, and the choice made strict; the rung that
    knows the named provider (below) supplies it, so keys and pools work the same way."""
    if not context.explicit:
        return RungResult.skip("no --provider or --model")
    if context.provider is None:
        return RungResult.skip(f"--model {context.model}; provider left to the rungs below")
    if context.provider not in context.endpoints:
        return RungResult.fail(
            f"--provider {context.provider}",
            f"unknown provider {context.provider!r}; known: {_known(context)}",
        )
    return RungResult.skip(
        f"--provider {context.provider}" + (f" --model {context.model}" if context.model else ""),
        "strict: the rung for this provider decides, with no fallback",
    )


def custom_provider(context: LadderContext) -> RungResult:
    """``model.provider`` naming an entry of ``providers:``."""
    settings = ModelSettings.from_config(context.config)
    name = context.provider
    if name is None:
        return RungResult.skip("model.provider is auto")
    if name not in context.endpoints:
        return RungResult.fail(
            f"provider {name!r}", f"unknown provider {name!r}; known: {_known(context)}"
        )
    endpoint = settings.custom.get(name)
    if endpoint is None:
        custom = ", ".join(sorted(settings.custom)) or "none configured"
        return RungResult.skip(f"{name!r} is not a custom provider ({custom})")
    names, keys = keys_for(endpoint, context, settings)
    wanted = settings.pools.get(name) or ((endpoint.api_key_env,) if endpoint.api_key_env else ())
    if wanted and not keys:
        return RungResult.fail(
            f"providers.{name}",
            f"providers.{name} needs {' or '.join(wanted)}: add it to {context.home / '.env'}",
        )
    model = context.model or endpoint.default_model
    if not model:
        return RungResult.fail(
            f"providers.{name}", f"no model: set providers.{name}.models or model.default"
        )
    choice = LadderChoice(
        endpoint, model, keys, source=f"providers.{name} in config", key_names=names
    )
    where = endpoint.base_url or f"transport {endpoint.provider or 'default'}"
    return RungResult.match(choice, f"providers.{name} ({where})")


def local_endpoint(context: LadderContext) -> RungResult:
    """``model.base_url``: an unnamed model server of the user's own (a local one, typically)."""
    settings = ModelSettings.from_config(context.config)
    if not settings.base_url:
        return RungResult.skip("model.base_url not set")
    if not context.wants(LOCAL_ENDPOINT):
        return RungResult.skip(f"model.base_url set, but provider {context.provider!r} asked for")
    endpoint = Endpoint(
        name=LOCAL_ENDPOINT,
        provider=settings.transport,
        base_url=settings.base_url,
        api_key_env=settings.api_key_env,
        default_model=settings.model or "default",
    )
    names, keys = keys_for(endpoint, context, settings)
    if settings.api_key_env and not keys:
        return RungResult.fail(
            f"model.base_url {settings.base_url}",
            f"model.api_key_env names {settings.api_key_env}, which is not set",
        )
    model = context.model or endpoint.default_model
    choice = LadderChoice(endpoint, model, keys, source="model.base_url in config", key_names=names)
    return RungResult.match(choice, f"model.base_url {settings.base_url}")


def credential_pool(context: LadderContext) -> RungResult:
    """``credential_pools:``: several keys for one endpoint, rotated on rate limits."""
    settings = ModelSettings.from_config(context.config)
    if not settings.pools:
        return RungResult.skip("no credential_pools")
    names = [context.provider] if context.provider else list(settings.pools)
    seen: list[str] = []
    for name in names:
        variables = settings.pools.get(name)
        if not variables:
            continue
        endpoint = context.endpoints.get(name)
        if endpoint is None:
            return RungResult.fail(
                f"credential_pools.{name}",
                f"credential_pools.{name}: unknown provider; known: {_known(context)}",
            )
        found, keys = keys_for(endpoint, context, settings)
        seen.append(f"{name}: {len(keys)} of {len(variables)} keys set")
        if keys:
            model = context.model or endpoint.default_model
            choice = LadderChoice(
                endpoint,
                model,
                keys,
                source=f"credential_pools.{name} ({len(keys)} keys)",
                key_names=found,
            )
            return RungResult.match(choice, "; ".join(seen))
        if context.provider == name:
            return RungResult.fail(
                "; ".join(seen),
                f"credential_pools.{name}: none of {', '.join(variables)} is set",
            )
    return RungResult.skip("; ".join(seen) or f"no pool for {context.provider!r}")


CONFIG_RUNGS = (
    RungSpec(
        name="command-line",
        description="--provider / --model on the command line (strict)",
        position=100,
        resolve=command_line,
    ),
    RungSpec(
        name="custom-provider",
        description="model.provider naming an entry of providers:",
        position=200,
        resolve=custom_provider,
    ),
    RungSpec(
        name="local-endpoint",
        description="model.base_url: a model server of your own",
        position=300,
        resolve=local_endpoint,
    ),
    RungSpec(
        name="credential-pool",
        description="credential_pools: several keys for one provider",
        position=400,
        resolve=credential_pool,
    ),
)
