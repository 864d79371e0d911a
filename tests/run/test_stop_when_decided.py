"""`proctor run --baseline RUN --max-drop D --stop-when-decided` end to end, on scripted models: a clearly worse
candidate stops early with NO-GO (exit 1), the manifest records the stop, `gate` reads it, a resume says it
stopped and asks nothing, and the same command without the flag asks the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.runlog import iter_samples, read_manifest
from proctor.run.stopwhen import asking_order

N = 200


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """200 four-option items whose answer is always A: scripted:first is always right, scripted:random mostly not."""
    path = tmp_path / "items.jsonl"
    rows = [{"identifier": f"q{i}", "modality": "choiceof4", "prompt": f"Question {i}: pick one.", "response": "A",
             "choices": {"A": "yes", "B": "no", "C": "maybe", "D": "never"}, "category": "xyz"[i % 3]}
            for i in range(N)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def base(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, _, _ = _cli(capsys, "run", str(data), "--model", "scripted:first", "-o", str(tmp_path / "base"),
                      "--store", str(tmp_path / "store.sqlite"))
    assert code == 0
    return tmp_path / "base"


def _stop(data: Path, tmp_path: Path, model: str, drop: str, *more: str) -> list[str]:
    return ["run", str(data), "--model", model, "-o", str(tmp_path / "cand"), "--store",
            str(tmp_path / "store.sqlite"), "--baseline", str(tmp_path / "base"), "--max-drop", drop, *more]


def _ids(run: Path) -> list[str]:
    return [s.item_id for s in iter_samples(run / "samples.jsonl")]


def test_a_clearly_worse_candidate_stops_early_with_no_go(data: Path, base: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    argv = _stop(data, tmp_path, "scripted:random", "5", "--stop-when-decided")
    code, out, _ = _cli(capsys, *argv)
    cand = tmp_path / "cand"
    record = read_manifest(cand).sequential
    assert code == 1 and record is not None and "stopped at NO-GO after" in out
    assert record.decision == "NO-GO" and record.stopped and record.items_total == N
    assert 10 <= record.items_asked < N // 2 and record.items_asked % 10 == 0  # a look every 10 items
    assert record.ci_high < -0.05 and record.baseline_run_id == read_manifest(base).run_id
    order = asking_order([f"q{i}" for i in range(N)], 0)  # the data's order, shuffled by the default seed
    assert sorted(_ids(cand)) == sorted(order[: record.items_asked])  # the seeded order's first items, no other
    results = json.loads((cand / "results.json").read_text())
    assert results["overall"]["n"] == record.items_asked

    # resumed: says it stopped, asks nothing, same decision and exit status
    before = (cand / "samples.jsonl").read_bytes()
    code, out, err = _cli(capsys, *argv)
    assert code == 1 and "stopped at NO-GO" in err and "nothing asked again" in err
    assert (cand / "samples.jsonl").read_bytes() == before

    # gate reads the recorded decision (the sequence's bounds, not a fixed-sample interval on the items asked)
    code, out, _ = _cli(capsys, "gate", str(cand), "--baseline", str(base), "--max-drop", "5", "--json")
    got = json.loads(out)
    assert code == 1 and got["decision"] == "NO-GO" and got["sequential"]["items_asked"] == record.items_asked
    assert got["deciding"]["ci_high"] == pytest.approx(record.ci_high)
    assert got["note"].startswith("the overall decision only") and len(got["checks"]) == 1
    code, out, _ = _cli(capsys, "gate", str(cand), "--baseline", str(base), "--max-drop", "99")
    assert code == 0 and out.startswith("GO: overall (--stop-when-decided, stopped after")
    assert "the overall decision only, read from the candidate's --stop-when-decided record: no category" in out
    code, out, err = _cli(capsys, "gate", str(cand), "--baseline", str(base), "--max-drop", "5", "--per-category")
    assert code == 1 and "no category is gated" in out and "gated overall only" in err
    assert not any(line.startswith("  ") for line in out.splitlines())  # no category's check line

    # the same command without the flag: the rest is asked, the record is gone
    code, _, _ = _cli(capsys, *argv[:-5])
    assert code == 0 and len(_ids(cand)) == N and read_manifest(cand).sequential is None


def test_a_candidate_as_good_as_the_baseline_stops_with_go(data: Path, base: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, *_stop(data, tmp_path, "scripted:first", "10", "--stop-when-decided"))
    record = read_manifest(tmp_path / "cand").sequential
    assert code == 0 and record is not None and record.decision == "GO" and record.stopped
    assert record.items_asked < N and record.ci_low > -0.10 and "stopped at GO after" in out


@pytest.mark.parametrize(("argv", "says"), [
    (["--max-drop", "5", "--stop-when-decided"], "--stop-when-decided: give the baseline"),
    (["--baseline", "base", "--max-drop", "5"], "a baseline and --max-drop go with --stop-when-decided"),
    (["--baseline", "nowhere", "--max-drop", "5", "--stop-when-decided"], "--baseline: nowhere:"),
    (["--baseline", "base", "--max-drop", "100", "--stop-when-decided"], "--max-drop"),
    (["--baseline", "base", "--max-drop", "5", "--stop-when-decided", "--shard", "1/2"], "not with --shard"),
    (["--baseline", "base", "--max-drop", "5", "--stop-when-decided", "--epochs", "2"], "another setting"),
])
def test_what_cannot_be_paired_is_refused_in_one_line(argv: list[str], says: str, data: Path, base: Path,
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(capsys, "run", str(data), "--model", "scripted:random", "-o", str(tmp_path / "cand"),
                        "--store", str(tmp_path / "store.sqlite"), *argv)
    assert code == 2 and says in err and err.count("\n") == 1, err
    assert not (tmp_path / "cand").exists()


def test_a_stopped_run_is_partial_and_never_replaces_the_full_run(data: Path, base: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """#47 case 1: the full run, then the same evaluation stopped early. One run id, two records: the stopped one is
    partial (n of N), kept beside the full run, marked wherever it is shown, and never ranked."""
    store = str(tmp_path / "store.sqlite")
    assert _cli(capsys, "run", str(data), "--model", "scripted:random", "-o", str(tmp_path / "other"),
                "--store", store)[0] == 0
    code, out, _ = _cli(capsys, *_stop(data, tmp_path, "scripted:first", "10", "--stop-when-decided"))
    cand = tmp_path / "cand"
    full, stopped = read_manifest(base), read_manifest(cand)
    assert code == 0 and stopped.run_id == full.run_id  # the same evaluation: one id
    assert stopped.partial is not None and stopped.partial.total == N and stopped.partial.asked < N
    mark = f"partial {stopped.partial.asked}/{N}"

    code, out, _ = _cli(capsys, "runs", "--store", store, "--json")
    listed = [r for r in json.loads(out) if r["run_id"] == full.run_id]
    assert code == 0 and len(listed) == 2  # the stopped run recorded beside the full run, not over it
    by_path = {Path(r["path"]).name: r for r in listed}
    assert by_path["base"]["partial"] is None and by_path["base"]["n_scored"] == N
    assert by_path["cand"]["partial"] == {"asked": stopped.partial.asked, "total": N}
    assert by_path["cand"]["partial_label"] == mark
    code, out, _ = _cli(capsys, "history", "--model", "scripted:first", "--dataset", "items", "--store", store)
    assert code == 0 and mark in out and out.count(full.run_id[:12]) == 2

    code, out, err = _cli(capsys, "leaderboard", "items", "--store", store, "--json")
    (board,) = json.loads(out)
    assert code == 0 and board["n_items"] == N  # every model ranked on the full run's items
    assert {e["model"]: e["run_id"] for e in board["entries"]}["scripted:first"] == full.run_id
    assert any("partial" in w and mark in w for w in board["warnings"])

    other = read_manifest(tmp_path / "other").run_id
    code, out, err = _cli(capsys, "compare", full.run_id, other, "--store", store, "--json")  # an id: the full run
    got = json.loads(out)
    assert code == 0 and got["overall"]["n"] == N and got["a"]["partial"] is None
    code, out, err = _cli(capsys, "compare", str(base), str(cand))
    assert code == 0 and "same run" not in out + err and "one evaluation" in out + err and mark in out + err
    code, out, err = _cli(capsys, "gate", str(base), "--baseline", str(cand), "--max-drop", "10")
    assert "the baseline" in err and mark in err  # gated against a partial baseline: said

    code, _, err = _cli(capsys, "report", str(base), str(cand), "-o", str(tmp_path / "report.md"), "--store", store)
    report = (tmp_path / "report.md").read_text()
    assert code == 0 and "shown once" not in err and mark in report  # both runs shown, the stopped one marked

    # the same command without the flag asks the rest: the directory is a complete run, its partial record gone
    assert _cli(capsys, *_stop(data, tmp_path, "scripted:first", "10")[:-4])[0] == 0
    code, out, _ = _cli(capsys, "runs", "--store", store, "--json")
    assert [r["partial"] for r in json.loads(out) if r["run_id"] == full.run_id] == [None]


@pytest.mark.parametrize("other", ["answers", "items"])
def test_a_baseline_over_other_data_is_refused_before_the_first_look(other: str, data: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """#51 item 2(a): a baseline run on other data (the same ids with other answers, or other items) is refused in
    one line, exit 2, before anything is asked (it was NO-GO at −100 points after 10 items, without a word)."""
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    if other == "answers":
        rows = [{**r, "response": "B"} for r in rows]
    else:
        rows = [{**r, "identifier": f"x{i}"} for i, r in enumerate(rows)] + rows[:20]
    elsewhere = tmp_path / "other" / "items.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _cli(capsys, "run", str(elsewhere), "--model", "scripted:first", "-o", str(tmp_path / "base"),
                "--store", str(tmp_path / "store.sqlite"))[0] == 0
    code, _, err = _cli(capsys, *_stop(data, tmp_path, "scripted:first", "5", "--stop-when-decided"))
    assert code == 2 and ("evaluated other data" in err or "does not hold" in err) and err.count("\n") == 1, err
    assert not (tmp_path / "cand").exists()


def _answers(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], every: int) -> Path:
    """A `scripted:file=` answer file right on every item but those with i % every == 1 (those prompts error)."""
    assert _cli(capsys, "run", str(data), "--model", "scripted:echo", "-o", str(tmp_path / "echo"),
                "--store", str(tmp_path / "store.sqlite"))[0] == 0
    prompts = {s.item_id: s.raw_output for s in iter_samples(tmp_path / "echo" / "samples.jsonl")}
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "answer": "The answer is (A)"}) + "\n"
                            for i, p in prompts.items() if not every or int(i[1:]) % every != 1))
    return path


@pytest.mark.parametrize("every", [2, 10])
def test_errors_never_count_toward_a_decision_and_the_same_command_retries_them(
        every: int, data: Path, base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#51 item 2(b): half the samples errored is never GO (it was GO, the errors left out); a tenth errored is GO
    only as a bound (each counted wrong). Either way the same command again asks the errored samples again (a
    stopped run repeated its errors forever: the resume said "stopped" and asked nothing)."""
    answers = _answers(data, tmp_path, capsys, every)
    argv = _stop(data, tmp_path, f"scripted:file={answers}", "30", "--stop-when-decided", "--max-error-rate", "1")
    code, out, err = _cli(capsys, *argv)
    record = read_manifest(tmp_path / "cand").sequential
    assert record is not None and record.samples_errored > 0, out + err
    if every == 2:
        assert record.decision == "INCONCLUSIVE" and record.ci_low < -0.3 and not record.stopped
    else:
        assert code == 0 and record.decision == "GO" and record.ci_low > -0.3 and "counted wrong for GO" in out
    _answers(data, tmp_path, capsys, 0)  # now every prompt is answered
    code, out, err = _cli(capsys, *argv)
    samples = list(iter_samples(tmp_path / "cand" / "samples.jsonl"))
    latest = {s.sample_id: s for s in samples}
    record = read_manifest(tmp_path / "cand").sequential
    assert code == 0 and record is not None and record.decision == "GO" and record.samples_errored == 0, out + err
    assert not [s for s in latest.values() if s.outcome.value == "error"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_hand_edited_decision_is_refused_by_gate_the_run_command_and_resume(
        data: Path, base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#51 item 2(c): NO-GO edited to GO in the run directory's manifest was printed as GO by `gate` and the run
    command; the decision is held to the run's checksums: one line, exit 2."""
    argv = _stop(data, tmp_path, "scripted:random", "5", "--stop-when-decided")
    assert _cli(capsys, *argv)[0] == 1
    _edit(tmp_path / "cand" / "manifest.json", '"decision": "NO-GO"', '"decision": "GO"')
    for command in (argv, ["gate", str(tmp_path / "cand"), "--baseline", str(base), "--max-drop", "5"]):
        code, out, err = _cli(capsys, *command)
        assert code == 2 and "does not verify" in err and "manifest.json" in err and err.count("\n") == 1, out + err
        assert "GO" not in out


@pytest.mark.parametrize("checksums", ["stale", "rewritten"])
def test_a_baseline_edited_between_looks_is_refused(checksums: str, data: Path, base: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """#51 item 2(c): a baseline edited after the candidate's sequence looked at it (its checksums stale, or
    written anew to match) is refused by the run command (a resume) and by `gate`, not used silently."""
    from proctor.log.checksums import write_checksums

    argv = _stop(data, tmp_path, "scripted:random", "5", "--stop-when-decided")
    assert _cli(capsys, *argv)[0] == 1
    lines = (base / "samples.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({**first, "score": 0.0, "outcome": "wrong"})
    (base / "samples.jsonl").write_text("\n".join(lines) + "\n")
    if checksums == "rewritten":
        write_checksums(base)
    for command in (argv, ["gate", str(tmp_path / "cand"), "--baseline", str(base), "--max-drop", "5"]):
        code, out, err = _cli(capsys, *command)
        says = "does not verify" if checksums == "stale" else "changed since"  # gate holds a run dir to its checksums
        assert code == 2 and says in err and err.count("\n") == 1, out + err
