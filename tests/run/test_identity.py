"""#47 item 3, identity by rule: every option that is part of a run's identity, run both ways on a case where it
matters. Two runs whose outcomes differ (what was asked, which verdicts, how many items) must never share one
identity, and two runs with the same outcome must not get two. A run's identity, as the history keeps it, is its run
id and whether it is partial (a run `--stop-when-decided` stopped: the same evaluation, incomplete, kept beside the
complete run and never over it).

The cases: the sandbox (a reply that opens a socket fails in bubblewrap, passes unsandboxed: two ids); `--unsafe-exec`
where bubblewrap works (nothing changes: one id); the default prompt kind and the same kind named (byte-identical
requests: one id); another prompt kind (other requests: two ids); a stopped run and the full one (one id, one
partial, two identities)."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.benchmarks import humaneval
from proctor.benchmarks.code_prompts import CodePrompts
from proctor.benchmarks.hub import Rows
from proctor.cli import main
from proctor.data.formats.convert import question_to_item
from proctor.log.runlog import iter_samples
from proctor.metrics.results import read_run
from proctor.run.store import Store, record_from_log
from proctor.scoring.execute import sandbox

ROOT = Path(__file__).parents[2]
CAPITALS = ROOT / "examples" / "benchmarks" / "capitals.yaml"  # three_shot (its default), zero_shot
QUIET = ("--no-cache", "--no-progress")

ROWS = [
    {"task_id": "Synthetic/0", "prompt": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n", "canonical_solution": "    return a + b\n",
     "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"},
    {"task_id": "Synthetic/1", "prompt": "def total(xs):\n    \"\"\"Sum of xs.\"\"\"\n",
     "canonical_solution": "    return sum(xs)\n", "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n",
     "entry_point": "total"},
    {"task_id": "Synthetic/2", "prompt": "def double(x):\n    \"\"\"Twice x.\"\"\"\n", "canonical_solution": "    return 2 * x\n",
     "test": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "double"},
]


def _replies(port: int) -> dict[str, str]:
    """Right, wrong, and right only where the program can reach the host's port (unsandboxed: bubblewrap has no
    network)."""
    return {
        "Synthetic/0": "```python\ndef add(a, b):\n    return a + b\n```",
        "Synthetic/1": "```python\ndef total(xs):\n    return 0\n```",
        "Synthetic/2": ("```python\nimport socket\n\ndef double(x):\n"
                        f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
                        "    return 2 * x\n```"),
    }


@pytest.fixture
def listening() -> Iterator[int]:
    """A port on the host that accepts connections (its backlog: nothing needs to answer)."""
    with socket.create_server(("127.0.0.1", 0), backlog=16) as server:
        yield server.getsockname()[1]


def _code_files(tmp_path: Path, port: int) -> tuple[Path, Path]:
    data = tmp_path / "humaneval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    prompts = CodePrompts(humaneval.NAME, humaneval.STOPS)
    items = {q.original_id: question_to_item(q, humaneval.NAME) for q in humaneval.to_questions(Rows(ROWS))}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"prompt": prompts.messages(items[t], "chat")[0].content, "answer": a}) + "\n"
                               for t, a in _replies(port).items()))
    return data, answers


def _code_run(tmp_path: Path, port: int, name: str, *extra: str) -> Path:
    data, answers = _code_files(tmp_path, port)
    out = tmp_path / name
    assert main(["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}", "--prompt",
                 "chat", "-o", str(out), "--store", str(tmp_path / "store.sqlite"), *QUIET, *extra]) in (0, 1)
    return out


def _run(tmp_path: Path, name: str, *argv: str) -> Path:
    out = tmp_path / name
    assert main(["run", *argv, "-o", str(out), "--store", str(tmp_path / "store.sqlite"), *QUIET]) in (0, 1)
    return out


# ---------------------------------------------------------------- the cases: each returns its two run directories

Case = Callable[[Path, pytest.MonkeyPatch, int], tuple[Path, Path]]


def sandbox_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int) -> tuple[Path, Path]:
    boxed = _code_run(tmp_path, port, "bubblewrap")
    monkeypatch.setattr(sandbox, "find_bubblewrap", lambda: None)  # a machine without bubblewrap
    return boxed, _code_run(tmp_path, port, "unsafe", "--unsafe-exec")


def unsafe_exec_where_bubblewrap_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       port: int) -> tuple[Path, Path]:
    return _code_run(tmp_path, port, "plain"), _code_run(tmp_path, port, "flag", "--unsafe-exec")


def prompt_default_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int) -> tuple[Path, Path]:
    return (_run(tmp_path, "default", str(CAPITALS), "--model", "scripted:random"),
            _run(tmp_path, "named", str(CAPITALS), "--model", "scripted:random", "--prompt", "three_shot"))


def prompt_another_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int) -> tuple[Path, Path]:
    return (_run(tmp_path, "default", str(CAPITALS), "--model", "scripted:random"),
            _run(tmp_path, "zero", str(CAPITALS), "--model", "scripted:random", "--prompt", "zero_shot"))


def stopped_and_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int) -> tuple[Path, Path]:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"identifier": f"q{i}", "modality": "choiceof4", "prompt": f"Question {i}?",
                                        "response": "A", "choices": {"A": "a", "B": "b", "C": "c", "D": "d"}}) + "\n"
                            for i in range(200)))
    base = _run(tmp_path, "base", str(data), "--model", "scripted:first")
    full = _run(tmp_path, "full", str(data), "--model", "scripted:random")
    stopped = _run(tmp_path, "stopped", str(data), "--model", "scripted:random", "--baseline", str(base),
                   "--max-drop", "5", "--stop-when-decided")
    return full, stopped


CASES: list[Any] = [
    pytest.param(sandbox_both_ways, id="sandbox", marks=pytest.mark.needs("bubblewrap")),
    pytest.param(unsafe_exec_where_bubblewrap_works, id="unsafe_exec", marks=pytest.mark.needs("bubblewrap")),
    pytest.param(prompt_default_and_named, id="prompt-default-named"),
    pytest.param(prompt_another_kind, id="prompt-kind"),
    pytest.param(stopped_and_full, id="stop_when"),
]


def outcome(run: Path) -> list[tuple[Any, ...]]:
    """What a run did: each sample's prompt, verdict and score."""
    return sorted((s.sample_id, s.prompt, s.outcome.value, s.score) for s in iter_samples(run / "samples.jsonl"))


def identity(run: Path) -> tuple[str, Any]:
    """A run's identity as the history keeps it: its run id, and whether (how far) it is partial."""
    record = record_from_log(read_run(run))
    return record.run_id, getattr(record, "partial", None)


@pytest.mark.parametrize("case", CASES)
def test_two_outcomes_never_share_an_identity_and_one_outcome_has_one(
        case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: int) -> None:
    a, b = case(tmp_path, monkeypatch, listening)
    same_outcome = outcome(a) == outcome(b)
    assert (identity(a) == identity(b)) == same_outcome, (identity(a), identity(b), same_outcome)
    with Store(tmp_path / "store.sqlite") as store:  # the history keeps one record per identity, each its own
        kept = {(r.run_id, getattr(r, "partial", None)): r.path for r in store.list_runs()}
    assert {identity(a), identity(b)} <= kept.keys()
    if not same_outcome:  # neither recorded over the other
        assert (kept[identity(a)], kept[identity(b)]) == (str(a.resolve()), str(b.resolve()))


@pytest.mark.needs("bubblewrap")
def test_a_reply_that_opens_a_socket_gets_two_runs_not_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           listening: int, capsys: pytest.CaptureFixture[str]) -> None:
    boxed, unsafe = sandbox_both_ways(tmp_path, monkeypatch, listening)
    results = {d.name: json.loads((d / "results.json").read_text())["overall"]["accuracy"] for d in (boxed, unsafe)}
    assert results == {"bubblewrap": pytest.approx(1 / 3), "unsafe": pytest.approx(2 / 3)}  # the socket item
    a, b = read_run(boxed).manifest, read_run(unsafe).manifest
    assert a.run_id != b.run_id and a.spec is not None and b.spec is not None
    assert (a.spec.sandbox, b.spec.sandbox) == ("bubblewrap", "unsafe")
    capsys.readouterr()
    assert main(["compare", str(boxed), str(unsafe)]) == 2  # another setting: not paired unless asked
    err = capsys.readouterr().err
    assert "not comparable" in err and "sandbox unsafe" in err
    assert main(["compare", str(boxed), str(unsafe), "--mix-settings"]) == 0
    out, err = capsys.readouterr()
    assert "same run" not in out + err and "sandbox unsafe" in out + err and "-33.3" in out
    assert main(["runs", "--store", str(tmp_path / "store.sqlite"), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(r["run_id"] for r in listed) == sorted([a.run_id, b.run_id])


def test_a_run_that_executes_nothing_has_no_sandbox_and_keeps_its_id(tmp_path: Path) -> None:
    run = _run(tmp_path, "capitals", str(CAPITALS), "--model", "scripted:random", "--prompt", "three_shot")
    manifest = read_run(run).manifest
    assert manifest.spec is not None and manifest.spec.sandbox is None
    assert manifest.run_id == "1128ecfe65f8"  # capitals' three_shot id at ee87dc3 (tests/fixtures/kind_legacy)


LEGACY = ROOT / "tests" / "fixtures" / "sandbox_legacy"
LEGACY_ID = "256d8c9665c1"  # an unsandboxed HumanEval run at 3d0495e, under the id a bubblewrap run had too


def _legacy(tmp_path: Path, capsys: pytest.CaptureFixture[str], limits: str = "proctor",
            unsafe: bool = True) -> tuple[int, str, Path]:
    """The legacy run's command again: under proctor's limits (what 3d0495e ran) it is the same evaluation."""
    shutil.copytree(LEGACY / "runs", tmp_path / "runs")
    code = main(["run", "humaneval", "--data-file", str(LEGACY / "data" / "humaneval.jsonl"), "--model",
                 "scripted:first", "--prompt", "chat", "--runs-root", str(tmp_path / "runs"), "--no-history",
                 "--exec-limits", limits, *QUIET, *(["--unsafe-exec"] if unsafe else [])])
    return code, capsys.readouterr().err, tmp_path / "runs" / f"humaneval__scripted-first__{LEGACY_ID}"


def test_an_unsandboxed_run_written_before_keeps_its_id_and_resumes(no_sandbox: None, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    manifest = read_run(LEGACY / "runs" / f"humaneval__scripted-first__{LEGACY_ID}").manifest
    assert manifest.run_id == LEGACY_ID and manifest.spec is not None and manifest.spec.sandbox == "unsafe"
    assert "sandbox unsafe" in record_from_log(read_run(LEGACY / "runs" /
                                                        f"humaneval__scripted-first__{LEGACY_ID}")).setting_label
    code, err, run = _legacy(tmp_path, capsys)
    assert code in (0, 1) and "0 to ask" in err and len(list((tmp_path / "runs").iterdir())) == 1
    assert read_run(run).manifest.run_id == LEGACY_ID
    assert read_run(run).manifest.spec.scorer.exec_limits == "proctor"  # read as the limits it ran under


def test_under_the_authors_limits_the_same_command_is_another_evaluation(no_sandbox: None, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, err, _ = _legacy(tmp_path, capsys, limits="authors")  # other limits, other verdicts: a run of its own
    assert code in (0, 1), err
    ids = sorted(read_run(d).manifest.run_id for d in (tmp_path / "runs").iterdir())
    assert len(ids) == 2 and LEGACY_ID in ids


@pytest.mark.needs("bubblewrap")
def test_a_run_in_bubblewrap_never_resumes_an_unsandboxed_one(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, err, run = _legacy(tmp_path, capsys, unsafe=False)  # its default directory: the unsandboxed run's, under one id then
    assert code == 2 and "sandbox" in err and "resume refused" in err and err.count("\n") == 1, err
    assert (LEGACY / "runs" / run.name / "samples.jsonl").read_bytes() == (run / "samples.jsonl").read_bytes()
