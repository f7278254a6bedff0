"""Issue 75: the web UI as the dashboard, driven in Debian's headless Chromium by Playwright
as a person drives it (menus, forms, buttons; never the HTTP API), at 390 and 1280 px.

One real ``hermes gateway run`` hosts the web UI beside Telegram (the fake Bot API) and the
scheduler, on a scripted model, with a skills hub on loopback. Each page's test changes
something and checks it where it lands: ``hermes config get`` agrees with a setting, a
scheduled job runs in the gateway's scheduler, a skill lands in the home, a stranger
approved on the page is answered on Telegram, a log line appears live. The access rules
are tried from a page of another site. Every request any page makes is watched: none may
leave the machine. Screenshots of each page at both widths go to HERMES_SCREENSHOTS
(docs/user/images/dashboard when regenerating them), else .cache/screenshots."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hermes_plugin_platform_telegram.testing import DEFAULT_TOKEN, FakeTelegram
from hermes_plugin_skills_hub.testing import StaticSite, skill_md

from hermes_commons.dotenv import read_dotenv
from hermes_testkit import Reply, ScriptedOpenAIServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEY = "dashboard-browser-key-8c1f3e5a"
OWNER = 42
STRANGER = 777
ANSWER = "Scripted answer from the model."
WIDTHS = (390, 1280)
FAULT_SERVER = Path(__file__).parents[2] / "plugins" / "mcp" / "tests" / "fault_server.py"
SCREENSHOTS = Path(
    os.environ.get("HERMES_SCREENSHOTS") or Path(__file__).parents[2] / ".cache/screenshots"
)

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install chromium)"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(condition: Callable[[], object], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.05)


class Dashboard:
    """``hermes gateway run`` hosting the web UI, in a process of its own."""

    def __init__(
        self, home: Path, model: ScriptedOpenAIServer, telegram: FakeTelegram, port: int
    ) -> None:
        self.home = home
        self.model = model
        self.telegram = telegram
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home.parent / "gateway.log"
        self._output = self.log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_kernel.cli.main", "gateway", "run"],
            env={**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"},
            cwd=home.parent,
            stdout=self._output,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until(self._serving, timeout=90)
        except TimeoutError:
            self.stop()
            raise AssertionError(f"the gateway did not serve: {self.log.read_text()}") from None

    def _serving(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the gateway ended: {self.log.read_text()}")
        polled = any(method == "getUpdates" for method, _ in list(self.telegram.calls))
        try:
            up = httpx.get(self.url + "/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            up = False
        return polled and up

    def hermes(self, *args: str) -> str:
        """A ``hermes`` command on the same home, as the user would type it."""
        done = subprocess.run(
            [sys.executable, "-m", "hermes_kernel.cli.main", *args],
            env={**os.environ, "HERMES_HOME": str(self.home)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._output.close()


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=Reply.say(ANSWER)) as server:
        yield server


@pytest.fixture(scope="module")
def hub() -> Iterator[StaticSite]:
    site = StaticSite()
    site.files["/.well-known/skills/index.json"] = (
        b'{"skills": [{"name": "brand-voice", "description": "Write in Acme\'s brand voice.",'
        b' "files": ["SKILL.md", "references/tone.md"]}]}'
    )
    site.files["/.well-known/skills/brand-voice/SKILL.md"] = skill_md(
        "brand-voice", "Write in Acme's brand voice."
    )
    site.files["/.well-known/skills/brand-voice/references/tone.md"] = b"Warm, short.\n"
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def dashboard(
    tmp_path_factory: pytest.TempPathFactory, model: ScriptedOpenAIServer, hub: StaticSite
) -> Iterator[Dashboard]:
    root = tmp_path_factory.mktemp("dashboard")
    home = root / "home"
    home.mkdir()
    with FakeTelegram() as telegram:
        port = _free_port()
        (home / "config.yaml").write_text(
            "# The dashboard's test home: comments like this one stay through every change.\n"
            f"model:\n  base_url: {model.base_url}\n  default: test-model\n"
            "agent:\n  retries: 1  # few retries: the model is on loopback\n"
            "learning:\n  review: false\n  nudge_every_turns: 0\n"
            "gateway:\n  stream_interval_seconds: 0.1\n  drain_seconds: 5\n"
            "cron:\n  tick_seconds: 1\n"
            "kanban:\n  tick_seconds: 0.5\n"
            f"web_ui:\n  enabled: true\n  port: {port}\n"
            "skills_hub:\n"
            f"  github_api: {hub.url}\n  github_raw: {hub.url}\n  clawhub_api: {hub.url}\n"
            f"  skills_sh: {hub.url}\n  well_known: [{hub.url}]\n"
            "  allow_private_hosts: ['127.0.0.1']\n"
            "platforms:\n  telegram:\n"
            f"    api_url: {telegram.api_url}\n    poll_timeout_seconds: 1\n"
            f"    allowed_users: ['{OWNER}']\n",
            encoding="utf-8",
        )
        (home / ".env").write_text(
            f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\nWEB_UI_KEY={KEY}\n", encoding="utf-8"
        )
        (home / ".env").chmod(0o600)
        running = Dashboard(home, model, telegram, port)
        yield running
        running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                # The attacker's DNS: these names lead to this machine.
                "--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebound.test 127.0.0.1",
            ],
        )
        yield chromium
        chromium.close()


OUTSIDE: list[str] = []
"""Every request a dashboard page made to anything but this machine (none may be)."""


def _watch(route: Any) -> None:
    host = urlsplit(route.request.url).hostname or ""
    if host not in {"127.0.0.1", "localhost"}:
        OUTSIDE.append(route.request.url)
        route.abort()
    else:
        route.continue_()


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def page(request: pytest.FixtureRequest, browser: Any, dashboard: Dashboard) -> Iterator[Any]:
    """A logged-in page at one width, its every request watched."""
    width = int(request.param)
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.route("**/*", _watch)
    tab = context.new_page()
    tab.width = width
    tab.on("dialog", lambda dialog: dialog.accept())  # the confirm() of a risky button
    tab.goto(dashboard.url + "/chat")
    tab.fill('input[name="key"]', KEY)
    tab.click("form.login button")
    tab.wait_for_url(re.compile(r"/chat$"))
    yield tab
    context.close()
    assert not OUTSIDE, f"a page fetched from outside: {OUTSIDE}"


def go(page: Any, title: str) -> None:
    """Open a page from the menu, as a person does (behind "Menu" on a phone)."""
    if page.width < 640:
        page.click("label.menu-button")
    page.click(f"nav .links a:text-is('{title}')")
    page.wait_for_selector(f"h1:text-is('{title}')")


def shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"dashboard-{name}-{page.width}.jpg"
    page.screenshot(path=str(target), type="jpeg", quality=80)


def flash(page: Any) -> str:
    return str(page.inner_text(".flash"))


def section(page: Any, title: str) -> Any:
    heading = page.locator("h2").filter(has_text=re.compile(f"^{re.escape(title)}$"))
    return page.locator("section.panel-section", has=heading)


# --- Settings -------------------------------------------------------------------------------


def test_a_setting_changed_on_the_page_is_what_hermes_config_get_says(
    page: Any, dashboard: Dashboard
) -> None:
    go(page, "Settings")
    page.click("tr:has(td:text-is('agent')) a:text('Edit')")
    page.wait_for_selector("h2:text-is('agent (kernel)')")
    retries = "4" if page.width < 640 else "6"  # each run its own value
    page.fill('input[name="agent.retries"]', "not a number")
    page.click("form:has(input[name='agent.retries']) button[type=submit]")
    assert "agent.retries" in flash(page) and "nothing was changed" in flash(page)
    assert page.input_value('input[name="agent.retries"]') == "not a number"  # kept
    page.fill('input[name="agent.retries"]', retries)
    page.click("form:has(input[name='agent.retries']) button[type=submit]")
    page.wait_for_selector("h2:text-is('The change to config.yaml')")
    diff = page.inner_text(".diff")
    assert f"+  retries: {retries}" in diff
    shot(page, "settings-diff")
    assert dashboard.hermes("config", "get", "agent.retries") != retries  # not before Save
    page.click("button:text-is('Save')")
    assert "saved agent.retries" in flash(page)
    assert dashboard.hermes("config", "get", "agent.retries") == retries
    text = (dashboard.home / "config.yaml").read_text()
    assert "# The dashboard's test home" in text and "# few retries" in text  # comments kept

    # A misspelt key is refused with the CLI's did-you-mean.
    form = section(page, "Another key")
    form.locator('input[name="key"]').fill("agent.retires")
    form.locator('textarea[name="value"]').fill("2")
    form.locator("button[type=submit]").click()
    assert "did you mean" in flash(page) or "rename it to 'retries'" in flash(page)

    # A secret is written to .env and never shown back.
    secret = f"sk-dashboard-secret-{page.width}-0123456789abcdef"
    form = section(page, "Secrets (.env)")
    form.locator('input[name="name"]').fill("EXAMPLE_API_KEY")
    form.locator('input[name="value"]').fill(secret)
    form.locator("button[type=submit]").click()
    assert "EXAMPLE_API_KEY saved" in flash(page)
    assert secret not in page.content()
    assert secret[-4:] in page.inner_text("section.panel-section:has(h2:text-is('Secrets (.env)'))")
    assert read_dotenv(dashboard.home / ".env")["EXAMPLE_API_KEY"] == secret
    assert (dashboard.home / ".env").stat().st_mode & 0o777 == 0o600
    page.goto(dashboard.url + "/panels/settings")
    shot(page, "settings")


# --- Scheduled jobs --------------------------------------------------------------------------


def test_a_job_created_on_the_page_runs_in_the_gateway(page: Any, dashboard: Dashboard) -> None:
    go(page, "Scheduled jobs")
    assert "running" in page.inner_text("section.panel-section:has(h2:text-is('Scheduler'))")
    name = f"weekday brief {page.width}"
    prompt = f"Brief me for the week ({page.width})"
    form = section(page, "New job")
    form.locator('input[name="name"]').fill(name)
    form.locator('input[name="schedule"]').fill("30 9 * * 1-5")
    form.locator('textarea[name="prompt"]').fill(prompt)
    form.locator('input[name="timezone"]').fill("Europe/Paris")
    form.locator("button[type=submit]").click()
    page.wait_for_selector("h2:text-is('The schedule')")
    facts = page.inner_text("dl.facts")
    assert "09:30, Monday through Friday" in facts and "Europe/Paris" in facts
    instants = re.findall(r"#\d\s+(\w{3}) \d{4}-\d{2}-\d{2} 09:30", facts)
    assert len(instants) == 5 and not {"Sat", "Sun"} & set(instants)
    shot(page, "cron-check")
    page.click("button:text-is('Create the job')")
    assert "created job" in flash(page)
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    assert "active" in row.inner_text()

    before = len(dashboard.model.requests)
    row.locator("button:text-is('Run now')").click()
    assert "asked it to run" in flash(page)  # the gateway's scheduler holds the lock
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    row.locator("a:text-is('Open')").click()
    page.wait_for_selector("h2:text-matches('Runs of')")

    def completed() -> bool:
        time.sleep(0.5)  # a look every half second, not a flood
        page.reload()
        return "completed" in page.inner_text(
            "section.panel-section:has(h2:text-matches('Runs of'))"
        )

    wait_until(completed, timeout=60)
    asked = [
        m["content"]
        for r in dashboard.model.requests[before:]
        for m in r.json["messages"]
        if m["role"] == "user"
    ]
    assert any(prompt in str(text) for text in asked)
    runs = section(page, f"Runs of {name!r}")
    assert "manual" in runs.inner_text()
    runs.locator("summary:text-is('details')").first.click()
    assert ANSWER in runs.inner_text()
    shot(page, "cron")

    # Paused from its row, then removed.
    page.goto(dashboard.url + "/panels/cron")
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    row.locator("button:text-is('Pause')").click()
    assert "paused" in flash(page)
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    assert "paused" in row.inner_text()
    row.locator("button:text-is('Remove')").click()
    assert "removed job" in flash(page)
    assert page.locator(f"td:text-is('{name}')").count() == 0


# --- Skills ---------------------------------------------------------------------------------


def test_a_skill_is_installed_from_a_hub_on_loopback(page: Any, dashboard: Dashboard) -> None:
    installed = dashboard.home / "skills-hub" / "installed" / "brand-voice"
    if installed.exists():  # the other width's run installed it: take it away first
        go(page, "Skill hub")
        row = page.locator("tr", has=page.locator("td:text-is('brand-voice')"))
        row.locator("button:text-is('Uninstall')").click()
        assert "uninstalled brand-voice" in flash(page)
    else:
        go(page, "Skill hub")
    page.fill('input[name="q"]', "brand")
    page.click("form:has(input[name='q']) button[type=submit]")
    page.wait_for_selector("h2:text-matches('Found for')")
    row = page.locator("tr", has=page.locator("td:text-is('brand-voice')"))
    row.locator("button:text-is('Install…')").click()
    page.wait_for_selector("h2:text-matches('Install ')")
    assert "brand-voice" in page.inner_text("pre")
    assert not installed.exists()  # nothing before the button
    shot(page, "skill-hub-check")
    page.click("button:text-is('Install')")
    assert "installed brand-voice" in flash(page)
    assert (installed / "SKILL.md").is_file()
    assert (installed / "references" / "tone.md").read_text() == "Warm, short.\n"
    assert "brand-voice" in page.inner_text(
        "section.panel-section:has(h2:text-is('Installed from the hub'))"
    )
    shot(page, "skill-hub")
    go(page, "Skills")
    row = page.locator("tr", has=page.locator("td:text-is('brand-voice')"))
    assert "hub" in row.inner_text()
    shot(page, "skills")


# --- Gateway --------------------------------------------------------------------------------


def test_a_stranger_approved_on_the_page_is_answered_on_telegram(
    page: Any, dashboard: Dashboard
) -> None:
    telegram = dashboard.telegram
    stranger = STRANGER + page.width  # each run its own stranger
    telegram.user_says(stranger, "hello? who is this?", username=f"visitor{page.width}")
    code_message = telegram.wait_for_message(stranger, "pairing")
    shown_code = re.search(r"hermes pairing approve telegram ([A-Z0-9-]+)", code_message.text)
    assert shown_code is not None, code_message.text
    go(page, "Gateway")
    assert "running" in page.inner_text("section.panel-section:has(h2:text-is('Gateway'))")

    def telegram_running() -> bool:  # the gateway says so every few seconds
        page.reload()
        platforms = section(page, "Platforms")
        row = platforms.locator("tr", has=page.locator("td:text-is('telegram')"))
        return row.count() == 1 and "running" in row.inner_text()

    wait_until(telegram_running, 30)
    request_row = page.locator("tr", has=page.locator(f"td:text-is('{stranger}')"))
    assert request_row.count() == 1
    listed_code = request_row.locator("td").nth(3).inner_text()
    assert listed_code.replace("-", "") == shown_code.group(1).replace("-", "")
    shot(page, "gateway-request")
    request_row.locator("button:text-is('Approve')").click()
    assert f"approved {stranger} on telegram" in flash(page)
    before = len(telegram.sent(stranger))
    telegram.user_says(stranger, "now may I ask something?")
    wait_until(lambda: any(ANSWER in m.text for m in telegram.sent(stranger)[before:]), 60)
    page.reload()
    paired = page.locator("tr", has=page.locator(f"td:text-is('{stranger}')"))
    assert "Revoke" in paired.inner_text()

    # The allowlist gains a user from the form, and loses it from the row.
    form = section(page, "Allowlists").locator("form.panel-form")
    form.get_by_label("User id").fill(str(5000 + page.width))
    form.locator("button[type=submit]").click()
    assert f"allowed {5000 + page.width} on telegram" in flash(page)
    assert str(5000 + page.width) in dashboard.hermes("config", "get", "platforms.telegram")
    ledger = page.inner_text("section.panel-section:has(h2:text-is('Delivery ledger'))")
    assert "telegram:" in ledger and "delivered" in ledger
    shot(page, "gateway")
    row = page.locator("tr", has=page.locator(f"td:text-is('{5000 + page.width}')"))
    row.locator("button:text-is('Remove')").click()
    assert "removed from the allowlist" in flash(page)


# --- Logs -----------------------------------------------------------------------------------


def test_a_log_line_appears_while_the_page_watches(
    page: Any, dashboard: Dashboard, browser: Any
) -> None:
    go(page, "Logs")
    page.select_option('select[name="level"]', "warning")
    page.wait_for_selector(".tail-state:text-matches('live')")
    marker = f"wrong-key-{page.width}"
    stranger = browser.new_context()
    other = stranger.new_page()
    other.goto(dashboard.url + "/login")
    other.fill('input[name="key"]', marker)
    other.click("form.login button")
    stranger.close()
    page.wait_for_selector("pre.tail .line.warning:has-text('wrong key')", timeout=15000)
    assert marker not in page.inner_text("pre.tail")  # the key typed is never logged
    assert "INFO" not in page.inner_text("pre.tail")  # the level filter holds
    page.fill('input[name="component"]', "hermes.cron")
    page.press('input[name="component"]', "Tab")  # a change: the tail starts again
    wait_until(lambda: "wrong key" not in page.inner_text("pre.tail"), 10)
    shot(page, "logs")


# --- MCP servers ----------------------------------------------------------------------------


def test_an_mcp_server_is_added_tested_and_removed(page: Any, dashboard: Dashboard) -> None:
    name = f"faults{page.width}"
    go(page, "MCP servers")
    form = section(page, "Add a server")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Command (a stdio server)").fill(sys.executable)
    form.get_by_label("Arguments, one per line").fill(str(FAULT_SERVER))
    form.get_by_label("Environment, KEY=VALUE per line").fill("not a pair")
    form.locator("button[type=submit]").click()
    assert "KEY=VALUE" in flash(page)
    assert page.get_by_label("Name").input_value() == name  # what was typed stays
    form = section(page, "Add a server")
    form.get_by_label("Environment, KEY=VALUE per line").fill("FAULTS_MODE=quiet")
    form.locator("button[type=submit]").click()
    assert f"added MCP server {name!r}" in flash(page)
    assert "fault_server.py" in dashboard.hermes("config", "get", f"mcp_servers.{name}")
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    row.locator("button:text-is('Test')").click()
    said = flash(page)
    assert re.search(r"connected in [\d.]+ s, \d+ tools", said) and "echo" in said
    shot(page, "mcp")
    row = page.locator("tr", has=page.locator(f"td:text-is('{name}')"))
    row.locator("button:text-is('Remove')").click()
    assert f"removed MCP server {name!r}" in flash(page)
    assert name not in dashboard.hermes("config", "show")


# --- Board ---------------------------------------------------------------------------------


def test_a_task_added_on_the_board_is_worked_on_and_one_is_blocked_and_done(
    page: Any, dashboard: Dashboard
) -> None:
    worked, held = f"Tidy the inbox at {page.width}px", f"Review the lease at {page.width}px"
    go(page, "Board")
    form = section(page, "Add a task")
    form.get_by_label("Title").fill(worked)
    form.locator("button[type=submit]").click()
    assert "added t_" in flash(page)
    form = section(page, "Add a task")
    form.get_by_label("Title").fill(held)
    form.get_by_label("Profile (empty: any worker)").fill("reviewer")  # another home's
    form.locator("button[type=submit]").click()
    row = page.locator("tr", has=page.locator(f"td:text-is('{held}')"))
    row.locator("button:text-is('Block')").click()
    assert "is blocked" in flash(page)
    shot(page, "board")
    task_id = flash(page).split()[0]
    assert json.loads(dashboard.hermes("kanban", "show", task_id, "--json"))["task"]["status"] == (
        "blocked"
    )
    row = page.locator("tr", has=page.locator(f"td:text-is('{held}')"))
    row.locator("button:text-is('Unblock')").click()
    assert f"{task_id} is ready" in flash(page)
    row = page.locator("tr", has=page.locator(f"td:text-is('{held}')"))
    row.locator("button:text-is('Done')").click()
    assert f"{task_id} is done" in flash(page)

    def worked_is_done() -> bool:  # the gateway's dispatcher started a worker for it
        page.reload()
        return (
            page.locator("section.panel-section", has_text=worked)
            .filter(has=page.locator("h2", has_text="done"))
            .count()
            == 1
        )

    deadline = time.monotonic() + 60
    while not worked_is_done():
        assert time.monotonic() < deadline, "the dispatcher did not finish the task"
        time.sleep(0.5)
    listed = json.loads(dashboard.hermes("kanban", "list", "--json", "--status", "done"))
    (found,) = [task for task in listed if task["title"] == worked]
    assert found["result"] == ANSWER and found["last_profile"] == "default"


# --- Models, insights, profiles, plugins ---------------------------------------------------


def test_models_insights_profiles_and_plugins(page: Any, dashboard: Dashboard) -> None:
    go(page, "Models")
    in_use = page.inner_text("section.panel-section:has(h2:text-is('In use'))")
    assert "test-model" in in_use
    ladder = page.inner_text("section.panel-section:has(h2:text-matches('Provider ladder'))")
    assert "match" in ladder
    page.click("button:text-is('Send a test request')")
    assert "answered in" in flash(page) and ANSWER in flash(page)
    shot(page, "models")

    go(page, "Insights")
    totals = page.inner_text("section.panel-section:has(h2:text-is('Totals'))")
    assert "model calls" in totals
    assert "test-model" in page.inner_text("section.panel-section:has(h2:text-is('By model'))")
    shot(page, "insights")

    go(page, "Profiles")
    name = f"work{page.width}"
    form = section(page, "New profile")
    form.get_by_label("Name").fill(name)
    form.locator('input[name="clone"][type=checkbox]').check()
    form.locator("button[type=submit]").click()
    assert f"created profile {name}" in flash(page)
    assert (dashboard.home / "profiles" / name / "config.yaml").is_file()
    shot(page, "profiles")

    go(page, "Plugins")
    row = page.locator("tr", has=page.locator("td:text-is('voice')"))
    row.locator("button:text-is('Disable')").click()
    assert "voice: disabled" in page.inner_text(".flash")
    assert "voice" in dashboard.hermes("config", "get", "plugins.disabled")
    row = page.locator("tr", has=page.locator("td:text-is('voice')"))
    row.locator("button").click()  # still loaded in this process: enable undoes it
    assert "voice: enabled" in page.inner_text(".flash")
    shot(page, "plugins")


# --- Access --------------------------------------------------------------------------------


class AttackerSite:
    """A page on attacker.test that posts a form to the dashboard as soon as it loads."""

    def __init__(self, target: str) -> None:
        page = (
            "<!doctype html><title>prize</title><body>"
            f'<form id="f" method="post" action="{target}/panels/settings/act">'
            '<input name="_action" value="save"><input name="set:agent.retries" value="99">'
            "</form><script>document.getElementById('f').submit()</script>"
        ).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_a_cross_site_post_and_a_foreign_host_are_refused(page: Any, dashboard: Dashboard) -> None:
    before = dashboard.hermes("config", "get", "agent.retries")
    attacker = AttackerSite(dashboard.url)
    try:
        refused: list[int] = []
        page.on(
            "response",
            lambda response: refused.append(response.status) if "/act" in response.url else None,
        )
        page.context.unroute("**/*")  # this test visits another "site" on purpose
        page.goto(f"http://attacker.test:{attacker.port}/")
        wait_until(lambda: refused, 15)
        assert refused[0] in (401, 403)
        assert dashboard.hermes("config", "get", "agent.retries") == before
        # Logged in, but the POST carries no CSRF token: refused too.
        page.goto(dashboard.url + "/panels/settings")
        answer = page.request.post(
            dashboard.url + "/panels/settings/act",
            form={"_action": "save", "set:agent.retries": "99"},
        )
        assert answer.status == 403 and "CSRF" in answer.text()
        assert dashboard.hermes("config", "get", "agent.retries") == before
        # A name rebound to this machine reaches nothing.
        response = page.goto(f"http://rebound.test:{dashboard.port}/panels/settings")
        assert response is not None and response.status == 421
    finally:
        attacker.close()


def test_the_first_page_is_small_and_nothing_comes_from_outside(
    browser: Any, dashboard: Dashboard
) -> None:
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.route("**/*", _watch)
        tab = context.new_page()
        sizes: list[int] = []

        def count(response: Any, sizes: list[int] = sizes) -> None:
            sizes.append(len(response.body()))

        tab.on("response", count)
        tab.goto(dashboard.url + "/")  # the login page, with its style sheet and script
        tab.wait_for_load_state("networkidle")
        first = sum(sizes)
        tab.fill('input[name="key"]', KEY)
        tab.click("form.login button")
        tab.wait_for_url(re.compile(r"/chat$"))
        tab.wait_for_load_state("networkidle")
        assert first < 100_000, f"the first page is {first:,} bytes"
        assert sum(sizes) < 200_000, f"the login and the chat are {sum(sizes):,} bytes"
        context.close()
    assert not OUTSIDE
