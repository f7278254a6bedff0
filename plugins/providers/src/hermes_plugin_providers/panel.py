"""The Models page of the dashboard: the model in use and why, the provider ladder rung by
rung (``hermes model --explain``), every provider and preset with whether its key is set,
choosing the default (``hermes model set``) and one timed test request (``hermes model
test``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from hermes_plugin_providers.ladder import LadderReport
from hermes_plugin_providers.routes import endpoint_needs, route_request, run_ladder
from hermes_plugin_providers.timed_request import ModelTestFailed, measure
from hermes_sdk.dashboard import (
    Button,
    Facts,
    Field,
    Form,
    Level,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)
from hermes_sdk.ladder import Endpoint
from hermes_sdk.routing import RouteRequest

__all__ = ["ModelsPanel"]

OUTCOME_LEVELS: dict[str, Level] = {"match": "ok", "fail": "error"}
TEST_PROMPT = "Say hello in five words."


class ModelsPanel:
    def __init__(self, context: PanelContext) -> None:
        self.context = context
        self.runtime = context.runtime

    async def _request(self) -> RouteRequest:
        """The ladder as config.yaml has it now (this page changes it)."""
        try:
            config = await self.runtime.read_config()
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        secrets = self.context.secrets
        return route_request(self.context.home, config, secrets.get, self.context.provided)

    async def view(self, query: Mapping[str, str]) -> PanelView:
        request = await self._request()
        # The ladder loads plugins, reads sign-ins and looks for local servers: a thread.
        report, ladder = await asyncio.to_thread(run_ladder, request)
        return PanelView(
            sections=(
                self._in_use(report),
                self._providers(report, ladder.endpoints, request),
                self._choose(report, ladder.endpoints),
                Section(
                    title="Test",
                    blocks=(
                        Form(
                            action="test",
                            submit="Send a test request",
                            fields=(Field(name="prompt", label="Prompt", value=TEST_PROMPT),),
                        ),
                    ),
                ),
                self._ladder(report),
            )
        )

    def _in_use(self, report: LadderReport) -> Section:
        blocks: list[Any] = []
        if report.choice is not None:
            choice = report.choice
            facts = [
                ("provider", choice.endpoint.name),
                ("model", choice.model),
                ("from", choice.source),
            ]
            if choice.endpoint.notice:
                facts.append(("note", choice.endpoint.notice))
            blocks.append(Facts(items=tuple(facts)))
        else:
            blocks.append(Text(text=f"none: {report.failure}", level="error"))
        blocks += [Text(text=problem, level="warn") for problem in report.problems]
        return Section(title="In use", blocks=tuple(blocks))

    def _providers(
        self, report: LadderReport, endpoints: Mapping[str, Endpoint], request: RouteRequest
    ) -> Section:
        chosen = report.choice.endpoint.name if report.choice else None
        rows = []
        for name, endpoint in sorted(endpoints.items()):
            needs, models = endpoint_needs(endpoint, request.secret)
            rows.append(
                Row(
                    cells=(name, needs, models),
                    buttons=()
                    if name == chosen
                    else (Button(action="use", label="Use", values={"provider": name}),),
                    level="ok" if name == chosen else None,
                )
            )
        return Section(
            title="Providers and presets",
            blocks=(
                Text(text="A key goes in .env: the Settings page sets it, never shows it back."),
                Table(columns=("provider", "key", "models"), rows=tuple(rows)),
            ),
        )

    def _choose(self, report: LadderReport, endpoints: Mapping[str, Endpoint]) -> Section:
        names = ("auto", *sorted(endpoints))
        current = report.choice.endpoint.name if report.choice else "auto"
        model = report.choice.model if report.choice else ""
        return Section(
            title="Default model",
            blocks=(
                Form(
                    action="use",
                    submit="Use it",
                    fields=(
                        Field(
                            name="provider",
                            label="Provider",
                            kind="choice",
                            choices=names,
                            value=current,
                            help="auto: the ladder decides (keys, local servers, the offline "
                            "model)",
                        ),
                        Field(
                            name="model",
                            label="Model",
                            value=model,
                            help="Empty: the provider's default model.",
                        ),
                    ),
                ),
            ),
        )

    def _ladder(self, report: LadderReport) -> Section:
        rows = []
        for step in report.steps:
            rung = step.rung
            result = step.result
            if result is None:
                cells = (str(rung.spec.position), rung.spec.name, rung.plugin, "not reached", "")
                rows.append(Row(cells=cells))
                continue
            saw = result.saw + (f" ({result.reason})" if result.reason else "")
            if result.choice is not None:
                saw += f" -> {result.choice.endpoint.name} / {result.choice.model}"
            rows.append(
                Row(
                    cells=(
                        str(rung.spec.position),
                        rung.spec.name,
                        rung.plugin,
                        result.outcome.value,
                        saw,
                    ),
                    level=OUTCOME_LEVELS.get(result.outcome.value),
                )
            )
        return Section(
            title="Provider ladder (hermes model --explain)",
            blocks=(
                Table(
                    columns=("position", "rung", "plugin", "outcome", "what it saw"),
                    rows=tuple(rows),
                ),
            ),
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        if action == "use":
            return await self._use(
                values.get("provider", "").strip(), values.get("model", "").strip()
            )
        if action == "test":
            prompt = values.get("prompt", "").strip() or TEST_PROMPT
            request = await self._request()
            try:  # its own loop in a thread: the route is built there too (files, imports)
                result = await asyncio.to_thread(asyncio.run, measure(request, prompt))
            except ModelTestFailed as exc:
                raise PanelError(str(exc)) from None
            first = result["first_token_s"]
            cost = result["cost_usd"]
            return Outcome(
                message=(
                    f"{result['provider']} / {result['model']} answered in "
                    f"{result['latency_s']:.2f} s"
                    + (f" (first token after {first:.2f} s)" if first is not None else "")
                    + f"; {result['input_tokens']} in, {result['output_tokens']} out; cost "
                    + ("unknown" if cost is None else f"${cost:.6f}")
                    + f"; reply: {' '.join(str(result['reply']).split())[:200]}"
                )
            )
        raise PanelError(f"no action {action!r} on this page: reload it")

    async def _use(self, provider: str, model: str) -> Outcome:
        """``hermes model set PROVIDER [MODEL]``: the provider (checked against the ladder's
        names) and the model, or the provider's default."""
        if not provider:
            raise PanelError("choose a provider")
        _, ladder = await asyncio.to_thread(run_ladder, await self._request())
        known = ladder.endpoints
        if provider != "auto" and provider not in known:
            raise PanelError(
                f"no provider named {provider!r} (providers: {', '.join(sorted(known))})"
            )
        changes: dict[str, str | None] = {
            "model.provider": json.dumps(provider),
            "model.default": json.dumps(model) if model else None,
        }
        config = await self.runtime.read_config()
        if not isinstance(config.get("model"), dict | None):  # the "model: NAME" shorthand
            section = {"provider": provider, **({"default": model} if model else {})}
            changes = {"model": json.dumps(section)}
        try:
            await self.runtime.change_config(changes, save=True)
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        said = f"{provider} / {model or 'its default model'}"
        return Outcome(message=f"the default is now {said}; new sessions use it")
