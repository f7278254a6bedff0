"""A whole turn on the embedded SmolLM2-135M model, through the ladder's choice, the turn
engine and the state store: the model calls a tool (forced on the first call, as a 135M
model needs) and its answer uses the tool's result. About two seconds on two cores."""

from __future__ import annotations

import asyncio

from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.engine.turn import TurnEngine
from hermes_kernel.providers.routing import model_setup, pricing
from hermes_kernel.store.state import StateStore
from hermes_sdk import ToolSpec

calls: list[dict[str, str]] = []


def get_weather(city: str = "") -> str:
    calls.append({"city": city})
    return f"The weather in {city or 'the city'}: sunny, 21 degrees Celsius."


WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city.",
    handler=get_weather,
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
    parallel_safe=True,
)


def test_a_tool_call_made_and_its_result_used(hermes) -> None:
    # A fixed seed: a 135M model's answer is a close call, and the test is of the engine.
    hermes.config("embedded_model:\n  seed: 7\n")
    app = hermes.app()
    setup = model_setup(app.host, app.settings)
    assert [(r.name, r.model) for r in setup.routes] == [("local", "smollm2-135m-instruct")]
    assert "tiny" in setup.notice
    store = StateStore(Database(hermes.home / "state.db"))
    engine = TurnEngine(
        store,
        setup.routes,
        {"get_weather": WEATHER},
        hermes.home,
        pricing=pricing(app.host),
    )
    session = engine.start_session("cli")
    streamed: list[str] = []
    result = asyncio.run(
        engine.run_turn(
            session.id,
            "What is the weather in Paris?",
            on_text=streamed.append,
            tool_choice="get_weather",
        )
    )
    messages = store.messages.of_session(session.id)
    totals = store.sessions.get(session.id)
    store.close()
    assert result.status == "done", result.error
    assert calls and isinstance(calls[0]["city"], str)
    roles = [m.role for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_calls and messages[1].tool_calls[0]["name"] == "get_weather"
    assert "sunny" in (messages[2].content or "")
    reply = result.text.lower()
    assert reply and ("21" in reply or "sunny" in reply), f"the reply ignores the tool: {reply!r}"
    assert "".join(streamed).strip() == result.text.strip()
    assert totals is not None and totals.input_tokens > 0 and totals.output_tokens > 0
    assert totals.unpriced_calls == 0, "the embedded model is priced (free)"
