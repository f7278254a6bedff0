"""The conformance suite for context engines: subclass it in your engine plugin's tests.

    class TestEngine(ContextEngineTests):
        plugin = hermes_plugin_recall
        pyproject = Path(__file__).parents[1] / "pyproject.toml"

The model the engine asks is a stand-in the suite controls (the kernel hands an engine its
``summarize`` the same way): it records what it was sent, answers, or is unavailable. The
suite checks what the kernel relies on: what the user said and the earlier summary reach
the summary, the focus reaches the model, a request never exceeds ``input_tokens``, and an
unavailable model still yields a summary that keeps the user's requests.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from hermes_sdk.context import (
    Compaction,
    CompactionRequest,
    ContextEngine,
    ContextEngineContext,
    SummaryUnavailable,
)
from hermes_sdk.models import ChatMessage, ToolCallRequest
from hermes_sdk.specs import ContextEngineSpec, Kind
from hermes_testkit.plugin_tests import PluginTests
from hermes_testkit.registered import RegisteredPlugin

__all__ = ["ContextEngineTests", "StandInModel"]


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


@dataclass
class StandInModel:
    """The summarizing model as the suite plays it: ``reply``, or unavailable."""

    reply: str = "SUMMARY FROM THE MODEL"
    available: bool = True
    asked: list[tuple[str, str, int]] = field(default_factory=list)

    async def __call__(self, instructions: str, text: str, max_tokens: int) -> str:
        self.asked.append((instructions, text, max_tokens))
        if not self.available:
            raise SummaryUnavailable("the summary model failed twice: HTTP 500")
        return self.reply

    def saw(self, needle: str) -> bool:
        return any(needle in instructions or needle in text for instructions, text, _ in self.asked)


def _conversation(rounds: int, filler: int = 20) -> list[ChatMessage]:
    head: list[ChatMessage] = []
    for n in range(rounds):
        head.append(ChatMessage("user", f"request {n}: " + "please look into it " * filler))
        call = ToolCallRequest(f"c{n}", "terminal", json.dumps({"command": f"make step{n}"}))
        head.append(ChatMessage("assistant", "", tool_calls=(call,)))
        head.append(ChatMessage("tool", f"step{n} built\n" * filler, tool_call_id=f"c{n}"))
        head.append(ChatMessage("assistant", f"done with step {n}"))
    return head


class ContextEngineTests(PluginTests):
    """A context engine summarizes what it is given, within its budgets, with or without
    its model."""

    def engine(self, registered: RegisteredPlugin, home: Path) -> ContextEngine:
        specs = list(registered.provided(Kind.CONTEXT_ENGINE).values())
        assert len(specs) == 1, "a context engine plugin provides exactly one engine"
        spec = specs[0]
        assert isinstance(spec, ContextEngineSpec)
        engine = spec.build(ContextEngineContext(home=str(home)))
        assert isinstance(engine, ContextEngine), "the factory must return a ContextEngine"
        return engine

    def request(
        self,
        head: list[ChatMessage],
        model: StandInModel,
        *,
        previous_summary: str | None = None,
        focus: str | None = None,
        input_tokens: int = 8000,
        summary_tokens: int = 400,
    ) -> CompactionRequest:
        return CompactionRequest(
            session_id="s1",
            reason="threshold",
            head=head,
            tail=[ChatMessage("user", "and now the next thing")],
            previous_summary=previous_summary,
            focus=focus,
            summary_tokens=summary_tokens,
            input_tokens=input_tokens,
            read_only_tools=frozenset({"read_file"}),
            summarize=model,
            count_tokens=_tokens,
        )

    def compact(self, engine: ContextEngine, request: CompactionRequest) -> Compaction:
        compaction = asyncio.run(engine.compact(request))
        assert isinstance(compaction, Compaction), "compact must return a Compaction"
        assert isinstance(compaction.summary, str) and compaction.summary.strip(), (
            "a summary must not be empty (the kernel would have to write one without you)"
        )
        return compaction

    def test_what_the_user_said_reaches_the_summary(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        model = StandInModel()
        head = [ChatMessage("user", "the code word is PLUM-7"), *_conversation(3)]
        compaction = self.compact(self.engine(registered, tmp_path), self.request(head, model))
        if compaction.by_model:
            assert model.asked, "by_model is True, but the model was never asked"
            assert model.saw("PLUM-7"), "the model was not shown what the user said"
            assert model.reply in compaction.summary, "the model's summary was not used"
        else:
            assert "PLUM-7" in compaction.summary

    def test_the_request_to_the_model_fits_its_input_budget(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        model = StandInModel()
        head = _conversation(2000)  # far more than 2,000 tokens
        request = self.request(
            head, model, previous_summary="an earlier summary " * 200, input_tokens=2000
        )
        self.compact(self.engine(registered, tmp_path), request)
        for instructions, text, max_tokens in model.asked:
            sent = _tokens(instructions) + _tokens(text)
            assert sent <= request.input_tokens, (
                f"the engine sent about {sent} tokens to a model allowed {request.input_tokens} "
                "(CompactionRequest.input_tokens): cut the transcript to fit"
            )
            assert max_tokens <= request.summary_tokens, "ask for at most summary_tokens"

    def test_the_earlier_summary_is_folded_in(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        model = StandInModel()
        request = self.request(
            _conversation(2), model, previous_summary="The user's dog is called EARLIER-42."
        )
        compaction = self.compact(self.engine(registered, tmp_path), request)
        summary = compaction.summary
        kept = model.saw("EARLIER-42") if compaction.by_model else "EARLIER-42" in summary
        assert kept, "what the earlier summary said is lost: fold previous_summary in"

    def test_the_focus_reaches_the_model(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        model = StandInModel()
        request = self.request(_conversation(2), model, focus="the FOCUS-TOPIC schema")
        compaction = self.compact(self.engine(registered, tmp_path), request)
        summary = compaction.summary
        kept = model.saw("FOCUS-TOPIC") if compaction.by_model else "FOCUS-TOPIC" in summary
        assert kept, "the user's /compact focus never reached the summary"

    def test_without_the_model_the_summary_keeps_the_requests_within_budget(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        model = StandInModel(available=False)
        head = [ChatMessage("user", "migrate the database to PostgreSQL"), *_conversation(40)]
        request = self.request(head, model, summary_tokens=300)
        compaction = self.compact(self.engine(registered, tmp_path), request)
        assert not compaction.by_model, "the model was unavailable: by_model must be False"
        assert "request 39" in compaction.summary, "the latest request is missing"
        assert _tokens(compaction.summary) <= request.summary_tokens * 1.25, (
            "a summary written without the model must fit summary_tokens"
        )

    def test_any_text_and_tool_result_is_summarized(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        head = [
            ChatMessage("user", "日本語のファイルを直して 🙂 \x00 ünïcödé"),
            ChatMessage("assistant", "", tool_calls=(ToolCallRequest("x", "read_file", "{"),)),
            ChatMessage("tool", "", tool_call_id="x"),
            ChatMessage("tool", "an orphan result", tool_call_id="nobody"),
            ChatMessage("assistant", ""),
        ]
        engine = self.engine(registered, tmp_path)
        for model in (StandInModel(), StandInModel(available=False)):
            self.compact(engine, self.request(head, model))
