"""Compaction end to end: ``hermes chat -q`` (the whole kernel, the default context engine,
the openai provider) against the scripted model server, which counts each request's tokens
as a real server does and can refuse what passes its window."""

from __future__ import annotations

import json

import pytest
from hermes_plugin_store_sqlite import state_db_path
from hermes_plugin_store_sqlite.database import Database

from hermes_kernel.store.state import StateStore
from hermes_testkit import Reply

SUMMARIZER = "You write the working memory of an AI agent"
SUMMARY_OPENING = "[The earlier part of this conversation was compacted"


def words(label: str, count: int) -> str:
    """``count`` distinct words (about 1.5 tokens each), labelled so a test can find them."""
    return " ".join(f"{label}{i}" for i in range(count))


def is_summary_request(body: dict) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and SUMMARIZER in str(messages[0].get("content"))


def main_requests(server) -> list[dict]:
    return [r.json for r in server.requests if not is_summary_request(r.json)]


def summary_requests(server) -> list[dict]:
    return [r.json for r in server.requests if is_summary_request(r.json)]


class Model:
    """Answers the summarizer with a summary and every other request with "answer N"; a
    summary reply can be replaced by failures."""

    def __init__(self, server, summary: str = "SUMMARY: the user sent long texts.") -> None:
        self.server = server
        self.summary = summary
        self.failing_summaries = 0
        self.answers = 0
        server.respond = self

    def __call__(self, body: dict) -> Reply:
        if is_summary_request(body):
            if self.failing_summaries:
                self.failing_summaries -= 1
                return Reply.error(500)
            return Reply.say(self.summary)
        self.answers += 1
        return Reply.say(f"answer {self.answers}")


@pytest.fixture
def home(hermes, openai_server, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def configure(context_length: int = 6000, extra: str = "") -> None:
        hermes.config(
            f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
            f"  context_length: {context_length}\n"
            "agent:\n  retries: 1\n  toolsets: [terminal]\n"
            "learning:\n  review: false\n"
            # The token counts below were sized for a prompt with a small skills index.
            "skills:\n  index_chars: 500\n" + extra
        )

    configure()
    hermes.configure = configure
    return hermes


def ask(hermes, text: str, *flags: str) -> dict:
    result = hermes("chat", "-q", text, "--json", *flags)
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    payload["stderr"] = result.err
    return payload


def compactions(hermes, session_id: str):
    store = StateStore(Database(state_db_path(hermes.home)))
    try:
        return store.compactions.of_session(session_id)
    finally:
        store.close()


def test_a_session_past_the_threshold_compacts_before_the_call_and_answers(home, openai_server):
    model = Model(openai_server)
    first = ask(home, words("alpha", 1200))
    session = first["session_id"]
    assert not summary_requests(openai_server)
    second = ask(home, words("beta", 1200), "--continue")
    assert second["reply"] == "answer 2" and second["session_id"] == session
    (summarized,) = summary_requests(openai_server)
    assert "alpha0" in summarized["messages"][1]["content"]  # the head went to the summarizer
    last = main_requests(openai_server)[-1]["messages"]
    assert last[0]["role"] == "system"
    assert last[1]["content"].startswith(SUMMARY_OPENING)
    assert "SUMMARY: the user sent long texts." in last[1]["content"]
    assert "alpha0" not in json.dumps(last)  # replaced in the view ...
    assert last[-1]["content"].startswith("beta0")
    assert "compacted" in second["stderr"]
    (record,) = compactions(home, session)
    assert record.reason == "threshold" and record.by_model and record.engine == "summary"
    assert record.tokens_after < record.tokens_before
    exported = home("sessions", "export", session).out
    assert "alpha0" in exported  # ... never in the transcript
    shown = home("sessions", "show", session).out
    assert "── compacted here" in shown and "(threshold)" in shown
    assert model.answers == 2


def test_the_summary_call_is_paid_for_in_the_session(home, openai_server):
    Model(openai_server)
    session = ask(home, words("alpha", 1200))["session_id"]
    ask(home, words("beta", 1200), "--continue")
    store = StateStore(Database(state_db_path(home.home)))
    try:
        calls = store.db.query(
            "SELECT count(*), sum(input_tokens) FROM model_calls WHERE session_id = ?",
            (session,),
        )[0]
        totals = store.sessions.get(session)
    finally:
        store.close()
    assert calls[0] == 3  # two answers and the summary
    assert totals.input_tokens == calls[1] > 0


def test_a_restart_after_compaction_continues_from_it_and_keeps_the_prompt_cache(
    home, openai_server
):
    Model(openai_server)
    session = ask(home, words("alpha", 1200))["session_id"]
    ask(home, words("beta", 1200), "--continue")
    assert len(summary_requests(openai_server)) == 1
    ask(home, "short question one", "--continue")
    ask(home, "short question two", "--continue")
    assert len(summary_requests(openai_server)) == 1  # not compacted again
    assert len(compactions(home, session)) == 1
    before, after = (r["messages"] for r in main_requests(openai_server)[-2:])
    # Between compactions every request starts with the one before, byte for byte.
    assert json.dumps(after[: len(before)]) == json.dumps(before)
    assert after[1]["content"].startswith(SUMMARY_OPENING)


def test_a_context_overflow_compacts_once_and_the_call_is_retried(home, openai_server):
    home.configure(context_length=200_000)  # the config thinks the window is big ...
    openai_server.context_window = 3000  # ... the server knows better
    Model(openai_server)
    session = ask(home, words("alpha", 800))["session_id"]
    answered = ask(home, words("beta", 600), "--continue")
    assert answered["reply"] == "answer 2"
    refused = [r for r in openai_server.requests if not is_summary_request(r.json)]
    sizes = [openai_server.prompt_tokens(r.json) for r in refused]
    assert sum(size > 3000 for size in sizes) == 1  # refused once, then it fitted
    assert sizes[-1] <= 3000
    (record,) = compactions(home, session)
    assert record.reason == "overflow"


def test_a_failing_summary_call_keeps_the_tail_and_the_transcript(home, openai_server):
    model = Model(openai_server)
    session = ask(home, "please remember the code word PLUM " + words("alpha", 1200))["session_id"]
    model.failing_summaries = 2  # the call and its one retry
    second = ask(home, words("beta", 1200), "--continue")
    assert second["reply"] == "answer 2"
    assert "failed twice" in second["stderr"] and "plain summary" in second["stderr"]
    (record,) = compactions(home, session)
    assert not record.by_model
    assert "code word PLUM" in record.summary  # the user's request, in the plain summary
    last = main_requests(openai_server)[-1]["messages"]
    assert "code word PLUM" in last[1]["content"]
    assert last[-1]["content"] == words("beta", 1200)  # the tail, word for word
    assert "alpha1199" in home("sessions", "export", session).out


def test_compaction_inside_a_tool_loop_keeps_calls_paired_and_runs_nothing_twice(
    home, openai_server, tmp_path
):
    big = words("out", 700)
    replies = iter(
        [
            Reply.tool_call("terminal", {"command": f"echo first >> log.txt && echo {big}"}),
            Reply.tool_call("terminal", {"command": f"echo second >> log.txt && echo {big}"}),
            Reply.tool_call("terminal", {"command": f"echo third >> log.txt && echo {big}"}),
            Reply.say("all three lines are written"),
        ]
    )

    def respond(body: dict) -> Reply:
        if is_summary_request(body):
            return Reply.say("SUMMARY: wrote lines to log.txt")
        return next(replies)

    openai_server.respond = respond
    home.configure(context_length=6000)
    result = ask(home, "write three lines to log.txt")
    assert result["reply"] == "all three lines are written", result
    assert (tmp_path / "work" / "log.txt").read_text() == "first\nsecond\nthird\n"
    assert summary_requests(openai_server)  # it compacted mid-turn
    for request in main_requests(openai_server):
        messages = request["messages"]
        for index, message in enumerate(messages):  # the server checks pairing too
            if message["role"] == "tool":
                before = [m for m in messages[:index] if m.get("tool_calls")]
                assert before, "a tool result without its call"
    last = main_requests(openai_server)[-1]["messages"]
    summary = next(m["content"] for m in last if SUMMARY_OPENING in str(m.get("content")))
    assert "Actions already taken" in summary and "echo first >> log.txt" in summary


def test_eight_long_turns_in_a_6000_token_window_all_answer(home, openai_server):
    openai_server.context_window = 6000
    model = Model(openai_server)
    session = None
    for turn in range(8):
        flags = ("--resume", session) if session else ()
        payload = ask(home, words(f"t{turn}w", 900), *flags)
        session = payload["session_id"]
        assert payload["reply"] == f"answer {model.answers}", payload
    last = main_requests(openai_server)[-1]
    assert openai_server.prompt_tokens(last) <= 6000
    refused = [r for r in openai_server.requests if openai_server.prompt_tokens(r.json) > 6000]
    assert refused == []  # compacted before every call that would not have fitted
    assert len(compactions(home, session)) >= 3


def test_with_compaction_off_an_overflow_is_one_line_that_says_what_to_do(home, openai_server):
    home.configure(extra="compression:\n  enabled: false\n")
    openai_server.context_window = 3000
    Model(openai_server)
    ask(home, words("alpha", 800))
    result = home("chat", "-q", words("beta", 1200), "--continue")
    assert result.code == 1 and "Traceback" not in result.err
    line = next(x for x in result.err.splitlines() if x.startswith("hermes: error:"))
    assert "too long" in line and "compression.enabled" in line
    assert not summary_requests(openai_server)


def test_an_unknown_engine_falls_back_to_a_plain_summary_with_one_warning(home, openai_server):
    home.configure(extra="compression:\n  engine: nonesuch\n")
    Model(openai_server)
    session = ask(home, words("alpha", 1200))["session_id"]
    second = ask(home, words("beta", 1200), "--continue")
    assert second["reply"] == "answer 2"
    assert "context engine 'nonesuch' is not installed" in second["stderr"]
    (record,) = compactions(home, session)
    assert not record.by_model and record.engine == "plain"
    assert not summary_requests(openai_server)


def test_a_bad_compression_setting_is_one_line(home):
    home.configure(extra="compression:\n  threshold: 3\n")
    result = home("chat", "-q", "hi")
    assert result.code == 1 and "compression.threshold" in result.err
    assert "Traceback" not in result.err


def test_the_summary_model_rests_after_failures_and_one_success_ends_it(
    openai_server, provider_spec
):
    import asyncio

    from hermes_kernel.engine.models import ModelRoute
    from hermes_kernel.engine.summaries import SummaryModel
    from hermes_sdk.context import SummaryUnavailable
    from hermes_sdk.models import ProviderSettings

    route = ModelRoute(
        "scripted",
        provider_spec.factory(ProviderSettings(base_url=openai_server.base_url, timeout_seconds=5)),
        "test-model",
    )
    now = [1000.0]
    model = SummaryModel(lambda: None, lambda _model, _usage: 0.01, clock=lambda: now[0])
    usages: list = []
    summarize = model.summarizer(route, usages)

    async def scenario() -> None:
        openai_server.queue(Reply.error(500), Reply.error(500))
        with pytest.raises(SummaryUnavailable, match=r"failed twice.*asked again in 60 s"):
            await summarize("summarize", "text", 100)
        with pytest.raises(SummaryUnavailable, match="failed recently"):
            await summarize("summarize", "text", 100)  # resting: not asked at all
        assert len(openai_server.requests) == 2
        now[0] += 61
        openai_server.queue(Reply.error(500), Reply.error(500))
        with pytest.raises(SummaryUnavailable, match="asked again in 300 s"):
            await summarize("summarize", "text", 100)
        now[0] += 301
        openai_server.queue(Reply.error(503), Reply.say("a summary"))  # the retry answers
        assert await summarize("summarize", "text", 100) == "a summary"
        openai_server.queue(Reply.error(500), Reply.error(500))
        with pytest.raises(SummaryUnavailable, match="asked again in 60 s"):  # reset
            await summarize("summarize", "text", 100)
        await route.provider.aclose()

    asyncio.run(scenario())
    assert [u.estimated_cost_usd for u in usages] == [0.01]  # the one call that answered


def test_the_system_prompt_is_rebuilt_at_a_compaction_and_only_then(home, openai_server):
    Model(openai_server)
    (home.home / "SOUL.md").write_text("You are Hermes, first version.")
    ask(home, "short one")
    (home.home / "SOUL.md").write_text("You are Hermes, second version.")
    ask(home, words("alpha", 1200), "--continue")
    requests = main_requests(openai_server)
    assert "first version" in requests[1]["messages"][0]["content"]  # frozen until now
    ask(home, words("beta", 1200), "--continue")  # compacts
    assert summary_requests(openai_server)
    assert "second version" in main_requests(openai_server)[-1]["messages"][0]["content"]


def test_a_compaction_that_cannot_help_spends_no_summary_call(home, openai_server):
    Model(openai_server)
    ask(home, "short")
    # The new message alone is past the threshold: keeping it whole, no summary helps.
    payload = ask(home, words("huge", 2200), "--continue")
    assert payload["reply"] == "answer 2"
    assert not summary_requests(openai_server)
