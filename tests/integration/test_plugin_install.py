"""``hermes plugins install | uninstall | upgrade`` in throwaway venvs, with real installers.

Each test builds its own venv (the kernel, the SDK and the plugin manager, whose commands these
are) and changes it through the hermes command inside it, exactly as a user would;
``uv pip freeze`` is the judge of "unchanged".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .conftest import REPO, Run, Venv, build_venv, uv_command

pytestmark = pytest.mark.venv

FIXTURES = REPO / "tests" / "fixtures"
PLUGIN_MANAGER = REPO / "plugins" / "plugin-manager"
DASHBOARD_PLUGINS = ("web-ui", "store-sqlite", "providers", "provider-openai")
"""What ``hermes web`` needs in a venv: a store, a model, the web UI."""
GOOD_PROVIDES = "command.hello, config.good, hook.hermes_pre_tool_call, tool.echo, toolset.fixture"


def _build(project: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [uv_command(), "build", "--quiet", "--wheel", "--out-dir", str(out), str(project)],
        check=True,
    )
    return next(out.glob(project.name.replace("-", "_").join(("*", "*.whl"))), out)


@pytest.fixture(scope="session")
def fixture_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of the good and legacy fixture plugins, in one --find-links folder."""
    out = tmp_path_factory.mktemp("fixture-wheels")
    for name in ("good", "legacy"):
        _build(FIXTURES / "plugins" / name, out)
    return out


@pytest.fixture(scope="session")
def workspace_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every workspace package built as a wheel: what a release would publish."""
    out = tmp_path_factory.mktemp("workspace-wheels")
    subprocess.run(
        [uv_command(), "build", "--quiet", "--all-packages", "--wheel", "--out-dir", str(out)],
        cwd=REPO,
        check=True,
    )
    return out


@pytest.fixture
def venv(tmp_path: Path) -> Venv:
    return Venv(build_venv(tmp_path / "venv", [PLUGIN_MANAGER]))


@pytest.fixture
def tools() -> dict[str, str]:
    """The environment hermes runs in: uv on PATH, nothing fetched from the network."""
    uv_dir = str(Path(uv_command()).parent)
    return {"PATH": f"{uv_dir}{os.pathsep}{os.environ['PATH']}", "UV_OFFLINE": "1"}


def freeze(venv: Venv) -> str:
    python = str(venv.path / "bin" / "python")
    done = subprocess.run(
        [uv_command(), "pip", "freeze", "--python", python],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def listed(venv: Venv, home: Path, tools: dict[str, str], *flags: str) -> dict[str, dict]:
    run = venv.hermes("plugins", "list", "--json", *flags, home=home, env=tools)
    assert run.code == 0, run.err
    return {row["name"]: row for row in json.loads(run.out)}


def ok(run: Run) -> Run:
    assert run.code == 0, f"exit {run.code}\nout: {run.out}\nerr: {run.err}"
    return run


def test_a_wheel_is_shown_installed_disabled_verified_enabled_and_uninstalled(
    venv, home, tools, fixture_wheels
):
    before = freeze(venv)
    wheel = next(fixture_wheels.glob("hermes_plugin_good-*.whl"))
    run = ok(venv.hermes("plugins", "install", str(wheel), "--yes", home=home, env=tools))
    assert f"provides:  {GOOD_PROVIDES}" in run.out
    assert "packages:   + hermes-plugin-good\n" in run.out
    assert "good: installed and verified" in run.out
    assert "enable it with: hermes plugins enable good" in run.out
    assert listed(venv, home, tools)["good"]["state"] == "disabled", "installed, not enabled"
    assert "good" in yaml.safe_load((home / "config.yaml").read_text())["plugins"]["disabled"]

    ok(venv.hermes("plugins", "enable", "good", home=home, env=tools))
    assert listed(venv, home, tools, "--verify")["good"]["state"] == "loaded"
    ok(venv.hermes("plugins", "disable", "good", home=home, env=tools))
    assert listed(venv, home, tools)["good"]["state"] == "disabled"

    run = ok(venv.hermes("plugins", "uninstall", "good", "--yes", home=home, env=tools))
    assert "hermes-plugin-good: uninstalled" in run.out
    assert "good" not in listed(venv, home, tools)
    assert freeze(venv) == before


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_git_repository_installs_at_a_commit_and_upgrade_follows_its_branch(
    venv, home, tools, tmp_path
):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "plugins" / "good", repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first")
    first = _git(repo, "rev-parse", "HEAD")

    run = ok(
        venv.hermes(
            "plugins",
            "install",
            f"git+file://{repo}@main",
            "--yes",
            "--enable",
            home=home,
            env=tools,
        )
    )
    assert f"git commit {first} (main)" in run.out
    assert f"hermes-plugin-good @ git+file://{repo}@{first}" in freeze(venv)
    assert listed(venv, home, tools, "--verify")["good"]["state"] == "loaded"

    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.1.1"'))
    _git(repo, "commit", "-qam", "second")
    second = _git(repo, "rev-parse", "HEAD")
    run = ok(venv.hermes("plugins", "upgrade", "good", "--yes", home=home, env=tools))
    assert "hermes-plugin-good 0.1.1" in run.out
    assert f"hermes-plugin-good @ git+file://{repo}@{second}" in freeze(venv)
    row = listed(venv, home, tools, "--verify")["good"]
    assert (row["version"], row["state"]) == ("0.1.1", "loaded"), "still enabled after upgrade"
    # At its branch's head, it is up to date. (Not --all: the plugin manager, installed here
    # from its folder, would be reinstalled from it.)
    assert (
        "everything is up to date"
        in ok(venv.hermes("plugins", "upgrade", "good", "--yes", home=home, env=tools)).out
    )


def test_a_failed_verification_leaves_the_venv_and_config_exactly_as_they_were(
    venv, home, tools, fixture_wheels
):
    ok(
        venv.hermes(
            "plugins", "install", str(FIXTURES / "plugins" / "good"), "--yes", "--enable",
            home=home, env=tools,
        )
    )  # fmt: skip
    before, config = freeze(venv), (home / "config.yaml").read_bytes()
    run = venv.hermes(
        "plugins", "install", str(FIXTURES / "install" / "good-broken"), "--yes",
        "--find-links", str(fixture_wheels), home=home, env=tools,
    )  # fmt: skip
    assert run.code == 1
    assert "+ hermes-plugin-legacy" in run.out, "the preview named the new dependency"
    assert (
        "verification failed: plugin 'good': RuntimeError: this release of good is broken at import"
        in run.err
    )
    assert "rolled back: the environment is as it was" in run.err
    assert freeze(venv) == before, "legacy removed, good 0.1.0 put back from its folder"
    assert (home / "config.yaml").read_bytes() == config
    assert listed(venv, home, tools, "--verify")["good"]["state"] == "loaded"


def test_something_that_is_not_a_plugin_is_refused_and_rolled_back(venv, home, tools, tmp_path):
    project = tmp_path / "not-a-plugin"
    (project / "src" / "not_a_plugin").mkdir(parents=True)
    (project / "src" / "not_a_plugin" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "not-a-plugin"\nversion = "1.0"\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["src/not_a_plugin"]\n'
    )
    before = freeze(venv)
    run = venv.hermes("plugins", "install", str(project), "--yes", home=home, env=tools)
    assert run.code == 1
    assert "it installs no Hermes plugin" in run.err
    assert freeze(venv) == before


def _catalog(tmp_path: Path, wheel: Path, **changes: object) -> Path:
    from hermes_plugin_plugin_manager.wheels import file_sha256

    folder = tmp_path / "catalog"
    (folder / "entries").mkdir(parents=True, exist_ok=True)
    entry = {
        "name": "good",
        "package": "hermes-plugin-good",
        "source": {"pypi": "hermes-plugin-good", "version": "0.1.0", "sha256": file_sha256(wheel)},
        "kinds": ["command", "config", "hook", "tool", "toolset"],
        "provides": GOOD_PROVIDES.split(", "),
        "description": "A fixture plugin.",
        "homepage": "https://example.org/good",
        "maintainer": "Test <t@example.org>",
        "tier": "community",
        "requires_hermes": ">=0.1,<0.2",
        "requires_sdk": ">=0.1,<0.2",
        **changes,
    }
    (folder / "entries" / "good.yaml").write_text(yaml.safe_dump(entry))
    (folder / "removed.yaml").write_text(
        yaml.safe_dump([{"name": "legacy", "reason": "it lost its manifest; use good instead"}])
    )
    return folder


def test_a_catalog_name_installs_its_pinned_release_with_the_hash_checked(
    venv, home, tools, fixture_wheels, tmp_path
):
    wheel = next(fixture_wheels.glob("hermes_plugin_good-*.whl"))
    links = ["--find-links", str(fixture_wheels)]
    wrong = _catalog(
        tmp_path / "wrong", wheel, source={"pypi": "hermes-plugin-good", "version": "0.1.0", "sha256": "0" * 64}
    )  # fmt: skip
    before = freeze(venv)
    run = venv.hermes(
        "plugins", "install", "good", "--yes", "--catalog", str(wrong), *links, home=home, env=tools
    )
    assert run.code == 1 and "hash" in run.err.lower(), run.err
    assert freeze(venv) == before

    catalog = _catalog(tmp_path / "right", wheel)
    env = {**tools, "HERMES_CATALOG": str(catalog)}
    run = ok(venv.hermes("plugins", "install", "good", "--yes", *links, home=home, env=env))
    assert "catalog:   community, maintained by Test <t@example.org>" in run.out
    assert "hermes-plugin-good==0.1.0" in freeze(venv)

    search = ok(venv.hermes("plugins", "catalog", "search", "echo", home=home, env=env))
    assert search.out.startswith("good  0.1.0")
    validated = ok(venv.hermes("plugins", "validate", "good", home=home, env=env))
    assert "good: ok (schema, and it registers what it declares)" in validated.out

    legacy = next(fixture_wheels.glob("hermes_plugin_legacy-*.whl"))
    refused = venv.hermes("plugins", "install", str(legacy), "--yes", home=home, env=env)
    assert refused.code == 1
    assert (
        "legacy was removed from the catalog: it lost its manifest; use good instead" in refused.err
    )

    newer = _catalog(
        tmp_path / "newer", wheel,
        source={"pypi": "hermes-plugin-good", "version": "0.2.0", "sha256": "1" * 64},
        provides=["tool.echo", "tool.extra"], kinds=["tool"],
    )  # fmt: skip
    outdated = ok(venv.hermes("plugins", "outdated", "--catalog", str(newer), home=home, env=env))
    assert "good: 0.1.0 installed, catalog has 0.2.0" in outdated.out
    mismatch = venv.hermes(
        "plugins", "validate", str(newer / "entries" / "good.yaml"), home=home, env=env
    )
    assert mismatch.code == 1
    assert "installed 0.1.0, the entry pins 0.2.0" in mismatch.out
    assert (
        "not registered: tool.extra; not declared: command.hello, config.good, "
        "hook.hermes_pre_tool_call, toolset.fixture" in mismatch.out
    )


def test_a_bundle_installs_the_same_versions_in_two_fresh_venvs(
    tmp_path, home, tools, workspace_wheels
):
    env = {**tools, "HERMES_CATALOG": str(REPO / "plugin-catalog")}
    freezes = []
    for number in (1, 2):
        venv = Venv(build_venv(tmp_path / f"venv{number}", [PLUGIN_MANAGER]))
        run = ok(
            venv.hermes(
                "plugins", "install", "--bundle", "minimal", "--yes",
                "--find-links", str(workspace_wheels), home=home, env=env,
            )
        )  # fmt: skip
        assert "bundle minimal:" in run.out and "provider-openai: installed and verified" in run.out
        freezes.append(freeze(venv))
    assert freezes[0] == freezes[1]
    assert "hermes-plugin-provider-openai==0.1.0" in freezes[0]
    assert "hermes-plugin-backend-local==0.1.0" in freezes[0]
    pinned = (REPO / "plugin-catalog" / "bundles" / "minimal.txt").read_text()
    for line in freezes[0].splitlines():
        if "==" in line:
            assert line in pinned, f"{line} is not what the bundle pins"


def test_a_uv_tool_install_keeps_its_plugins_through_uv_tool_upgrade(
    home, tools, tmp_path, workspace_wheels, fixture_wheels
):
    """`uv tool upgrade` rebuilds the environment from its receipt: plugins must be in it."""
    links = tmp_path / "links"
    links.mkdir()
    # The kernel, the SDK, the commons and the plugin manager.
    for pattern in ("hermes_[ksc]*.whl", "hermes_plugin_plugin_manager-*.whl"):
        for wheel in workspace_wheels.glob(pattern):
            shutil.copy(wheel, links)
    uv = {
        **tools,
        "UV_TOOL_DIR": str(tmp_path / "tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "UV_PYTHON": sys.executable,
        "UV_PYTHON_DOWNLOADS": "never",
    }

    def tool(*args: str) -> None:
        environ = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | uv
        subprocess.run([uv_command(), "tool", *args], env=environ, check=True)

    tool(
        "install", "--quiet", "hermes-kernel", "--with", "hermes-plugin-plugin-manager",
        "--find-links", str(links),
    )  # fmt: skip
    hermes = Venv(tmp_path / "tools" / "hermes-kernel")
    receipt = hermes.path / "uv-receipt.toml"
    good = next(fixture_wheels.glob("hermes_plugin_good-*.whl"))
    run = ok(hermes.hermes("plugins", "install", str(good), "--yes", "--enable", home=home, env=uv))
    assert "uv tool environment" in run.out
    assert f'{{ name = "hermes-plugin-good", path = "{good}" }}' in receipt.read_text()
    assert 'find-links = ["file://' in receipt.read_text(), "the tool's options are kept"

    # A broken release is refused and the receipt is untouched, byte for byte.
    before = receipt.read_bytes()
    failed = hermes.hermes(
        "plugins", "install", str(FIXTURES / "install" / "good-broken"), "--yes",
        "--find-links", str(fixture_wheels), home=home, env=uv,
    )  # fmt: skip
    assert failed.code == 1 and "rolled back" in failed.err
    assert receipt.read_bytes() == before

    # A new Hermes release, then the upgrade the user runs: the plugin is still there.
    kernel = shutil.copytree(
        REPO / "kernel", tmp_path / "kernel", ignore=shutil.ignore_patterns(".venv")
    )
    version_file = kernel / "src" / "hermes_kernel" / "_version.py"
    current = re.search(r'__version__ = "(.+)"', version_file.read_text())
    assert current is not None
    release = f"{current[1]}.post1"
    version_file.write_text(f'__version__ = "{release}"\n')
    subprocess.run(
        [uv_command(), "build", "--quiet", "--wheel", "--out-dir", str(links), str(kernel)],
        check=True,
    )
    tool("upgrade", "--quiet", "hermes-kernel")
    after = freeze(hermes)
    assert f"hermes-kernel=={release}" in after
    assert "hermes-plugin-good @ file://" in after
    assert listed(hermes, home, uv, "--verify")["good"]["state"] == "loaded"

    # Uninstalled: gone from the receipt too, so the next upgrade does not bring it back.
    ok(hermes.hermes("plugins", "uninstall", "good", "--yes", home=home, env=uv))
    assert "hermes-plugin-good" not in receipt.read_text()
    tool("upgrade", "--quiet", "hermes-kernel")
    assert "hermes-plugin-good" not in freeze(hermes)


def test_a_pip_made_venv_is_changed_with_pip_and_rolled_back_with_it(
    home, tools, tmp_path, fixture_wheels
):
    """A venv made by `python -m venv` (it has pip, and no uv marker) is changed with pip."""
    path = tmp_path / "pip-venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = str(path / "bin" / "python")
    subprocess.run(  # the kernel, put there quickly; pip does the plugin changes below
        [uv_command(), "pip", "install", "-q", "--python", python, str(REPO / "sdk"), str(REPO / "commons"), str(REPO / "kernel"), str(PLUGIN_MANAGER)],
        check=True,
    )  # fmt: skip
    venv = Venv(path)

    def pip_freeze() -> str:
        return subprocess.run(
            [python, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True
        ).stdout

    good = next(fixture_wheels.glob("hermes_plugin_good-*.whl"))
    run = ok(
        venv.hermes("plugins", "install", str(good), "--yes", "--enable", home=home, env=tools)
    )
    assert f"into:       environment {path} (changed with pip)" in run.out
    assert "hermes-plugin-good @ file://" in pip_freeze()
    before, config = pip_freeze(), (home / "config.yaml").read_bytes()
    failed = venv.hermes(
        "plugins", "install", str(FIXTURES / "install" / "good-broken"), "--yes",
        "--find-links", str(fixture_wheels), home=home, env=tools,
    )  # fmt: skip
    assert failed.code == 1, failed.out + failed.err
    assert "rolled back: the environment is as it was" in failed.err
    assert pip_freeze() == before
    assert (home / "config.yaml").read_bytes() == config
    assert listed(venv, home, tools, "--verify")["good"]["state"] == "loaded"


def test_hermes_update_shows_installs_and_rolls_back_a_release_that_fails(
    venv, home, tools, fixture_wheels, tmp_path
):
    from hermes_plugin_plugin_manager.wheels import file_sha256

    wheel = next(fixture_wheels.glob("hermes_plugin_good-*.whl"))
    links = ["--find-links", str(fixture_wheels)]
    env = {**tools, "HERMES_CATALOG": str(_catalog(tmp_path / "now", wheel))}
    ok(venv.hermes("plugins", "install", "good", "--yes", "--enable", *links, home=home, env=env))
    assert ok(venv.hermes("update", "--check", home=home, env=env)).out.strip() == (
        "everything is up to date"
    )

    _build(FIXTURES / "install" / "good-broken", tmp_path / "broken-wheels")
    broken = next((tmp_path / "broken-wheels").glob("hermes_plugin_good-0.2.0-*.whl"))
    release = {"pypi": "hermes-plugin-good", "version": "0.2.0", "sha256": file_sha256(broken)}
    env = {**tools, "HERMES_CATALOG": str(_catalog(tmp_path / "next", broken, source=release))}
    before = freeze(venv)
    check = ok(venv.hermes("update", "--check", home=home, env=env))
    assert "hermes-plugin-good: 0.1.0 -> 0.2.0" in check.out
    assert "1 update(s) ready" in check.out
    assert freeze(venv) == before  # --check changes nothing

    run = venv.hermes(
        "update", "--yes", "--find-links", str(broken.parent), *links, home=home, env=env
    )
    assert run.code == 1, run.out
    assert "verification failed" in run.err and "rolled back" in run.err
    assert freeze(venv) == before  # the old release, and no package the new one brought
    hello = ok(venv.hermes("hello", home=home, env=env))
    assert hello.out.strip() == "hello, world, from the good plugin"  # the old plugin answers


def test_the_dashboard_installs_from_the_catalog_verified_or_rolled_back(
    home, tools, fixture_wheels, tmp_path, openai_server
):
    """Issue 75: the Catalog page of a real ``hermes web`` in a throwaway venv, in Debian's
    Chromium. A release that fails verification is rolled back (the venv and config.yaml
    exactly as they were, said in one line); the pinned good release is then installed,
    verified, and left disabled, as ``hermes plugins install`` leaves it."""
    import select

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    wheels = tmp_path / "wheels"
    shutil.copytree(fixture_wheels, wheels)
    _build(FIXTURES / "install" / "good-broken", wheels)
    broken = next(wheels.glob("hermes_plugin_good-0.2.0-*.whl"))
    good = next(wheels.glob("hermes_plugin_good-0.1.0-*.whl"))
    source = {"pypi": "hermes-plugin-good", "version": "0.2.0"}
    from hermes_plugin_plugin_manager.wheels import file_sha256

    catalog = _catalog(tmp_path, good, source={**source, "sha256": file_sha256(broken)})
    packages = [PLUGIN_MANAGER, *(REPO / "plugins" / name for name in DASHBOARD_PLUGINS)]
    venv = Venv(build_venv(tmp_path / "web-venv", packages))
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "learning:\n  review: false\n"
    )
    key = "catalog-dashboard-key-0123456789"
    (home / ".env").write_text(f"WEB_UI_KEY={key}\n")
    (home / ".env").chmod(0o600)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "VIRTUAL_"))}
    environ.update(
        {
            **tools,
            "HERMES_HOME": str(home),
            "HERMES_CATALOG": str(catalog),
            "UV_FIND_LINKS": str(wheels),
        }
    )
    server = subprocess.Popen(
        [str(venv.path / "bin" / "hermes"), "web", "--port", "0"],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stderr is not None
        seen = b""
        deadline = time.monotonic() + 90
        while not (found := re.search(rb"hermes web: (http://[^ ]+/) ", seen)):
            assert server.poll() is None and time.monotonic() < deadline, seen.decode("replace")
            if select.select([server.stderr], [], [], 1)[0]:
                seen += os.read(server.stderr.fileno(), 4096)
        url = found.group(1).decode().rstrip("/")
        before, config = freeze(venv), (home / "config.yaml").read_bytes()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(180_000)  # an install and its verification, on 2 cores
            page.goto(url + "/chat")
            page.fill('input[name="key"]', key)
            page.click("form.login button")
            page.click("nav .links a:text-is('Catalog')")
            row = page.locator("tr", has=page.locator("td:text-is('good')"))
            row.locator("button:text-is('Install…')").click()
            facts = page.inner_text("dl.facts")
            assert "community, maintained by Test <t@example.org>" in facts
            assert "hermes-plugin-good" in facts and "0.2.0" in facts
            with page.expect_navigation():
                page.click("button:text-is('Install')")
            refusal = page.inner_text(".flash")
            assert "verification failed: plugin 'good'" in refusal and "rolled back" in refusal
            assert freeze(venv) == before
            assert (home / "config.yaml").read_bytes() == config

            pinned = {**source, "version": "0.1.0", "sha256": file_sha256(good)}
            _catalog(tmp_path, good, source=pinned)  # the catalog now pins the good release
            page.reload()
            row = page.locator("tr", has=page.locator("td:text-is('good')"))
            row.locator("button:text-is('Install…')").click()
            with page.expect_navigation():
                page.click("button:text-is('Install')")
            said = page.inner_text(".flash")
            assert "good: installed and verified" in said and "disabled" in said, said
            browser.close()
        assert "hermes-plugin-good==0.1.0" in freeze(venv)
        assert listed(venv, home, tools)["good"]["state"] == "disabled"
    finally:
        server.terminate()
        server.wait(30)
