"""The tools outside pip's reach that some tests need, asked for one way: `@pytest.mark.needs("bubblewrap")` on a
test (tests/conftest.py checks it before the test's fixtures), or `require(tool)` from a fixture that has to build
something (the sandbox, a browser, a Ray head, vLLM servers). A missing tool is a skip whose reason starts
`needs TOOL:` outside CI, and a failure under `CI=true`; the suite's last line counts those skips per tool with the
command that installs each (tests/conftest.py, `skipped_for_want_of`)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.scoring.math_graders import MATHARENA_INSTALL

CHROMIUM = os.environ.get("PROCTOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
VLLM_PYTHON = Path(os.environ.get("PROCTOR_VLLM_PYTHON") or Path(__file__).resolve().parents[1] / ".venv-vllm" / "bin"
                   / "python")
REASON = re.compile(r"needs ([\w-]+): ")  # how a tool's skip reason starts


def in_ci() -> bool:
    """`CI=true` (or 1, yes): a missing tool fails instead of skipping."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _bubblewrap() -> str | None:
    from proctor.scoring.execute.sandbox import find_bubblewrap

    if find_bubblewrap() is None:
        return "no working bubblewrap here (bwrap not on PATH, or it cannot start a sandbox)"
    return None


def _chromium() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).exists():
        return f"chromium not found at {CHROMIUM} (or point PROCTOR_CHROMIUM at one)"
    return None


def _slurm() -> str | None:
    if shutil.which("sbatch") is None:
        return "no Slurm here (sbatch not found)"
    try:
        subprocess.run(["sinfo", "-h"], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"Slurm does not answer sinfo ({e})"
    return _module("submitit")


def _module(name: str) -> str | None:
    return None if importlib.util.find_spec(name) is not None else f"{name} is not installed"


def _vllm() -> str | None:
    return None if VLLM_PYTHON.exists() else f"no vLLM environment at {VLLM_PYTHON}"


@dataclass(frozen=True)
class Tool:
    """A tool, why it is missing (None when it is here), and how to get it: a Debian package (the suite's last
    line merges them into one apt-get command) or another command."""

    name: str
    missing: Callable[[], str | None]
    apt: str = ""
    install: str = ""


TOOLS = {t.name: t for t in (
    Tool("bubblewrap", _bubblewrap, apt="bubblewrap"),
    Tool("chromium", _chromium, apt="chromium"),
    Tool("slurm", _slurm, install="../shared/tools/slurm-local/start.sh (.ci/run starts one)"),
    Tool("ray", lambda: _module("ray"), install="pip install -e '.[dev]'"),
    Tool("confseq", lambda: _module("confseq"), apt="libboost-dev", install="bash .ci/confseq.sh .venv/bin"),
    Tool("matharena", lambda: _module("matharena"), install=MATHARENA_INSTALL),
    Tool("vllm", _vllm, install="make vllm-env"),
)}


def require(name: str, missing: str | None = None) -> None:
    """Go on when tool `name` is here; else skip (fail under CI=true) saying why. `missing`: the caller's own
    finding (e.g. `ray start` failed), instead of the tool's check."""
    reason = skip_reason(name, missing)
    if reason is not None:
        pytest.skip(reason)


def skip_reason(name: str, missing: str | None = None) -> str | None:
    """Why a test that needs tool `name` cannot run, and how to get it (None when it can); under CI=true the test
    fails here instead."""
    tool = TOOLS[name]
    why = missing if missing is not None else tool.missing()
    if why is None:
        return None
    how = " and ".join(filter(None, [f"apt-get install {tool.apt}" if tool.apt else "", tool.install]))
    reason = f"needs {tool.name}: {why} ({how})"
    if in_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    return reason


def skipped_for_want_of(reasons: Iterable[str]) -> str | None:
    """One line from the skip reasons of a session: `skipped for want of: bubblewrap (9 tests), chromium (13) —
    apt-get install bubblewrap chromium; make vllm-env`; None when no test wanted a tool."""
    counts: dict[str, int] = {}
    for reason in reasons:
        found = REASON.search(reason)
        if found and found.group(1) in TOOLS:
            counts[found.group(1)] = counts.get(found.group(1), 0) + 1
    if not counts:
        return None
    tools = [TOOLS[n] for n in sorted(counts)]
    apt = " ".join(t.apt for t in tools if t.apt)
    how = "; ".join(filter(None, [f"apt-get install {apt}" if apt else "", *(t.install for t in tools)]))
    named = ", ".join(f"{n} ({c}{' tests' if i == 0 else ''})" for i, (n, c) in enumerate(
        (t.name, counts[t.name]) for t in tools))
    return f"skipped for want of: {named} — {how}"
