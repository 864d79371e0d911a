from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from history_runs import binary, write_run
from mounts import tmpfs

import proctor
from proctor.core.model import (
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
)
from proctor.run.store import STORE_ENV, Store, default_store_path, model_identity, request_key
from proctor.util.errors import InputError

SRC = str(Path(proctor.__file__).resolve().parents[1])


def _gen(text: str, temperature: float = 0.0, max_tokens: int | None = 64) -> GenerateRequest:
    return GenerateRequest((Message("user", text),), GenerationSettings(temperature=temperature, max_tokens=max_tokens))


MODEL = model_identity({"spec": "hf:tiny", "revision": "abc", "device": "cuda:0", "api_key": "sk-secret"})


def test_cache_round_trip_both_response_types(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    g = Generation(text="B", finish_reason="stop", input_tokens=12, output_tokens=1, reasoning="hmm", latency_s=0.25)
    ll = Loglikelihood(logprob=-1.25, n_tokens=3, is_greedy=True)
    kg = request_key(MODEL, _gen("Q?"))
    kl = request_key(MODEL, LoglikelihoodRequest("The sky is", " blue"))
    assert store.put_many([(kg, g), (kl, ll)]) == 2
    store.close()
    with Store(tmp_path / "s.sqlite") as again:  # survives reopening
        got = again.get_many([kg, kl, "missing"])
        assert got == {kg: g, kl: ll}
        assert (again.stats.hits, again.stats.misses) == (2, 1)


def test_a_replys_tool_calls_come_back_from_the_cache_as_calls(tmp_path: Path) -> None:
    from proctor.core.tools import ToolCall

    g = Generation(text="", finish_reason="tool_calls", tool_calls=(ToolCall("c1", "a.b", '{"x": 1}'),))
    key = request_key(MODEL, _gen("call it"))
    with Store(tmp_path / "s.sqlite") as store:
        store.put_many([(key, g)])
        assert store.get_many([key]) == {key: g}


def test_key_depends_on_model_request_and_settings_not_on_volatile_fields() -> None:
    base = request_key(MODEL, _gen("Q?"))
    assert base == request_key(model_identity({"spec": "hf:tiny", "revision": "abc", "device": "cpu"}), _gen("Q?"))
    assert "api_key" not in MODEL and "device" not in MODEL
    assert base != request_key(model_identity({"spec": "hf:tiny", "revision": "def"}), _gen("Q?"))
    assert base != request_key(model_identity("hf:other"), _gen("Q?"))
    assert base != request_key(MODEL, _gen("Q? "))
    assert base != request_key(MODEL, _gen("Q?", max_tokens=65))
    assert base != request_key(MODEL, LoglikelihoodRequest("Q?", ""))
    # greedy: every epoch shares an entry; sampled: one entry per sample index
    assert request_key(MODEL, _gen("Q?"), sample_index=3) == base
    hot = _gen("Q?", temperature=0.7)
    assert request_key(MODEL, hot, 0) != request_key(MODEL, hot, 1)
    assert request_key(MODEL, LoglikelihoodRequest("a", "b"), 0) == request_key(MODEL, LoglikelihoodRequest("a", "b"), 5)


def test_errored_responses_are_never_cached(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    ok, bad, bad_ll = (request_key(MODEL, _gen(t)) for t in ("ok", "bad", "bad-ll"))
    stored = store.put_many([(ok, Generation(text="A")), (bad, Generation(error="HTTP 500 after 5 tries")),
                             (bad_ll, Loglikelihood(error="timeout"))])
    assert stored == 1 and store.stats.skipped_errors == 2
    assert set(store.get_many([ok, bad, bad_ll])) == {ok}
    assert store.cache_size() == 1
    assert store.clear_cache() == 1 and store.cache_size() == 0


def test_default_path_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STORE_ENV, str(tmp_path / "mine.sqlite"))
    assert default_store_path() == tmp_path / "mine.sqlite"
    monkeypatch.delenv(STORE_ENV)
    assert default_store_path().name == "store.sqlite" and "proctor" in str(default_store_path())


def test_not_a_store_is_input_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database, just text that is long enough to be read as a header" * 10)
    with pytest.raises(InputError, match="not a proctor store"):
        Store(junk)
    with pytest.raises(InputError, match="is a directory"):
        Store(tmp_path)


def test_write_waits_out_a_held_lock(tmp_path: Path) -> None:
    """Another connection holds the write lock longer than busy_timeout: the retry loop still gets through."""
    path = tmp_path / "s.sqlite"
    Store(path).close()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.6, lambda: other.execute("COMMIT"))
    release.start()
    store = Store(path, timeout=0.05)
    t0 = time.monotonic()
    assert store.put(request_key(MODEL, _gen("x")), Generation(text="y"))
    assert time.monotonic() - t0 >= 0.5
    release.join()
    other.close()


_WORKER = textwrap.dedent("""
    import pathlib, sys, time
    from proctor.core.model import GenerateRequest, Generation, Message
    from proctor.run.store import Store, model_identity, request_key
    path, me, n, peers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    store = Store(path, timeout=0.01)  # a tiny busy_timeout: contention goes through the retry loop
    mid = model_identity("scripted:w")
    key = lambda w, i: request_key(mid, GenerateRequest((Message("user", f"{w}-{i}"),)))
    pathlib.Path(f"{path}.ready{me}").touch()  # barrier: start writing together
    while not all(pathlib.Path(f"{path}.ready{w}").exists() for w in range(peers)):
        time.sleep(0.005)
    t0 = time.time()
    for i in range(n):
        store.put_many([(key(me, i), Generation(text=f"{me}:{i}"))])  # one short transaction per answer
        store.get_many([key((me + 1) % peers, j) for j in range(max(0, i - 5), i + 1)])  # read a peer's rows
    got = store.get_many([key(me, i) for i in range(n)])
    assert all(got[key(me, i)].text == f"{me}:{i}" for i in range(n)), "own rows missing"
    print("ok", t0, time.time(), store.stats.busy_retries)
""")


def test_several_processes_share_one_store(tmp_path: Path) -> None:
    path, workers, n = tmp_path / "shared.sqlite", 4, 150
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(path), str(w), str(n), str(workers)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for w in range(workers)
    ]
    spans = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ok, start, end, _retries = out.split()
        assert ok == "ok" and "locked" not in err
        spans.append((float(start), float(end)))
    assert max(s for s, _ in spans) < min(e for _, e in spans), "the writers did not overlap in time"
    with Store(path) as store:
        assert store.cache_size() == workers * n
        mid = model_identity("scripted:w")
        keys = [request_key(mid, GenerateRequest((Message("user", f"{w}-{i}"),))) for w in range(workers)
                for i in range(n)]
        assert len(store.get_many(keys)) == workers * n


def test_record_run_is_idempotent_and_queryable(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = write_run(tmp_path / "runs", "run-a", "hf:a", binary(10, range(7)), started_at="2025-01-01T00:00:00+00:00")
    rec = store.record_run(run)
    again = store.record_run(run)
    assert rec == again
    assert [r.run_id for r in store.list_runs()] == ["run-a"]
    assert rec.model == "hf:a" and rec.dataset == "synth" and rec.dataset_revision == "rev1"
    assert rec.dataset_hash == "hash1" and rec.template_hash == "tmpl1" and rec.prompt_kind == "zero_shot"
    assert rec.accuracy == pytest.approx(0.7) and rec.n_scored == 10
    assert set(rec.by_category) == {"law", "math"} and set(rec.by_modality) == {"choiceof4"}
    scores = store.run_scores("run-a")
    assert len(scores.items) == 10 and sum(s.score for s in scores.items.values()) == 7
    n_items = store._read("SELECT COUNT(*) FROM run_items")[0][0]
    assert n_items == 10  # recording twice did not duplicate per-item rows


def test_history_filters_order_and_epoch_averaging(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    runs = tmp_path / "runs"
    store.record_run(write_run(runs, "r2", "hf:a", binary(4, {0}), started_at="2025-02-01T00:00:00+00:00"))
    store.record_run(write_run(runs, "r1", "hf:a", binary(4, {0, 1}), started_at="2025-01-01T00:00:00+00:00"))
    store.record_run(write_run(runs, "r3", "hf:b", binary(4, {0}), dataset="other"))
    store.record_run(write_run(runs, "r4", "hf:b", {"q-000": [1.0, 0.0], "q-001": [1.0, None], "q-002": None}))
    assert [r.run_id for r in store.history("hf:a", "synth")] == ["r1", "r2"]  # oldest first
    assert [r.run_id for r in store.list_runs(model="hf:a")] == ["r2", "r1"]  # newest first
    assert [r.run_id for r in store.list_runs(dataset="other")] == ["r3"]
    assert {r.model for r in store.latest_runs("synth")} == {"hf:a", "hf:b"}
    assert [r.run_id for r in store.latest_runs("synth") if r.model == "hf:a"] == ["r2"]
    items = store.run_scores("r4").items
    assert items["q-000"].score == 0.5 and items["q-000"].n_epochs == 2
    assert items["q-001"].score == 1.0 and items["q-001"].n_epochs == 1  # the errored epoch is left out
    assert "q-002" not in items  # nothing scored
    assert store.find_run("r") is None  # too short to be a prefix
    with pytest.raises(InputError, match="no recorded run"):
        store.get_run("nope")


def test_unfinished_run_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path, "r", "hf:a", binary(3, {0}))
    (run / "results.json").unlink()
    with pytest.raises(InputError, match="no results.json"):
        Store(tmp_path / "s.sqlite").record_run(run)


@pytest.fixture
def read_only_mount(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A tmpfs to fill, then remount read-only (needs root and mount); skipped where it cannot be mounted."""
    with tmpfs(tmp_path / "ro", "size=4m") as mnt:
        yield mnt


def test_a_valid_store_on_a_read_only_file_system_is_opened_read_only(
        read_only_mount: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 #26: a store on a read-only file system was "not a proctor store"; it is read, and a write to
    it is one line saying it is read-only."""
    from proctor.cli import main

    store = tmp_path / "s.sqlite"
    run = write_run(tmp_path, "r1", "openai:m", binary(8, range(3)))
    with Store(store) as s:
        s.record_run(read_run_for_store(run))
    import shutil as sh

    sh.copy(store, read_only_mount / "s.sqlite")
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    capsys.readouterr()
    assert main(["runs", "--store", str(read_only_mount / "s.sqlite")]) == 0, capsys.readouterr().err
    with Store(read_only_mount / "s.sqlite") as s:
        assert len(s.list_runs()) == 1
        with pytest.raises(InputError, match="read-only") as caught:
            s.record_run(read_run_for_store(run))
    assert "\n" not in str(caught.value)


def read_run_for_store(run: Path):  # type: ignore[no-untyped-def]
    from proctor.metrics.results import read_run

    return read_run(run)


def test_finalize_gathers_the_history_rows_in_the_summarys_pass_as_recording_the_directory_does(
        tmp_path: Path) -> None:
    """finalize_run reads the samples once for results.json and the history's item rows (`ItemRows` gathered in
    the summary's pass); the rows equal those recording the directory afterwards reads from disk."""
    from proctor.run.finalize import finalize_run

    run = write_run(tmp_path / "runs", "r", "hf:a", {"q-000": [1.0, 0.0], "q-001": [1.0, None], "q-002": None,
                                                   "q-003": 0.5}, epochs=2)
    once, again = Store(tmp_path / "once.sqlite"), Store(tmp_path / "again.sqlite")
    finalize_run(run, once)
    again.record_run(run)
    query = "SELECT item_id, epoch, category, modality, score, outcome FROM run_items ORDER BY item_id, epoch"
    assert once._read(query) == again._read(query) and len(once._read(query)) == 6  # 2 + 2 + 1 + 1 samples
    assert once.run_scores("r") == again.run_scores("r")
