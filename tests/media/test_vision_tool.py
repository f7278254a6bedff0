"""``media.images: tool``: a text-only model gets where an image is kept and asks the
auxiliary model about it with ``vision_analyze``, in the same turn."""

from __future__ import annotations

import hashlib

import pytest

from hermes_testkit import Reply
from hermes_testkit.image_checks import images_in
from hermes_testkit.openai_server import ScriptedOpenAIServer


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "isolated"])
def test_a_text_only_model_looks_through_the_tool(hermes, photo, isolated):
    kept = (
        hermes.home
        / "cache"
        / "media"
        / f"{hashlib.sha256(photo.read_bytes()).hexdigest()[:32]}.jpg"
    )
    with ScriptedOpenAIServer() as main, ScriptedOpenAIServer() as helper:
        hermes.config(
            f"model:\n  base_url: {main.base_url}\n  default: test-model\n"
            f"providers:\n  eyes:\n    base_url: {helper.base_url}\n    models: [gpt-4o]\n"
            "auxiliary:\n  provider: eyes\n  model: gpt-4o\n"
            "media:\n  images: tool\nagent:\n  add_toolsets: [vision]\n"
            + ("plugins:\n  isolated: [toolset-vision]\n" if isolated else "")
        )
        main.queue(
            Reply.tool_call("vision_analyze", {"image": str(kept), "question": "What colour?"}),
            Reply.say("It is red."),
        )
        helper.queue(Reply.say("Solid red."))
        result = hermes("chat", "-q", "What colour is it?", "--image", str(photo))
        assert result.code == 0, result.err
        assert result.out == "It is red.\n"
        assert "it gets where the image is kept, to look at it with a tool" in result.err
        first = main.requests[0].json
        assert first["messages"][-1]["content"].endswith(f"kept at {kept}")
        assert not images_in(first)
        assert "vision_analyze" in [t["function"]["name"] for t in first["tools"]]
        (looked,) = helper.requests
        assert looked.json["messages"][-1]["content"][0]["text"] == "What colour?"
        assert len(images_in(looked.json)) == 1
        tool_result = main.requests[1].json["messages"][-1]
        assert tool_result["role"] == "tool" and "Solid red." in tool_result["content"]


def test_opt_in_toolsets_stay_out_of_a_plain_session(hermes, openai_server):
    hermes.config(f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n")
    openai_server.queue(Reply.say("Hi."))
    assert hermes("chat", "-q", "hello").code == 0
    tools = [t["function"]["name"] for t in openai_server.requests[0].json["tools"]]
    assert "vision_analyze" not in tools and "text_to_speech" not in tools
