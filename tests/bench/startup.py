"""Start-up cost against the number of installed plugins.

Builds one virtual environment per plugin count (0, 20, 100 by default) with the kernel, the
SDK and N generated dummy plugins installed as real wheels, then prints the median wall time
and peak RSS of `hermes --version` and `hermes plugins list` for each N, the ratio
N=max / N=0, and `python -c pass` as the floor, all measured in the same run. It also
prints `hermes plugins list` on a first run (an empty HERMES_HOME, so no caches yet).

    uv run python tests/bench/startup.py [--counts 0 20 100] [--repeat 15]

Target: ratio <= 1.1 (start-up must not grow with the number of installed plugins).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from conftest import build_venv  # noqa: E402  (shared with the integration tests)

DUMMY_SOURCE = '''"""Dummy plugin {index} for the start-up benchmark."""

from hermes_sdk import ToolSpec, hookimpl


@hookimpl
def hermes_tools():
    yield ToolSpec(name="dummy_{index}", description="does nothing", handler=lambda: "")
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_dummy_wheel(folder: Path, index: int) -> Path:
    """A real wheel (module, METADATA, entry points, RECORD) for plugin number ``index``."""
    dist, module = f"hermes_plugin_dummy{index}", f"hermes_plugin_dummy{index}"
    info = f"{dist}-1.0.dist-info"
    files = {
        f"{module}/__init__.py": DUMMY_SOURCE.format(index=index),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: hermes-plugin-dummy{index}\nVersion: 1.0\n"
            "Requires-Dist: hermes-sdk\n"
        ),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hermes-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": (
            f"[hermes.plugins]\ndummy{index} = {module}\n\n"
            f"[hermes.provides]\ntool.dummy_{index} = {module}\n"
        ),
    }
    path = folder / f"{dist}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        records = []
        for name, text in files.items():
            data = text.encode()
            wheel.writestr(name, data)
            records.append(_record_line(name, data))
        records.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return path


# Linux charges a child the peak RSS of the process it was forked from (exec records the old
# address space's high-water mark), so this benchmark's own size would swamp every figure.
# A small spawner process runs the command instead; its own ~10 MiB is the floor of what
# can be measured, below any real hermes run.
SPAWNER = """
import json, os, sys, time
repeat, argv = int(sys.argv[1]), sys.argv[2:]
devnull = os.open(os.devnull, os.O_WRONLY)
times, peaks = [], []
for _ in range(repeat):
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, status, usage = os.wait4(pid, 0)
    times.append((time.perf_counter() - started) * 1000)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv} exited with {os.waitstatus_to_exitcode(status)}")
    peaks.append(usage.ru_maxrss / 1024)
print(json.dumps([times, peaks]))
"""


def measure_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time (ms) and peak RSS (MiB) of one run of ``argv``, through the spawner."""
    done = subprocess.run(
        [sys.executable, "-c", SPAWNER, "1", *argv],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    times, peaks = json.loads(done.stdout)
    return times[0], peaks[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[0, 20, 100])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as scratch:
        root = Path(scratch)
        wheels = root / "wheels"
        wheels.mkdir()
        all_wheels = [write_dummy_wheel(wheels, i) for i in range(max(args.counts))]
        home = root / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        env["HERMES_HOME"] = str(home)

        runs: dict[tuple[str, int], list[argparse.Namespace]] = {}
        commands: dict[tuple[str, int], list[str]] = {}
        for count in args.counts:
            venv = build_venv(root / f"venv-{count}", all_wheels[:count])
            hermes = str(venv / "bin" / "hermes")
            # Warm up: the first run compiles bytecode, which users pay once per install.
            subprocess.run([hermes, "plugins", "list"], env=env, check=True, capture_output=True)
            listed = subprocess.run(
                [hermes, "plugins", "list", "--json"],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            assert listed.count('"name"') == count, "every dummy plugin must be listed"
            commands[("python -c pass", count)] = [str(venv / "bin" / "python"), "-c", "pass"]
            commands[("hermes --version", count)] = [hermes, "--version"]
            commands[("hermes plugins list", count)] = [hermes, "plugins", "list"]
        # Rounds interleave every command and count, so a slow spell of the machine spreads
        # over all of them instead of skewing one.
        for round_number in range(args.repeat):
            for key, argv in commands.items():
                ms, mib = measure_once(argv, env)
                runs.setdefault(key, []).append(argparse.Namespace(ms=ms, mib=mib))
            for count in args.counts:  # a first run: empty HERMES_HOME, so no caches
                cold_home = root / f"cold-{count}-{round_number}"
                argv = commands[("hermes plugins list", count)]
                ms, mib = measure_once(argv, {**env, "HERMES_HOME": str(cold_home)})
                runs.setdefault(("hermes plugins list (cold)", count), []).append(
                    argparse.Namespace(ms=ms, mib=mib)
                )

    def median(key: tuple[str, int]) -> tuple[float, float]:
        return (
            statistics.median(r.ms for r in runs[key]),
            statistics.median(r.mib for r in runs[key]),
        )

    low, high = min(args.counts), max(args.counts)
    floor = median(("python -c pass", low))
    print(f"floor: python -c pass  {floor[0]:7.1f} ms  {floor[1]:6.1f} MiB  ({args.repeat} runs)")
    print(f"{'command':<28}{'plugins':>8}{'median ms':>11}{'x floor':>9}{'peak MiB':>10}")
    names = ["hermes --version", "hermes plugins list", "hermes plugins list (cold)"]
    for name in names:
        for count in args.counts:
            ms, mib = median((name, count))
            print(f"{name:<28}{count:>8}{ms:>11.1f}{ms / floor[0]:>9.1f}{mib:>10.1f}")
    for name in names:
        (low_ms, low_mib), (high_ms, high_mib) = median((name, low)), median((name, high))
        target = "first run, no target" if "cold" in name else "target <= 1.1"
        verdict = "" if "cold" in name else ": ok" if high_ms / low_ms <= 1.1 else ": OVER TARGET"
        print(
            f"ratio N={high}/N={low} {name}: time {high_ms / low_ms:.3f}, "
            f"rss {high_mib / low_mib:.3f}  ({target}{verdict})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
