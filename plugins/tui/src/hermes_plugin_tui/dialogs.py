"""A question of the running turn as a dialog: an approval (the command, and a button per
answer) or a tool's question (its choices, and a line for the user's own words when it
takes them). Escape, or the time running out, answers no."""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from hermes_commons.text import printable
from hermes_sdk.runtime import Question

__all__ = ["QuestionDialog"]


class QuestionDialog(ModalScreen[str | None]):
    """Dismissed with the chosen value, the typed answer, or None (no)."""

    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [
        Binding("escape", "decline", "Answer no")
    ]

    def __init__(self, question: Question) -> None:
        super().__init__(classes="dialog-screen")
        self.question = question

    def compose(self) -> ComposeResult:
        question = self.question
        with Vertical(id="dialog"):
            yield Static(Text(printable(question.text)), classes="dialog-title", markup=False)
            if question.command and question.command not in question.text:
                yield Static(Text(question.command), classes="dialog-command", markup=False)
            with Vertical(classes="dialog-choices"):
                for index, choice in enumerate(question.choices):
                    variant: Literal["default", "primary", "error"] = "default"
                    if choice.value == "deny":
                        variant = "error"
                    elif index == 0:
                        variant = "primary"
                    yield Button(
                        Text(f"{index + 1}. {choice.label}"),  # not markup: [rule] is text
                        id=f"choice-{index}",
                        variant=variant,
                        compact=True,
                    )
            if question.free_text:
                yield Input(placeholder="or answer in your own words", id="own-words")
            yield Static(
                f"1-{len(question.choices)} or Enter chooses · Escape answers no · "
                f"no answer in {question.timeout_s:.0f} s counts as no",
                classes="dialog-hint",
            )

    def on_key(self, event: events.Key) -> None:
        """A choice's number picks it, as the terminal chat's letters do."""
        if event.character and event.character.isdigit() and not self.question.free_text:
            index = int(event.character) - 1
            if 0 <= index < len(self.question.choices):
                event.stop()
                self.dismiss(self.question.choices[index].value)

    def on_mount(self) -> None:
        self.set_timer(self.question.timeout_s, self.action_decline)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        index = int((event.button.id or "choice-0").removeprefix("choice-"))
        self.dismiss(self.question.choices[index].value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_decline(self) -> None:
        if self.is_attached:
            self.dismiss(None)
