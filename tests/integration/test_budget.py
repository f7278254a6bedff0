"""Spending limits through the whole agent (``hermes chat -q``, the scripted model): a runaway
tool loop stopped by a token budget, a priced model stopped by a cost budget, and a price
that is unknown said once, never taken as free."""

from __future__ import annotations

import json

from hermes_testkit import Reply


def configure(hermes, openai_server, model: str, budget: str) -> None:
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: {model}\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
        f"budget:\n{budget}"
    )


def ask(hermes) -> tuple[dict, str, int]:
    result = hermes("chat", "-q", "keep going", "--json")
    return json.loads(result.out), result.err, result.code


def runaway(openai_server, calls: int = 60) -> None:
    openai_server.queue(
        *(Reply.tool_call("todo", {}) for _ in range(calls)), Reply.say("never reached")
    )


def test_a_runaway_tool_loop_is_stopped_by_the_token_budget(hermes, openai_server):
    configure(hermes, openai_server, "test-model", "  session_max_tokens: 40000\n")
    runaway(openai_server)
    payload, _, code = ask(hermes)
    assert code == 1
    assert payload["status"] == "budget"
    assert "budget.session_max_tokens is 40,000" in payload["error"]
    assert "raise budget.session_max_tokens in config.yaml" in payload["error"]
    made = len(openai_server.requests)
    print(f"token budget: {made} model calls made")
    assert 1 < made < 60  # a bounded number of calls, then none that would pass it
    used = payload["usage"]["input_tokens"] + payload["usage"]["output_tokens"]
    assert used <= 40000


def test_a_cost_budget_stops_a_priced_model(hermes, openai_server):
    # gpt-4o is in the OpenAI provider's price table ($2.50 per million input tokens).
    configure(hermes, openai_server, "gpt-4o", "  session_max_cost_usd: 0.02\n")
    runaway(openai_server)
    payload, _, code = ask(hermes)
    assert code == 1 and payload["status"] == "budget"
    assert "budget.session_max_cost_usd is $0.0200" in payload["error"]
    assert payload["usage"]["cost_usd"] <= 0.02
    print(f"cost budget: {len(openai_server.requests)} calls, ${payload['usage']['cost_usd']}")
    assert 1 <= len(openai_server.requests) < 60


def test_a_turn_budget_stops_the_turn_and_the_next_turn_may_spend_again(hermes, openai_server):
    configure(hermes, openai_server, "gpt-4o", "  turn_max_cost_usd: 0.01\n")
    runaway(openai_server, calls=10)
    payload, _, _ = ask(hermes)
    assert payload["status"] == "budget"
    assert "budget.turn_max_cost_usd" in payload["error"]


def test_an_unknown_price_is_said_once_and_never_counted_as_free(hermes, openai_server):
    configure(hermes, openai_server, "test-model", "  session_max_cost_usd: 0.01\n")
    openai_server.queue(Reply.tool_call("todo", {}), Reply.say("done"))
    payload, err, code = ask(hermes)
    assert code == 0 and payload["reply"] == "done"
    assert err.count("the cost of a call to test-model is known only once it is made") == 1
    assert payload["usage"]["cost_usd"] is None or payload["usage"].get("unpriced_calls")


def test_a_bad_budget_value_is_one_line(hermes, openai_server):
    configure(hermes, openai_server, "test-model", "  session_max_tokens: -5\n")
    result = hermes("chat", "-q", "hi")
    assert result.code != 0
    assert "budget.session_max_tokens" in result.err
    assert "Traceback" not in result.err


def test_sessions_show_says_what_was_spent_against_the_budget(hermes, openai_server):
    configure(hermes, openai_server, "gpt-4o", "  session_max_cost_usd: 1\n")
    openai_server.queue(Reply.say("cheap"))
    payload, _, code = ask(hermes)
    assert code == 0
    shown = hermes("sessions", "show", payload["session_id"])
    assert "budget: $0.0" in shown.out and "of $1.00" in shown.out
