"""Skills on a chat platform, through the real gateway, the fake Bot API and the scripted
model: a skill limited to Telegram is in a Telegram session's index (and not in a terminal
one's), and ``/bundles NAME`` loads a bundle into the next message."""

from __future__ import annotations

from hermes_testkit import Reply

from .conftest import OWNER


def write_skill(home, name: str, extra: str = "") -> None:
    folder = home / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n# {name} steps\n"
    )


def system_prompt(request) -> str:
    return str(request.json["messages"][0]["content"])


def test_a_telegram_only_skill_is_offered_on_telegram_alone(
    running_gateway, telegram, openai_server, hermes
):
    write_skill(hermes.home, "telegram-only", "platforms: [telegram]\n")
    write_skill(hermes.home, "terminal-only", "platforms: [cli]\n")
    openai_server.queue(Reply.say("Hi from Telegram."))
    running_gateway()
    telegram.user_says(OWNER, "hello")
    telegram.wait_for_message(OWNER, "Hi from Telegram.")
    prompt = system_prompt(openai_server.requests[-1])
    assert "- telegram-only: The telegram-only skill." in prompt
    assert "terminal-only" not in prompt


def test_a_bundle_loaded_with_slash_bundles_goes_with_the_next_message(
    running_gateway, telegram, openai_server, hermes
):
    write_skill(hermes.home, "packing-list")
    write_skill(hermes.home, "visa-check")
    bundles = hermes.home / "skill-bundles"
    bundles.mkdir()
    (bundles / "trip.yaml").write_text(
        "name: trip\nskills: [packing-list, visa-check, not-installed]\n"
        "instruction: Do the visa first.\n"
    )
    openai_server.queue(Reply.say("Planned."))
    running_gateway()
    telegram.user_says(OWNER, "/bundles")
    listed = telegram.wait_for_message(OWNER, "trip: packing-list, visa-check, not-installed")
    assert listed is not None
    telegram.user_says(OWNER, "/bundles trip")
    telegram.wait_for_message(
        OWNER, "bundle trip (packing-list, visa-check) goes with your next message"
    )
    telegram.user_says(OWNER, "plan my trip to Japan")
    telegram.wait_for_message(OWNER, "Planned.")
    sent = str(openai_server.requests[-1].json["messages"])
    assert 'loaded the skill bundle "trip"' in sent
    assert "# packing-list steps" in sent and "# visa-check steps" in sent
    assert "Skills missing (not installed, skipped): not-installed" in sent
    assert "Bundle instruction: Do the visa first." in sent
    assert "plan my trip to Japan" in sent
