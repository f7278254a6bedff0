"""The provider ladder: walk the rungs in position order until one matches or fails, and
keep what each saw so ``hermes model --explain`` can say why."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_plugin_providers.rungs import CONFIG_RUNGS, LOCAL_ENDPOINT
from hermes_plugin_providers.settings import ModelSettings
from hermes_sdk import RungSpec
from hermes_sdk.ladder import Endpoint, LadderChoice, LadderContext, RungOutcome, RungResult
from hermes_sdk.routing import NoModel

log = logging.getLogger("hermes.providers")

OWN = "providers"
"""The plugin name shown for the rungs this plugin walks itself (config and command line)."""


@dataclass(frozen=True)
class Rung:
    spec: RungSpec
    plugin: str


@dataclass(frozen=True)
class Step:
    rung: Rung
    result: RungResult | None  # None: not reached


@dataclass(frozen=True)
class LadderReport:
    steps: list[Step]
    choice: LadderChoice | None
    strict: bool
    failure: str | None = None
    """Why there is no choice: the failing rung's reason, or that nothing matched."""
    problems: list[str] = field(default_factory=list)
    """Rungs that could not take part (duplicate positions, exceptions)."""


class NoProvider(NoModel):
    """No rung matched, or one failed; the message is one line that says what to do."""


def order_rungs(plugin_rungs: Sequence[Rung]) -> tuple[list[Rung], list[str]]:
    """Config and plugin rungs by position; a second rung on a taken position is dropped."""
    rungs: list[Rung] = [Rung(spec, OWN) for spec in CONFIG_RUNGS]
    problems: list[str] = []
    taken = {rung.spec.position: rung for rung in rungs}
    for rung in sorted(plugin_rungs, key=lambda r: (r.spec.position, r.plugin, r.spec.name)):
        holder = taken.get(rung.spec.position)
        if holder is not None:
            problems.append(
                f"rung {rung.spec.name!r} from plugin {rung.plugin} is ignored: position "
                f"{rung.spec.position} is taken by {holder.spec.name!r} ({holder.plugin})"
            )
            continue
        taken[rung.spec.position] = rung
        rungs.append(rung)
    rungs.sort(key=lambda r: r.spec.position)
    return rungs, problems


def known_endpoints(rungs: Sequence[Rung], settings: ModelSettings) -> dict[str, Endpoint]:
    """Endpoints declared by rungs, then the config's custom ones (a custom name wins: the
    user said so), plus the unnamed local endpoint when ``model.base_url`` is set."""
    endpoints: dict[str, Endpoint] = {}
    for rung in rungs:
        if rung.spec.endpoint is not None:
            endpoints.setdefault(rung.spec.endpoint.name, rung.spec.endpoint)
    endpoints.update(settings.custom)
    if settings.base_url:
        endpoints[LOCAL_ENDPOINT] = Endpoint(
            name=LOCAL_ENDPOINT,
            provider=settings.transport,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            default_model=settings.model or "default",
        )
    return endpoints


def make_context(
    rungs: Sequence[Rung],
    config: Mapping[str, Any],
    home: Path,
    secret: Callable[[str], str | None],
    provider: str | None = None,
    model: str | None = None,
) -> LadderContext:
    """The command line's ``provider``/``model`` win over config's ``model.provider`` and
    ``model.default``; either given on the command line makes the choice strict."""
    settings = ModelSettings.from_config(config)
    explicit = provider is not None or model is not None
    return LadderContext(
        provider=provider if provider is not None else settings.provider,
        model=model if model is not None else settings.model,
        explicit=explicit,
        endpoints=known_endpoints(rungs, settings),
        home=home,
        config=config,
        secret=secret,
    )


def walk(
    rungs: Sequence[Rung], context: LadderContext, problems: Sequence[str] = ()
) -> LadderReport:
    steps: list[Step] = []
    found: list[str] = list(problems)
    decided: RungResult | None = None
    for rung in rungs:
        if decided is not None:
            steps.append(Step(rung, None))
            continue
        try:
            result = rung.spec.resolve(context)
            if not isinstance(result, RungResult):
                raise TypeError(f"returned {type(result).__name__}, not a RungResult")
        except Exception as exc:  # noqa: BLE001  # a plugin's rung must not break choosing a model
            message = f"rung {rung.spec.name!r} ({rung.plugin}) failed: {exc}"
            log.warning("%s", message)
            found.append(message)
            steps.append(Step(rung, RungResult.skip(f"error: {exc}")))
            continue
        steps.append(Step(rung, result))
        if result.outcome is not RungOutcome.PASS:
            decided = result
    if decided is not None and decided.outcome is RungOutcome.MATCH and decided.choice:
        return LadderReport(steps, decided.choice, context.explicit, problems=found)
    if decided is not None:
        return LadderReport(steps, None, context.explicit, decided.reason, found)
    wanted = f"provider {context.provider!r}" if context.provider else "a model provider"
    failure = f"no rung could supply {wanted}: {_what_to_do(rungs, context)}"
    return LadderReport(steps, None, context.explicit, failure, found)


_KEYS_NAMED = 3


def _what_to_do(rungs: Sequence[Rung], context: LadderContext) -> str:
    """The keys the plugins' rungs look for (their endpoints name them), or that no
    provider plugin is there to look."""
    keys = list(
        dict.fromkeys(
            rung.spec.endpoint.api_key_env
            for rung in rungs
            if rung.plugin != OWN and rung.spec.endpoint and rung.spec.endpoint.api_key_env
        )
    )
    explain = "`hermes model --explain` shows what each rung saw"
    if not any(rung.plugin != OWN for rung in rungs):
        return f"no provider plugin is installed (see `hermes plugins list`); {explain}"
    if not keys:
        return f"set model.base_url to a model server, or install a provider plugin; {explain}"
    if len(keys) > _KEYS_NAMED:  # the presets add a dozen: the first few, then where to look
        named = f"{', '.join(keys[:_KEYS_NAMED])} or another provider's key (`hermes model pick`)"
    else:
        named = keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} or {keys[-1]}"
    return (
        f"set {named} in {context.home / '.env'} (or run `hermes setup`), or install another "
        f"provider plugin; {explain}"
    )


def choose(report: LadderReport) -> LadderChoice:
    if report.choice is None:
        raise NoProvider(report.failure or "no model provider")
    return report.choice


def explain(report: LadderReport) -> list[str]:
    """One line per rung: position, name, plugin, outcome, what it saw, why."""
    width = max((len(step.rung.spec.name) for step in report.steps), default=10)
    source = max((len(step.rung.plugin) for step in report.steps), default=6)
    lines = []
    for step in report.steps:
        rung = step.rung
        head = f"{rung.spec.position:>4}  {rung.spec.name:<{width}}  {rung.plugin:<{source}}  "
        result = step.result
        if result is None:
            lines.append(f"{head}-      not reached")
            continue
        label = {"match": "MATCH", "fail": "FAIL", "pass": "pass"}[result.outcome.value]
        text = f"{head}{label:<6} {result.saw}"
        if result.reason:
            text += f" ({result.reason})"
        if result.choice is not None:
            choice = result.choice
            text += f" -> {choice.endpoint.name} / {choice.model}"
        lines.append(text)
    return lines
