"""How a typed line answers a turn's question: the words the chat accepts, and what is
refused, on the SDK's own Question."""

from __future__ import annotations

from hermes_plugin_chat.commands import BUILTINS
from hermes_plugin_chat.questions import answer_from_line, decision, hint, question_text

from hermes_sdk.runtime import RESERVED_SLASH_NAMES, Question, QuestionChoice

APPROVAL = (
    QuestionChoice(value="once", label="Allow once"),
    QuestionChoice(value="session", label="Allow for this session"),
    QuestionChoice(value="always", label="Always allow"),
    QuestionChoice(value="deny", label="Deny"),
)


def asked(kind: str = "approval", choices=APPROVAL, free_text: bool = False):
    got: list[str | None] = []

    def reply(value: str | None) -> bool:
        got.append(value)
        return True

    question = Question(
        question_id="q1",
        kind=kind,  # type: ignore[arg-type]  # the two kinds, as strings in a table
        text="Approve this command? It makes files writable by everyone.\n\nchmod -R 777 x",
        choices=choices,
        command="chmod -R 777 x",
        free_text=free_text,
        _reply=reply,
    )
    return question, got


def test_approval_words_pick_their_answer_and_anything_else_denies():
    for typed, expected in [
        ("o", "once"),
        ("yes", "once"),
        (" S ", "session"),
        ("a", "always"),
        ("d", None),
        ("no", None),
        ("maybe", None),
        ("", None),
    ]:
        question, got = asked()
        assert answer_from_line(question, typed)
        assert got == [expected], typed


def test_a_question_takes_a_number_a_label_or_free_words():
    choices = (QuestionChoice(value="0", label="red"), QuestionChoice(value="1", label="blue"))
    question, got = asked("question", choices, free_text=True)
    answer_from_line(question, "2")
    assert got == ["1"]
    question, got = asked("question", choices, free_text=True)
    answer_from_line(question, "Red")
    assert got == ["0"]
    question, got = asked("question", choices, free_text=True)
    answer_from_line(question, "green, please")
    assert got == ["green, please"]
    question, got = asked("question", choices, free_text=False)
    answer_from_line(question, "green")
    assert got == [None]  # not a choice, and no free answer allowed: declined


def test_the_approval_shows_the_reason_the_command_and_what_each_answer_allows():
    question, _ = asked()
    text = question_text(question)
    assert text.splitlines() == [
        "Approve this command? It makes files writable by everyone.",
        "    chmod -R 777 x",
        "  o  Allow once",
        "  s  Allow for this session",
        "  a  Always allow",
        "  d  Deny",
    ]
    assert hint(question) == "o/s/a/d"


def test_c_allows_exactly_this_command_always_where_that_is_offered():
    exact = QuestionChoice(
        value="command",
        label="Always allow exactly this command: saves approvals.allow_commands: "
        '["chmod -R 777 x"] in config.yaml',
    )
    question, got = asked(choices=(*APPROVAL[:2], exact, *APPROVAL[2:]))
    assert "  c  Always allow exactly this command" in question_text(question)
    assert hint(question) == "o/s/c/a/d"
    assert decision(question, "c") == exact.label
    assert answer_from_line(question, "c") and got == ["command"]
    question, got = asked()  # not offered: "c" denies
    assert answer_from_line(question, "c") and got == [None]


def test_the_terminals_own_commands_are_reserved_but_the_fallbacks():
    own = {command.name for command in BUILTINS if not command.fallback}
    assert own <= RESERVED_SLASH_NAMES
    assert not {command.name for command in BUILTINS if command.fallback} & RESERVED_SLASH_NAMES


def test_the_decision_is_said_in_words_and_always_says_how_wide_it_is():
    wide = (
        *APPROVAL[:2],
        QuestionChoice(
            value="always",
            label="Always allow every command that deletes recursively: saves "
            "approvals.allow: [recursive-delete] in config.yaml (remove it there to be asked "
            "again)",
        ),
        APPROVAL[3],
    )
    question, _ = asked(choices=wide)
    assert decision(question, "a").startswith("Always allow every command that deletes")
    assert "approvals.allow: [recursive-delete]" in decision(question, "always")
    assert decision(question, "o") == "Allow once"
    assert decision(question, "maybe") == "denied"
    assert decision(question, None) == "no answer: denied"
    without_always = (APPROVAL[0], APPROVAL[1], APPROVAL[3])
    question, got = asked(choices=without_always)
    assert decision(question, "a") == "denied"  # nothing to save: "always" is not offered
    assert answer_from_line(question, "a") and got == [None]
