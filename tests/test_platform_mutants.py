"""The tests of the Discord, Slack, WhatsApp (both), SMS, BlueBubbles and webhook platforms, tested by mutation: each case breaks
one new part of the platform contract the way a hurried change might (a signature not
checked, an acknowledgement sent before the store, a press taken from anyone, a reply not
forwarded, strangers admitted), and the test meant to catch it must fail.

A mutant is a copy of the plugin's package with one change, put first on PYTHONPATH for a
pytest run of that one test; the installed package is left alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    what: str
    plugin: str  # the folder under plugins/
    file: str  # in the plugin's package
    old: str
    new: str
    caught_by: str  # a test node id, from the repository's root


MUTANTS = [
    Mutant(
        "webhook-signature-not-checked",
        "platform-webhook",
        "adapter.py",
        "if not signature_matches(route.secret, body, signature):",
        "if False:",
        "plugins/platform-webhook/tests/test_requests.py::test_only_signed_json_starts_a_turn",
    ),
    Mutant(
        "webhook-reply-not-forwarded",
        "platform-webhook",
        "adapter.py",
        "await self.host.forward(route.deliver_platform, route.deliver_chat, piece)",
        "pass",
        "plugins/platform-webhook/tests/test_requests.py::test_the_reply_goes_to_the_routes_chat",
    ),
    Mutant(
        "webhook-senders-not-vouched-for",
        "platform-webhook",
        "adapter.py",
        "verifies_senders = True",
        "verifies_senders = False",
        "tests/gateway/test_webhook_end_to_end.py::test_a_signed_request_is_answered_in_telegram",
    ),
    Mutant(
        "gateway-admits-everyone-as-verified",
        "gateway",
        "front_door.py",
        'return adapter is not None and getattr(adapter, "verifies_senders", False) is True',
        "return True",
        "tests/gateway/test_discord_end_to_end.py"
        "::test_a_dm_is_answered_and_a_stranger_gets_a_pairing_code",
    ),
    Mutant(
        "slack-acknowledges-before-storing",
        "platform-slack",
        "adapter.py",
        "            await self._handle(host, request.type, request.payload)\n"
        "            await client.send_socket_mode_response(",
        "            await client.send_socket_mode_response(",
        "plugins/platform-slack/tests/test_threads.py"
        "::test_an_event_not_stored_is_not_acknowledged_and_comes_again",
    ),
    Mutant(
        "slack-ids-a-message-by-its-event",
        "platform-slack",
        "reading.py",
        "        message_id=ts,",
        '        message_id=str(event.get("event_ts") or ts) + str(kind),',
        "tests/gateway/test_slack_end_to_end.py"
        "::test_a_mention_in_a_channel_is_answered_once_in_its_thread",
    ),
    Mutant(
        "whatsapp-signature-not-checked",
        "platform-whatsapp",
        "adapter.py",
        "if not signature_matches(self.settings.app_secret, body, signature):",
        "if False:",
        "plugins/platform-whatsapp/tests/test_webhook.py"
        "::test_unsigned_forged_or_stale_webhooks_get_401_and_hand_nothing_over",
    ),
    Mutant(
        "whatsapp-acknowledges-before-storing",
        "platform-whatsapp",
        "adapter.py",
        'return web.Response(status=500, text="not stored; send it again")',
        "return web.Response(status=200)",
        "plugins/platform-whatsapp/tests/test_webhook.py"
        "::test_a_message_not_stored_is_not_acknowledged_and_comes_again",
    ),
    Mutant(
        "sms-signature-not-checked",
        "platform-sms",
        "adapter.py",
        "        if not self._valid(request, form):",
        "        if False:",
        "plugins/platform-sms/tests/test_sms.py"
        "::test_unsigned_forged_or_stale_webhooks_get_401_and_hand_nothing_over",
    ),
    Mutant(
        "sms-reads-nothing-back",
        "platform-sms",
        "adapter.py",
        "                answer = await self._take(host, form)\n",
        "                answer = None\n",
        "tests/gateway/test_sms_end_to_end.py"
        "::test_a_text_sent_while_the_gateway_was_down_is_answered_once",
    ),
    Mutant(
        "sms-stop-not-honoured",
        "platform-sms",
        "keywords.py",
        '    if word in STOP:\n        return "stop"',
        "    pass",
        "plugins/platform-sms/tests/test_sms.py"
        "::test_stop_start_and_help_are_honoured_without_the_model",
    ),
    Mutant(
        "bluebubbles-webhook-token-not-checked",
        "platform-bluebubbles",
        "adapter.py",
        "        if not hmac.compare_digest(token.encode(), self.webhook_token.encode()):",
        "        if False:",
        "plugins/platform-bluebubbles/tests/test_bluebubbles.py"
        "::test_a_forged_or_tokenless_webhook_adds_nothing",
    ),
    Mutant(
        "bluebubbles-reads-from-the-start-of-history",
        "platform-bluebubbles",
        "adapter.py",
        "                since = int(self.positions.get(EVERYTHING) or 0)",
        "                since = 0",
        "plugins/platform-bluebubbles/tests/test_bluebubbles.py"
        "::test_what_came_while_the_gateway_was_down_is_answered_once_in_order",
    ),
    Mutant(
        "bluebubbles-a-failed-hand-over-moves-on",
        "platform-bluebubbles",
        "adapter.py",
        "                    self.positions.failed(EVERYTHING, row)\n                    return False",
        "                    pass",
        "plugins/platform-bluebubbles/tests/test_bluebubbles.py"
        "::test_a_message_stored_late_is_read_in_row_order_and_never_skipped",
    ),
    Mutant(
        "bluebubbles-tapback-answers-any-question",
        "platform-bluebubbles",
        "adapter.py",
        "        if meaning is None:\n            return\n        choice",
        "        meaning = choices[0], choices[-1]\n        choice",
        "plugins/platform-bluebubbles/tests/test_bluebubbles.py"
        "::test_a_like_tapback_allows_and_a_dislike_denies_an_approval",
    ),
    Mutant(
        "whatsapp-bridge-reads-files-anywhere",
        "platform-whatsapp-bridge",
        "adapter.py",
        "        if any(path.is_relative_to(d.resolve()) for d in self.settings.media_dirs):",
        "        if True:",
        "plugins/platform-whatsapp-bridge/tests/test_bridge.py"
        "::test_a_file_outside_the_bridges_folders_is_not_read",
    ),
    Mutant(
        "whatsapp-bridge-hand-over-given-up-at-once",
        "platform-whatsapp-bridge",
        "adapter.py",
        "                if time.monotonic() - began < GIVE_UP_SECONDS:",
        "                if False:",
        "plugins/platform-whatsapp-bridge/tests/test_bridge.py"
        "::test_a_hand_over_that_fails_is_tried_again_in_place",
    ),
    Mutant(
        "whatsapp-bridge-answers-all-group-chatter",
        "platform-whatsapp-bridge",
        "reading.py",
        "        addressed = mentioned or replied or wake or not require_mention",
        "        addressed = True",
        "plugins/platform-whatsapp-bridge/tests/test_bridge.py"
        "::test_a_group_answers_a_mention_or_a_reply_to_the_bot",
    ),
    Mutant(
        "discord-takes-anyones-press",
        "platform-discord",
        "adapter.py",
        "            if host.question_open(request_id):",
        "            if False:",
        "tests/gateway/test_discord_end_to_end.py"
        "::test_an_approval_by_button_and_a_strangers_press_is_refused",
    ),
    Mutant(
        "discord-answers-in-the-channel",
        "platform-discord",
        "reading.py",
        "message.id if in_channel and addressed else None",
        "None",
        "tests/gateway/test_discord_end_to_end.py"
        "::test_a_mention_in_a_channel_is_answered_in_its_thread",
    ),
]


def _mutated(mutant: Mutant, into: Path) -> Path:
    """A copy of the plugin's package with the mutation; returns the folder for PYTHONPATH."""
    (package,) = (REPO / "plugins" / mutant.plugin / "src").glob("hermes_plugin_*")
    copy = into / "src" / package.name
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / mutant.file
    text = target.read_text(encoding="utf-8")
    assert text.count(mutant.old) == 1, f"{mutant.what}: the code changed; update the mutant"
    target.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return into / "src"


# Not named "mutant": the SDK's suite-mutation test collects every test with that parameter.
@pytest.mark.parametrize("broken", MUTANTS, ids=[m.what for m in MUTANTS])
def test_each_mutant_is_caught(broken: Mutant, tmp_path: Path) -> None:
    mutant = broken
    source = _mutated(mutant, tmp_path)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(source), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", mutant.caught_by],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, f"{mutant.what} was not caught:\n{done.stdout[-2000:]}"
    assert "1 failed" in done.stdout, done.stdout[-2000:]
