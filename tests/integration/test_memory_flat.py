"""#40: memory flat in the samples. The same items asked 5 and 25 times (1,000 and 5,000 samples): what each step
holds at its peak (Python objects, `tracemalloc`) grows by a few bytes a sample, never by a sample's ~4.8 KB —
run, a run resumed half-way, report, the three exports, and the merge of a sharded run. The bench at 24k/120k/1M is
`bench/bench_scale.py` (docs/benchmarks.md §8b)."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.cli import main

pytestmark = pytest.mark.long

ITEMS = 200
FEW, MANY = 5, 25  # epochs: 1,000 and 5,000 samples
PER_SAMPLE = 400  # bytes a sample the peak may grow by (holding the samples: ~4,800)


def _items(path: Path) -> Path:
    with path.open("w") as f:
        for i in range(ITEMS):
            f.write(json.dumps({"identifier": f"m.{i}", "modality": "choiceof4", "prompt": f"Item {i}: which one?",
                                "response": "ABCD"[i % 4], "choices": {k: f"{k} of {i}" for k in "ABCD"},
                                "category": ["x", "y", "z"][i % 3]}) + "\n")
    return path


def _peak(step: Callable[[], None]) -> int:
    """The traced peak of `step` above what was held before it."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    try:
        step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _cli(*argv: str) -> None:
    assert main(list(argv)) == 0, argv


class _Steps:
    """The steps at one number of epochs, each a call of the CLI in this process; `rep` keeps each repetition's
    outputs apart (a run asked again in its own directory would only be finished, not run)."""

    def __init__(self, root: Path, data: Path, epochs: int) -> None:
        self.root, self.data, self.epochs = root, data, epochs
        self.store = str(root / "store.sqlite")
        self.shards = [root / "shards" / f"shard-{k}-of-2" for k in (1, 2)]

    def _run(self, out: Path, *extra: str) -> None:
        _cli("run", str(self.data), "--model", "scripted:random", "--epochs", str(self.epochs), "--store", self.store,
             "--no-progress", "--no-cache", "-o", str(out), *extra)

    def measured(self, rep: int) -> dict[str, Callable[[], None]]:
        run, out = self.root / "run0", self.root / f"rep{rep}"
        return {
            "run": lambda: self._run(self.root / f"run{rep}"),
            "report": lambda: _cli("report", str(run), "-o", str(out / "r.html"), "--store", self.store,
                                   "--max-samples", "100"),  # the sample browser's own bound, reached at both
            **{f"export {fmt}": (lambda fmt=fmt: _cli("export", str(run), "--to", fmt, "-o", str(out / fmt)))
               for fmt in ("inspect", "eee", "llmwc")},
            "merge": lambda: _cli("merge", *map(str, self.shards), "-o", str(out / "merged"), "--store", self.store),
            "resume": lambda: self._run(self._killed_half_way(out / "resumed")),
        }

    def _killed_half_way(self, out: Path) -> Path:
        """A copy of the run as a kill half-way leaves it: the first half of its samples, no results."""
        shutil.copytree(self.root / "run0", out)
        for name in ("results.json", "checksums.json"):
            (out / name).unlink()
        samples = out / "samples.jsonl"
        with samples.open("rb") as f:
            kept = b"".join(line for _, line in zip(range(ITEMS * self.epochs // 2), f, strict=False))
        samples.write_bytes(kept)
        return out

    def make_shards(self) -> None:
        for k, shard in enumerate(self.shards, start=1):
            self._run(shard, "--shard", f"{k}/2")


def test_each_step_holds_a_few_bytes_a_sample_at_its_peak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step's peak, the lower of two tries (a global table that grows once, such as the interned strings',
    lands in one of them), at 1,000 and 5,000 samples. The run's dispatch window is set to 256 samples so that
    both sizes fill it (its bound, 8,192 samples, is a constant: `run.runner.WINDOW_SAMPLES`)."""
    pytest.importorskip("inspect_ai")
    from proctor.run import runner

    monkeypatch.setattr(runner, "WINDOW_SAMPLES", 256)
    data = _items(tmp_path / "items.jsonl")
    warm, few, many = (_Steps(tmp_path / name, data, epochs) for name, epochs in
                       (("warm", 1), ("few", FEW), ("many", MANY)))
    for steps in (warm, few, many):
        steps.make_shards()
        steps.measured(0)["run"]()  # the run the report and the exports read
    for step in warm.measured(1).values():  # imports and one-time caches, before anything is measured
        step()
    peaks = {scale: {name: min(_peak(steps.measured(rep)[name]) for rep in (1, 2)) for name in steps.measured(1)}
             for scale, steps in (("few", few), ("many", many))}
    grown = {name: (peaks["many"][name] - peaks["few"][name]) / (ITEMS * (MANY - FEW)) for name in peaks["few"]}
    print({name: round(b) for name, b in grown.items()})
    assert all(per_sample < PER_SAMPLE for per_sample in grown.values()), grown
