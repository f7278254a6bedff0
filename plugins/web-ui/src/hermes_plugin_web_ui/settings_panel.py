"""The Settings page: a form for each config.yaml section, typed by its owner's model,
changed through a diff you confirm (``Runtime.change_config``, checked as ``hermes config
set`` checks); the secrets of .env listed masked and set, never shown back."""

from __future__ import annotations

import json
from collections.abc import Mapping

from hermes_sdk.administration import ConfigField, ConfigSection
from hermes_sdk.dashboard import (
    Block,
    Button,
    Code,
    Field,
    FieldKind,
    Form,
    Outcome,
    PanelContext,
    PanelError,
    PanelView,
    Row,
    Section,
    Table,
    Text,
)
from hermes_sdk.runtime import Runtime

__all__ = ["SettingsPanel"]

SET = "set:"
UNSET = "unset:"
FIRST_SECTION = "model"
KINDS: dict[str, FieldKind] = {
    "bool": "bool",
    "int": "number",
    "float": "number",
    "text": "text",
    "choice": "choice",
    "yaml": "textarea",
}


class SettingsPanel:
    def __init__(self, context: PanelContext) -> None:
        self.runtime: Runtime = context.runtime

    async def _sections(self) -> dict[str, ConfigSection]:
        try:
            return {section.name: section for section in await self.runtime.config_sections()}
        except ValueError as exc:
            raise PanelError(str(exc)) from None

    async def view(self, query: Mapping[str, str]) -> PanelView:
        sections = await self._sections()
        name = query.get("section", FIRST_SECTION)
        chosen = sections.get(name) or next(iter(sections.values()), None)
        shown: list[Section] = []
        if chosen is not None:
            shown.append(_section_form(chosen))
        shown.append(
            Section(
                title="Another key",
                blocks=(
                    Text(
                        text="Any dotted key, its value as YAML (5, true, [a, b]); an empty "
                        "value removes it so its default applies."
                    ),
                    Form(
                        action="preview_key",
                        submit="Preview",
                        fields=(
                            Field(
                                name="key", label="Key", placeholder="agent.retries", required=True
                            ),
                            Field(name="value", label="Value (YAML)", kind="textarea"),
                        ),
                    ),
                ),
            )
        )
        shown.append(await self._secrets())
        shown.append(
            Section(
                title="Sections",
                blocks=(
                    Table(
                        columns=("section", "owner", "what it is"),
                        rows=tuple(
                            Row(
                                cells=(s.name, s.owner, s.description),
                                buttons=(
                                    Button(
                                        action="",
                                        label="Edit",
                                        values={"section": s.name},
                                        navigate=True,
                                    ),
                                ),
                                level="error" if s.problems else None,
                            )
                            for s in sections.values()
                        ),
                    ),
                ),
            )
        )
        return PanelView(sections=tuple(shown))

    async def _secrets(self) -> Section:
        listed = await self.runtime.secrets()
        return Section(
            title="Secrets (.env)",
            blocks=(
                Table(
                    columns=("name", "value"),
                    rows=tuple(Row(cells=(s.name, s.shown)) for s in listed),
                    empty="no secrets in .env yet",
                ),
                Form(
                    action="secret",
                    submit="Save the secret",
                    fields=(
                        Field(
                            name="name", label="Name", placeholder="OPENAI_API_KEY", required=True
                        ),
                        Field(
                            name="value",
                            label="Value",
                            kind="secret",
                            placeholder="pasted here, never shown again",
                            required=True,
                        ),
                    ),
                ),
            ),
        )

    async def act(self, action: str, values: Mapping[str, str]) -> Outcome:
        if action == "preview":
            sections = await self._sections()
            section = sections.get(values.get("_section", ""))
            if section is None:
                raise PanelError("that section is gone: reload the page")
            return await self._preview(_changes(section, values))
        if action == "preview_key":
            key = values.get("key", "").strip()
            if not key:
                raise PanelError("name the key to change (agent.retries)")
            text = values.get("value", "")
            return await self._preview({key: text if text.strip() else None})
        if action == "save":
            changes: dict[str, str | None] = {}
            for name, text in values.items():
                if name.startswith(SET):
                    changes[name[len(SET) :]] = text
                elif name.startswith(UNSET):
                    changes[name[len(UNSET) :]] = None
            try:
                change = await self.runtime.change_config(changes, save=True)
            except ValueError as exc:
                raise PanelError(str(exc)) from None
            said = "; ".join(change.warnings)
            keys = ", ".join(sorted(changes))
            return Outcome(
                message=f"saved {keys} in config.yaml; restart what uses it to apply it"
                + (f" (warning: {said})" if said else "")
            )
        if action == "secret":
            try:
                line = await self.runtime.set_secret(
                    values.get("name", "").strip(), values.get("value", "")
                )
            except ValueError as exc:
                raise PanelError(str(exc), keep_typed=False) from None  # a secret's form
            return Outcome(message=line)
        raise PanelError(f"no action {action!r} on this page: reload it")

    async def _preview(self, changes: dict[str, str | None]) -> Outcome:
        if not changes:
            raise PanelError("nothing changed: edit a field first")
        try:
            change = await self.runtime.change_config(changes, save=False)
        except ValueError as exc:
            raise PanelError(str(exc)) from None
        hidden = tuple(
            Field(name=f"{SET}{key}", label=key, kind="hidden", value=text)
            if text is not None
            else Field(name=f"{UNSET}{key}", label=key, kind="hidden", value="")
            for key, text in changes.items()
        )
        blocks: tuple[Block, ...] = (
            Code(text=change.diff or "(config.yaml would not change)", kind="diff"),
            *(Text(text=f"warning: {w}", level="warn") for w in change.warnings),
            Form(action="save", submit="Save", fields=hidden),
        )
        return Outcome(
            message="check the change, then save it (or go back to leave it)",
            view=PanelView(sections=(Section(title="The change to config.yaml", blocks=blocks),)),
        )


def _section_form(section: ConfigSection) -> Section:
    fields = [Field(name="_section", label="", kind="hidden", value=section.name)]
    for item in section.fields:
        fields.append(_field(item))
    blocks: list[Block] = [Text(text=section.description)] if section.description else []
    blocks += [Text(text=problem, level="error") for problem in section.problems]
    blocks.append(Form(action="preview", submit="Preview the change", fields=tuple(fields)))
    return Section(title=f"{section.name} ({section.owner})", blocks=tuple(blocks))


def _field(item: ConfigField) -> Field:
    default = item.default if item.default != "" else "not set"
    help_text = " ".join(part for part in (item.description, f"Default: {default}.") if part)
    choices = item.choices
    if item.type == "choice" and item.value not in choices:
        choices = ("", *choices)
    return Field(
        name=item.key,
        label=item.key,
        kind=KINDS[item.type],
        value=item.value,
        help=help_text,
        choices=choices,
    )


def _changes(section: ConfigSection, values: Mapping[str, str]) -> dict[str, str | None]:
    """What the form changed, as YAML text (None: remove the key, back to its default)."""
    changes: dict[str, str | None] = {}
    for item in section.fields:
        if item.key not in values:
            continue
        given = values[item.key].strip()
        if given == item.value.strip():
            continue
        if given == "":
            if item.is_set:
                changes[item.key] = None
            continue
        if item.type in ("text", "choice"):
            changes[item.key] = json.dumps(given, ensure_ascii=False)  # "5" stays text
        else:
            changes[item.key] = given
    return changes
