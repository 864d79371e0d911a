"""The suite itself (issue 53): a test that runs model code through the sandbox without saying so fails on every
machine (not only on one without bubblewrap); a missing tool is a skip naming it, a failure under CI=true; the
session ends with one line naming what was skipped for want of what; no test checks for a system tool its own way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
RUNS_CODE = '''
from proctor.run import runner


def test_undeclared():
    runner.sandbox_for(False)  # what a code benchmark's run asks; refused or bubblewrap, by machine


def test_unsafe_on_purpose():
    assert runner.sandbox_for(True).name in ("unsafe", "bubblewrap")


def test_hidden(no_sandbox):
    import pytest
    from proctor.util.errors import ProctorError

    with pytest.raises(ProctorError, match="--unsafe-exec"):
        runner.sandbox_for(False)


@pytest.mark.needs("bubblewrap")
def test_declared():
    assert runner.sandbox_for(False).name == "bubblewrap"
'''


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A scratch suite with this suite's conftest and tool registry."""
    pytester.makeini("[pytest]\nmarkers =\n    needs(*tools): system tools\n")
    pytester.makeconftest((TESTS / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(system_tools=(TESTS / "system_tools.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_code="import pytest\n" + RUNS_CODE)
    return pytester


def _run(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None,
         *args: str) -> pytest.RunResult:
    monkeypatch.setenv("PYTHONPATH", str(TESTS.parent / "src"))  # this checkout's proctor
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    return suite.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-ra", *args)


def test_a_test_reaching_the_sandbox_undeclared_fails_and_the_declared_ones_do_not(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _run(suite, monkeypatch, None)
    out = ran.stdout.str()
    assert "FAILED test_code.py::test_undeclared" in out and "through the sandbox (sandbox_for) undeclared" in out, out
    outcomes = ran.parseoutcomes()
    assert outcomes["failed"] == 1 and outcomes["passed"] + outcomes.get("skipped", 0) == 3, out


def test_a_missing_tool_skips_naming_it_and_fails_under_ci(suite: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    suite.makepyfile(test_tool='''
import pytest


@pytest.mark.needs("vllm")
def test_needs_vllm():
    pass
''')
    monkeypatch.setenv("PATH", "/nonexistent")  # nothing on PATH: no Slurm either
    skipped = _run(suite, monkeypatch, None, "test_tool.py")
    out = skipped.stdout.str()
    assert skipped.ret == 0 and skipped.parseoutcomes() == {"skipped": 1}, out
    assert re.search(r"SKIPPED \[1\] test_tool.py:\d+: needs vllm: no vLLM environment at", out), out
    assert out.rstrip().splitlines()[-1] == "skipped for want of: vllm (1 tests) — make vllm-env", out
    failed = _run(suite, monkeypatch, "true", "test_tool.py")
    assert failed.ret == 1 and "CI=true and needs vllm: no vLLM environment" in failed.stdout.str()


def test_the_last_line_merges_the_apt_packages_and_counts_each_tool() -> None:
    from system_tools import skipped_for_want_of

    reasons = ["Skipped: needs bubblewrap: x", "needs chromium: y", "needs bubblewrap: z", "needs confseq: w",
               "not a tool's skip"]
    assert skipped_for_want_of(reasons) == ("skipped for want of: bubblewrap (2 tests), chromium (1), confseq (1) — "
                                            "apt-get install bubblewrap chromium libboost-dev; "
                                            "bash .ci/confseq.sh .venv/bin")
    assert skipped_for_want_of(["no tool here"]) is None


OWN_CHECKS = re.compile(r"find_bubblewrap\(\)|which\(\"(bwrap|chromium|sbatch|sinfo)\"\)"
                        r"|find_spec\(\"(matharena|confseq|ray|playwright)")


def test_no_test_checks_for_a_system_tool_its_own_way() -> None:
    """The tools are asked for through tests/system_tools.py (the marker, `require`), so their absence is a skip
    or a CI failure by construction: a test of its own `find_bubblewrap() is None: skip` would pass under CI."""
    own = [f"{p.relative_to(TESTS)}:{n}" for p in TESTS.rglob("*.py")
           if p.name not in ("system_tools.py", "conftest.py", "test_suite_markers.py")
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if OWN_CHECKS.search(line)]
    assert own == []


def test_the_readme_names_the_line_and_every_apt_package_it_can_ask_for() -> None:
    from system_tools import TOOLS

    head = " ".join((TESTS.parent / "README.md").read_text(encoding="utf-8").split("## Why proctor")[0].split())
    apt = " ".join(t.apt for t in TOOLS.values() if t.apt)
    assert "ends with one line naming what was skipped for want of what" in head and f"`apt-get install {apt}`" in head


def test_no_test_imports_the_tests_folder_as_a_package() -> None:
    """`from tests.x import …` finds whatever top-level `tests` package the environment has first (ppi-python's wheel
    installs one into site-packages): helpers are imported by module name (tests/ and each test's folder are on the
    path), and one shared across folders lives in tests/."""
    pattern = re.compile(r"^\s*(from|import)\s+tests(\.|\s|$)", re.MULTILINE)
    found = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]
    assert found == []
