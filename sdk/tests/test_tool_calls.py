"""The one tool dispatch: schema checks, signature agreement, results, and how a handler runs."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hermes_sdk import ToolSpec
from hermes_sdk.tool_calls import (
    ArgumentsRejected,
    call_tool,
    check_arguments,
    result_problem,
    schema_problem,
    signature_problems,
)
from hermes_testkit import tool_context

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def spec(handler, parameters=TEXT, **options) -> ToolSpec:
    return ToolSpec(
        name="t", description="a test tool", handler=handler, parameters=parameters, **options
    )


def test_arguments_are_checked_against_the_schema_in_one_line():
    check_arguments(spec(str), {"text": "hi"})
    with pytest.raises(ArgumentsRejected) as rejected:
        check_arguments(spec(str), {"text": 5, "extra": [1] * 3})
    assert str(rejected.value) == "text: 5 is not of type 'string'"
    many = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcde"}}
    with pytest.raises(ArgumentsRejected, match=r"; and 2 more$"):
        check_arguments(spec(str, many), dict.fromkeys("abcde", "x"))


def test_an_invalid_schema_is_named():
    broken = {"type": "object", "properties": {"n": {"type": "integr"}}}
    assert "is not valid under any of the given schemas" in (
        schema_problem(spec(str, broken)) or ""
    )
    assert schema_problem(spec(str)) is None


def test_signature_and_schema_agree():
    def text_only(text: str) -> str:
        return text

    def with_context(text: str, context) -> str:
        return text

    def anything(**kwargs) -> str:
        return ""

    def positional(text, /) -> str:
        return text

    assert signature_problems(spec(text_only)) == []
    assert signature_problems(spec(with_context, takes_context=True)) == []
    assert signature_problems(spec(anything)) == []
    assert signature_problems(spec(with_context)) == [
        "t: the handler needs 'context'; set takes_context=True"
    ]
    assert signature_problems(spec(text_only, takes_context=True)) == [
        "t: takes_context is set, but the handler has no 'context' parameter"
    ]
    assert signature_problems(spec(positional)) == [
        "t: parameter 'text' is positional-only; arguments come by name",
        "t: required property 'text' is not a parameter of the handler",
        "t: property 'text' is not a parameter the handler can take",
    ]
    optional = {"type": "object", "properties": {"text": {"type": "string"}}}
    assert signature_problems(spec(text_only, optional)) == [
        "t: parameter 'text' has no default but is not required in the schema "
        "(give it a default, or list it in 'required')"
    ]


def test_results_are_text():
    assert result_problem("3 words") is None
    assert "returned int 3; a tool returns text" in (result_problem(3) or "")
    assert "returned dict" in (result_problem({"a": 1}) or "")


def test_sync_handlers_run_in_a_thread_and_async_ones_on_the_loop():
    seen = {}

    def sync(text: str) -> str:
        seen["sync"] = threading.current_thread() is threading.main_thread()
        return text

    async def coro(text: str) -> str:
        seen["async"] = threading.current_thread() is threading.main_thread()
        return text * 2

    def wrapper(text: str):  # a sync wrapper that returns an awaitable: awaited
        return coro(text)

    async def main():
        return [
            await call_tool(spec(sync), {"text": "a"}),
            await call_tool(spec(coro), {"text": "b"}),
            await call_tool(spec(wrapper), {"text": "c"}),
        ]

    assert asyncio.run(main()) == ["a", "bb", "cc"]
    assert seen == {"sync": False, "async": True}


def test_a_context_is_passed_only_to_tools_that_take_one():
    def where(text: str, context) -> str:
        return f"{text} in {context.session_id}"

    built = []

    def build():
        built.append(1)
        return tool_context(session_id="s-42")

    tool = spec(where, takes_context=True)
    assert asyncio.run(call_tool(tool, {"text": "x"}, build)) == "x in s-42"
    assert asyncio.run(call_tool(spec(lambda text: text.upper()), {"text": "y"}, build)) == "Y"
    assert built == [1], "the context is built only for the tool that takes it"


def test_a_broken_schema_leaves_the_arguments_unchecked_with_one_warning(caplog):
    broken = {"type": "object", "properties": {"n": {"type": "integr"}}}
    tool = spec(lambda n=1: str(n), broken)
    with caplog.at_level("WARNING", logger="hermes.tools"):
        check_arguments(tool, {"n": 3})
        check_arguments(tool, {"n": 4})
    assert [r.getMessage() for r in caplog.records] == [
        "tool 't': its schema cannot be checked (Unknown type 'integr' for validator with "
        "schema:); its arguments go unchecked"
    ]
