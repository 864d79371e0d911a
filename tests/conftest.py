"""Shared fixtures: a tiny random-weight causal LM built on the spot (no downloads); the system tools a test
needs (tests/system_tools.py: `@pytest.mark.needs(tool)`), the sandbox's guard, and the suite's last line naming
what was skipped for want of what."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from system_tools import REASON, require, skip_reason, skipped_for_want_of

from proctor.scoring.execute import sandbox


def pytest_configure(config: pytest.Config) -> None:
    """A suite started with SIGINT ignored (a background job, `nohup`, some CI runners) would hand that to every
    child it starts (an ignored signal stays ignored across exec), and the Ctrl-C tests' children would never
    see their SIGINT: restore Python's default handler, so children start with the default disposition."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` (`make test`) keeps each `xdist_group` on one worker by suffixing its tests' ids with
    `@group`; pytest-xdist 3.8 writes the suffix to `item._nodeid`, which pytest >= 9.2 no longer reads (ids live
    in `item._id`), so the groups were silently spread over every worker: each worker started its own vLLM
    servers and managed engines (the vllm group) and its own Ray head. Add the suffix where xdist's did not take.

    Under xdist, the tests marked `long` (each tens of seconds or minutes, one process after another) go first
    (a stable sort): xdist hands out groups (largest first), then single tests in collection order, so a long
    test collected last (tests/test_readme.py) would run alone at the end while the other workers sit idle."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, and sorts, the same way
        items.sort(key=lambda item: item.get_closest_marker("long") is None)
    if not getattr(config.option, "loadgroup", False):  # set on xdist workers under --dist loadgroup
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A llama-style tiny model with a BPE tokenizer that prepends BOS."""
    pytest.importorskip("torch")
    from proctor.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GPT-2-style tiny model (learned positions), for a second architecture."""
    pytest.importorskip("torch")
    from proctor.models.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-gpt2"), architecture="gpt2", seed=1)


# ---------------------------------------------------------------- system tools: declared, then skipped or failed


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """`@pytest.mark.needs("bubblewrap", ...)`: each tool is here, or the test skips (fails under CI=true), before
    its fixtures; a fixture that reached the sandbox undeclared fails it."""
    reasons = [skip_reason(name) for mark in item.iter_markers("needs") for name in mark.args]
    for reason in filter(None, reasons):  # skipped where the test is (pytest's skipping plugin reads the mark)
        item.add_marker(pytest.mark.skip(reason=reason))
    try:
        return (yield)
    finally:
        _fail_if_undeclared(item)


@pytest.fixture
def bwrap() -> sandbox.Bubblewrap:
    """The real bubblewrap (the test needs it: skipped without it, failed under CI=true)."""
    require("bubblewrap")
    box = sandbox.find_bubblewrap()
    assert box is not None
    return box


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sandbox on this machine, on purpose (the refusal a user without bubblewrap gets)."""
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: None)


_UNDECLARED = pytest.StashKey[str]()
_current: list[pytest.Item] = []  # the test running now (one at a time per process)


def declares_the_sandbox(item: pytest.Item) -> bool:
    """The test says how it stands to the sandbox: needs it (the marker or the `bwrap` fixture) or hides it."""
    names = {n for mark in item.iter_markers("needs") for n in mark.args}
    return "bubblewrap" in names or bool({"bwrap", "no_sandbox"} & set(getattr(item, "fixturenames", ())))


def _guarded(original: Any) -> Any:
    def sandbox_for(unsafe_exec: bool) -> sandbox.Runner:
        if _current and not unsafe_exec and not declares_the_sandbox(_current[-1]):
            _current[-1].stash[_UNDECLARED] = "ran model code through the sandbox (sandbox_for) undeclared"
        return original(unsafe_exec)  # type: ignore[no-any-return]

    sandbox_for.__wrapped__ = original  # type: ignore[attr-defined]
    return sandbox_for


def pytest_sessionstart(session: pytest.Session) -> None:
    """Every run that executes model code asks `sandbox_for` (the runner's copy and the module's): watched, so a
    test that reaches it without declaring the sandbox fails on every machine, not only on one without bwrap."""
    from proctor.run import runner

    for module in (sandbox, runner):
        if not hasattr(module.sandbox_for, "__wrapped__"):
            module.sandbox_for = _guarded(module.sandbox_for)  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _current.append(item)
    try:
        return (yield)
    finally:
        _current.pop()


def _fail_if_undeclared(item: pytest.Item) -> None:
    what = item.stash.get(_UNDECLARED, None)
    if what is not None:
        del item.stash[_UNDECLARED]
        pytest.fail(f"{what}: mark it @pytest.mark.needs(\"bubblewrap\") (or use the bwrap fixture), "
                    "hide the sandbox with the no_sandbox fixture, or run with --unsafe-exec / unsafe_exec=True "
                    "on purpose", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    finally:
        _fail_if_undeclared(item)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The line `make test` ends with (written at exit, after pytest's counts): which tools the skipped tests
    wanted, how many each, and the command that installs them."""
    reasons = [str(rep.longrepr[2]) for rep in terminalreporter.stats.get("skipped", [])
               if isinstance(rep.longrepr, tuple) and REASON.search(str(rep.longrepr[2]))]
    line = skipped_for_want_of(reasons)
    if line is not None:
        terminalreporter.config.stash[_WANTED] = line


_WANTED = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    line = config.stash.get(_WANTED, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if line is not None and reporter is not None:
        reporter.write_line(line, yellow=True)
