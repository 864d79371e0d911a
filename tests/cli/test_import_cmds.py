"""`proctor import` of lm-eval and Inspect output: a normal run that report, compare, history and leaderboard
read, paired item by item with a proctor run of the same items; hostile input is one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_sources import N_ITEMS, inspect_eval, items_file, lmeval_results, lmeval_root
from mounts import tmpfs

from proctor.cli import main
from proctor.metrics.results import read_run

__all__ = ["inspect_eval", "items_file", "lmeval_results", "lmeval_root"]  # fixtures, shared with tests/importers


def _proctor_run(items: Path, tmp_path: Path, store: Path) -> Path:
    out = tmp_path / "proctor-run"
    assert main(["run", str(items), "--model", "scripted:first", "-o", str(out), "--store", str(store)]) == 0
    return out


def _import(tmp_path: Path, store: Path, *args: str) -> Path:
    assert main(["import", *args, "--store", str(store), "--runs-root", str(tmp_path / "runs")]) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


@pytest.mark.parametrize("source", ["lmeval_results", "inspect_eval"])
def test_compare_pairs_an_imported_run_with_a_proctor_run_item_by_item(
        source: str, items_file: Path, tmp_path: Path, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "history.sqlite"
    ours = _proctor_run(items_file, tmp_path, store)
    dataset = read_run(ours).manifest.dataset.name
    theirs = _import(tmp_path, store, str(request.getfixturevalue(source)), "--item-id", "identifier" if
                     source == "lmeval_results" else "id", "--dataset", dataset, "--name", "other-harness")
    capsys.readouterr()
    # another harness's run is another setting (proctor.analysis.comparable): compared when asked, as the leaderboard does
    assert main(["compare", str(ours), str(theirs), "--store", str(store)]) == 2
    assert "different settings" in capsys.readouterr().err
    assert main(["compare", str(ours), str(theirs), "--store", str(store), "--json", "--mix-settings"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    a = {s.item_id: s.score for s in read_run(ours).samples}
    b: dict[str, list[float]] = {}
    for s in read_run(theirs).samples:
        b.setdefault(s.item_id, []).append(float(s.score or 0.0))
    mean_b = {i: sum(v) / len(v) for i, v in b.items()}  # Inspect's epochs are averaged per item, as proctor's
    assert set(a) == set(mean_b) and len(a) == N_ITEMS
    assert cmp["overall"]["n"] == N_ITEMS and cmp["only_in_a"] == cmp["only_in_b"] == []
    assert cmp["overall"]["b10"] == sum(a[i] >= 0.5 > mean_b[i] for i in a)
    assert cmp["overall"]["b01"] == sum(mean_b[i] >= 0.5 > (a[i] or 0) for i in a)
    assert cmp["overall"]["acc_b"] == pytest.approx(sum(mean_b.values()) / N_ITEMS)
    assert [g["group"] for g in cmp["by_category"]] == ["alpha", "beta"]
    assert cmp["b"]["model"] == "other-harness"
    run_id = read_run(theirs).manifest.run_id  # the history knows it: compare by run id, history, leaderboard
    assert main(["compare", str(ours), run_id[:8], "--store", str(store), "--mix-settings"]) == 0
    assert main(["history", "--model", "other-harness", "--dataset", dataset, "--store", str(store)]) == 0
    assert main(["leaderboard", dataset, "--mix-settings", "--store", str(store)]) == 0
    board = capsys.readouterr().out
    assert "other-harness" in board and "scripted:first" in board
    assert main(["report", str(theirs), "-o", str(tmp_path / "report")]) == 0


def test_ids_that_do_not_line_up_are_named_when_nothing_is_shared(
        items_file: Path, lmeval_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "history.sqlite"
    ours = _proctor_run(items_file, tmp_path, store)
    theirs = _import(tmp_path, store, str(lmeval_results))  # lm-eval's doc_id: 0, 1, 2…
    capsys.readouterr()
    assert main(["compare", str(ours), str(theirs), "--store", str(store), "--mix-settings"]) == 2
    err = capsys.readouterr().err
    assert "share no scored items: nothing to compare" in err
    assert "A's item ids: demo.0, demo.1, demo.2, …" in err and "B's item ids: 0, 1, 2, …" in err
    assert "proctor import --item-id FIELD" in err


def _hostile(tmp_path: Path, lmeval_results: Path, inspect_eval: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path given, what the error says after `path: `)."""
    bad = tmp_path / "bad"
    bad.mkdir()
    items = bad / "items.json"
    items.write_text(json.dumps({"identifier": "x", "prompt": "p"}))
    cut = bad / "results_cut.json"
    cut.write_text(lmeval_results.read_text()[:300])
    alone = bad / "alone" / lmeval_results.name
    alone.parent.mkdir()
    alone.write_text(lmeval_results.read_text())
    (samples,) = lmeval_results.parent.glob("samples_*.jsonl")
    cut_eval = bad / "cut.eval"
    cut_eval.write_bytes(inspect_eval.read_bytes()[:400])
    text = bad / "notes.txt"
    text.write_text("hello")
    (bad / "empty").mkdir()
    return {
        "another JSON": (items, "neither an lm-eval results file (results_<date>.json) nor an Inspect log"),
        "a text file": (text, "neither an lm-eval results file"),
        "truncated JSON": (cut, "malformed JSON"),
        "results without samples": (alone, "no samples file for task 'demo_mc' beside it"),
        "a samples file": (samples, "an lm-eval samples file: give the results_<date>.json beside it"),
        "truncated Inspect log": (cut_eval, "not a readable Inspect log"),
        "no such file": (bad / "missing.json", "no such file"),
        "an empty folder": (bad / "empty", "no lm-eval results_*.json nor Inspect .eval log in this folder"),
    }


def test_hostile_input_is_one_line_exit_2_and_nothing_is_written(
        lmeval_results: Path, inspect_eval: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, runs = tmp_path / "history.sqlite", tmp_path / "runs"
    for name, (path, message) in _hostile(tmp_path, lmeval_results, inspect_eval).items():
        capsys.readouterr()
        # the good file first: it is not written either when a later one is bad
        code = main(["import", str(lmeval_results), str(path), "--store", str(store), "--runs-root", str(runs)])
        err = capsys.readouterr().err
        assert code == 2, name
        assert err.startswith(f"error: {path}") and message in err, (name, err)
        assert "Traceback" not in err
        assert not runs.exists() and not store.exists(), name


def test_llmwc_results_take_no_harness_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    (results / "models").mkdir(parents=True)
    (results / "run.json").write_text("{}")
    assert main(["import", str(results), "--item-id", "question_id", "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "an llm-wc results directory: --item-id apply only to lm-eval results and Inspect logs" in \
        capsys.readouterr().err


def test_importing_again_replaces_the_same_run_and_no_history_records_nothing(
        lmeval_results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, runs = tmp_path / "history.sqlite", tmp_path / "runs"
    for _ in range(2):
        assert main(["import", str(lmeval_results), "--store", str(store), "--runs-root", str(runs)]) == 0
    assert len(list(runs.iterdir())) == 1
    capsys.readouterr()
    assert main(["runs", "--store", str(store), "--json"]) == 0
    (recorded,) = json.loads(capsys.readouterr().out)
    assert recorded["model"] == "dummy" and recorded["dataset"] == "demo_mc" and recorded["n_scored"] == N_ITEMS
    other = tmp_path / "other.sqlite"
    assert main(["import", str(lmeval_results), "--no-history", "--store", str(other), "--runs-root",
                 str(tmp_path / "runs2")]) == 0
    assert not other.exists() and len(list((tmp_path / "runs2").iterdir())) == 1


def test_a_run_exported_to_inspect_imports_back_sample_for_sample(
        items_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("inspect_ai")
    store, ours = tmp_path / "history.sqlite", tmp_path / "ours"
    assert main(["run", str(items_file), "--model", "scripted:random", "--epochs", "2", "-o", str(ours),
                 "--store", str(store)]) == 0
    assert main(["export", str(ours), "--to", "inspect", "-o", str(tmp_path / "exported")]) == 0
    back = _import(tmp_path, store, str(tmp_path / "exported"))
    original = {(s.item_id, s.epoch): (s.outcome, s.score) for s in read_run(ours).samples}
    assert {(s.item_id, s.epoch): (s.outcome, s.score) for s in read_run(back).samples} == original
    capsys.readouterr()
    assert main(["compare", str(ours), str(back), "--store", str(store), "--json", "--mix-settings"]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert overall["n"] == N_ITEMS and overall["b10"] == overall["b01"] == 0 and overall["diff"] == 0


def test_an_import_onto_a_read_only_runs_root_names_the_runs_root(
        inspect_eval: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 #26: the one line named the hidden staging folder (`RO/.NAME.x1y2.tmp`), not the runs root."""
    with tmpfs(tmp_path / "ro", "ro,size=64k") as ro:
        capsys.readouterr()
        code = main(["import", str(inspect_eval), "--runs-root", str(ro), "--store", str(tmp_path / "s.sqlite")])
        err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and f"{ro}:" in err and "/." not in err, err
    assert "Read-only file system" in err
