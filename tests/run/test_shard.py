"""`--shard K/N` and `proctor merge`: stable disjoint slices; merged shards equal the unsharded run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.metrics.results import read_run
from proctor.run.shard import Shard, bucket
from proctor.util.errors import ProctorError

DEMO = Path(__file__).resolve().parents[2] / "examples" / "items" / "multiple-choice.jsonl"


def test_shards_are_stable_disjoint_and_complete() -> None:
    ids = [f"item-{i}" for i in range(500)]
    shards = [Shard(k, 4) for k in range(1, 5)]
    held = [[i for i in ids if s.holds(i)] for s in shards]
    assert sorted(i for h in held for i in h) == sorted(ids)  # every item once
    assert all(60 < len(h) < 190 for h in held)  # and roughly even
    assert [bucket(i, 4) for i in ids] == [bucket(i, 4) for i in ids]


@pytest.mark.parametrize("text", ["3", "0/3", "4/3", "a/b", "1/0"])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(ProctorError, match="--shard"):
        Shard.parse(text)


def _run(tmp_path: Path, out: str, *extra: str) -> None:
    argv = ["run", str(DEMO), "--model", "scripted:random", "--epochs", "2", "--temperature", "0.7",
            "--store", str(tmp_path / "s.sqlite"), "--no-progress", "-o", str(tmp_path / out), *extra]
    assert main(argv) == 0


def _samples(run: Path) -> list[dict[str, object]]:
    rows = [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines() if x.strip()]
    for r in rows:
        r.pop("latency_s", None)
        r.pop("cached_requests", None)  # how an answer was got (the shards reuse the full run's from the cache)
    return rows


def test_three_shards_merged_equal_the_unsharded_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, "full")
    for k in (1, 2, 3):
        _run(tmp_path, f"s{k}", "--shard", f"{k}/3")
    counts = [len(read_run(tmp_path / f"s{k}").samples) for k in (1, 2, 3)]
    assert sum(counts) == 32 and all(0 < c < 32 for c in counts)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s3"), str(tmp_path / "s1"), str(tmp_path / "s2"), "-o",
                 str(tmp_path / "merged"), "--store", str(tmp_path / "s.sqlite")]) == 0
    assert "accuracy" in capsys.readouterr().out
    full, merged = read_run(tmp_path / "full"), read_run(tmp_path / "merged")
    assert _samples(tmp_path / "merged") == _samples(tmp_path / "full")
    assert full.results is not None and merged.results is not None
    for key in ("accuracy", "ci_low", "ci_high", "n_scored"):
        assert getattr(merged.results.overall, key) == getattr(full.results.overall, key)
    assert merged.results.model_dump(exclude={"computed_at"}) == full.results.model_dump(exclude={"computed_at"})
    assert merged.manifest.run_id == full.manifest.run_id and merged.manifest.merged_from is not None


def test_merge_refuses_other_runs_missing_or_repeated_shards(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, "a1", "--shard", "1/2")
    _run(tmp_path, "a2", "--shard", "2/2")
    _run(tmp_path, "b2", "--shard", "2/2", "--max-tokens", "64")
    cases = {
        ("a1", "b2"): "shard of another run",
        ("a1",): "shard(s) 2/2 missing",
        ("a1", "a1", "a2"): "given twice",
    }
    for dirs, message in cases.items():
        capsys.readouterr()
        code = main(["merge", *(str(tmp_path / d) for d in dirs), "-o", str(tmp_path / "m"), "--no-history"])
        err = capsys.readouterr().err
        assert code == 2 and message in err, err
        assert not (tmp_path / "m").exists()
    (tmp_path / "plain").mkdir()
    assert main(["merge", str(tmp_path / "plain"), "-o", str(tmp_path / "m"), "--no-history"]) == 2
    assert "not a shard" in capsys.readouterr().err


def test_one_directory_holds_one_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, "x", "--shard", "1/2")
    capsys.readouterr()
    argv = ["run", str(DEMO), "--model", "scripted:random", "--epochs", "2", "--temperature", "0.7", "--store",
            str(tmp_path / "s.sqlite"), "--no-progress", "-o", str(tmp_path / "x"), "--shard", "2/2"]
    assert main(argv) == 2 and "holds shard 1/2" in capsys.readouterr().err


def test_merge_refuses_one_sample_with_two_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 #5: the same sample in two shards with different outcomes is refused, naming it and both
    shards (never "whichever came last on the command line")."""
    _run(tmp_path, "a1", "--shard", "1/2")
    _run(tmp_path, "a2", "--shard", "2/2")
    rows = (tmp_path / "a1" / "samples.jsonl").read_text().splitlines()
    stolen = json.loads(rows[0])
    stolen.update(outcome="correct" if stolen["outcome"] != "correct" else "wrong",
                  score=1.0 if stolen["outcome"] != "correct" else 0.0)
    with (tmp_path / "a2" / "samples.jsonl").open("a") as f:
        f.write(json.dumps(stolen) + "\n")
    for order in (("a1", "a2"), ("a2", "a1")):
        capsys.readouterr()
        code = main(["merge", *(str(tmp_path / d) for d in order), "-o", str(tmp_path / "m"), "--no-history"])
        err = capsys.readouterr().err
        assert code == 2 and stolen["sample_id"] in err and "a1" in err and "a2" in err, err
        assert len(err.strip().splitlines()) == 1 and not (tmp_path / "m").exists()


def test_a_merge_cut_short_leaves_nothing_and_a_retry_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 #8: merge builds the run in a staging folder and swaps it in whole: a kill (here ctrl-C while
    results.json is written) leaves no manifest nor partial samples at `-o`, and the same merge then works."""
    import proctor.run.finalize

    _run(tmp_path, "a1", "--shard", "1/2")
    _run(tmp_path, "a2", "--shard", "2/2")
    argv = ["merge", str(tmp_path / "a1"), str(tmp_path / "a2"), "-o", str(tmp_path / "m"), "--no-history"]

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(proctor.run.finalize, "write_results", killed)
        assert main(argv) == 130
    assert not (tmp_path / "m").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".m.")]
    assert main(argv) == 0
    merged = read_run(tmp_path / "m")
    assert merged.results is not None and len(merged.samples) == 32


def test_a_shard_with_no_items_runs_and_the_merge_completes(tmp_path: Path) -> None:
    """Issue 32 #7: `--shard 1/8` of the 16 demo items holds none (bucket 0 is empty): it writes a valid
    empty shard run, so `merge` of the eight shards completes and equals the unsharded run."""
    assert not [line for line in DEMO.read_text().splitlines() if Shard(1, 8).holds(json.loads(line)["identifier"])]
    _run(tmp_path, "full")
    for k in range(1, 9):
        _run(tmp_path, f"s{k}", "--shard", f"{k}/8")
    empty = read_run(tmp_path / "s1")
    assert empty.samples == [] and empty.manifest.shard == "1/8" and (tmp_path / "s1" / "shard.json").is_file()
    _run(tmp_path, "s1", "--shard", "1/8")  # and a re-run of it is a no-op, not an error
    assert main(["merge", *(str(tmp_path / f"s{k}") for k in range(1, 9)), "-o", str(tmp_path / "m"),
                 "--no-history"]) == 0
    assert _samples(tmp_path / "m") == _samples(tmp_path / "full")


@pytest.mark.parametrize("text", ['{"shard": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"shard": "²/3", "order": []}'])
def test_a_damaged_shard_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    """Issue 32 #12: shard.json nested 100k deep (read without the depth guard) is one line, exit 2."""
    _run(tmp_path, "a1", "--shard", "1/2")
    _run(tmp_path, "a2", "--shard", "2/2")
    (tmp_path / "a2" / "shard.json").write_text(text)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "a1"), str(tmp_path / "a2"), "-o", str(tmp_path / "m"), "--no-history"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "shard.json" in err and "Traceback" not in err, err
    assert main(["run", str(DEMO), "--model", "scripted:random", "--epochs", "2", "--temperature", "0.7",
                 "--no-history", "--no-progress", "-o", str(tmp_path / "a2"), "--shard", "2/2"]) in (0, 2)


@pytest.mark.parametrize("text", ["²/3", "1/²", "٣/4", "1/" + "9" * 5000, "1/" + "9" * 30, "1/-3", " /3"])
def test_odd_digits_and_huge_counts_are_refused(text: str) -> None:
    """Issue 32 #16: `²` is a digit to str.isdigit but int() refuses it; 5,000 digits overflow int()."""
    with pytest.raises(ProctorError, match="--shard") as caught:
        Shard.parse(text)
    assert len(str(caught.value)) < 200 and "\n" not in str(caught.value)


def test_a_bad_shard_on_the_command_line_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["run", str(DEMO), "--model", "scripted:first", "--shard", "²/3", "-o", str(tmp_path / "r"),
                 "--no-history", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--shard" in err and not (tmp_path / "r").exists(), err


def test_a_shards_order_is_held_as_items_times_epochs_when_it_is_that() -> None:
    """#40: the run's order (120k ids in each shard's shard.json) is held as its items and epochs; any other order
    is kept as it is."""
    from proctor.log.runlog import EpochMajor
    from proctor.run.shard import compact_order

    ids = [f"{item}#{epoch}" for epoch in range(3) for item in ("a.1", "b.2", "c.3")]
    compact = compact_order(list(ids))
    assert isinstance(compact, EpochMajor) and list(compact) == ids and compact.item_ids == ["a.1", "b.2", "c.3"]
    single = ["a.1#0", "b.2#0"]
    assert list(compact_order(single)) == single
    for other in ([], ids[::-1], ids[:-1], ["a#0", "b#0", "a#1", "c#1"], ["a#0", "b#0", "b#1", "a#1"]):
        assert list(compact_order(list(other))) == other


def test_the_merge_finds_each_samples_shard_by_its_position_for_any_shard_count() -> None:
    """#40: the owner of each sample is held at its position in the order; a shard position past 32,767 (up to
    MAX_SHARDS jobs) is kept, and an id outside the order (another epoch, a padded one) has none."""
    from proctor.log.runlog import EpochMajor
    from proctor.run.shard import _Owners

    for order in (EpochMajor(["a.1", "b.2"], 2), ["a.1#0", "b.2#0", "a.1#1", "b.2#1"]):
        owners = _Owners(order)
        owners.give("b.2#1", 999_999)
        owners.give("a.1#0", 3)
        owners.give("a.1#2", 5)
        owners.give("a.1#01", 5)
        assert [owners.get(sid) for sid in order] == [3, None, None, 999_999]
        assert owners.get("a.1#2") is None and owners.get("a.1#01") is None and owners.get("c#0") is None
