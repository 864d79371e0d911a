"""#41 item 3: compare, gate and the leaderboard score a run as its results do — `--no-answer guess` credits an
unanswered item 1/k and `--truncated-as excluded` leaves truncated items out — from a run directory and from the
store alike (they read raw sample scores: a run at 1/k was compared, gated and ranked at 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.metrics.results import read_run
from proctor.run.store import Store, item_scores, load_run_scores

ITEMS = Path(__file__).parents[2] / "examples" / "items" / "multiple-choice.jsonl"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A run that answers nothing readable (`--no-answer guess`), one that answers, both recorded."""
    root = tmp_path_factory.mktemp("policy")
    store = root / "store.db"
    common = ["--no-answer", "guess", "--no-cache", "--no-progress", "--store", str(store)]
    assert main(["run", str(ITEMS), "--model", "scripted:fixed=pass", *common, "-o", str(root / "mute")]) in (0, 1)
    assert main(["run", str(ITEMS), "--model", "scripted:first", *common, "-o", str(root / "first")]) in (0, 1)
    return root / "mute", root / "first", store


def _accuracy(run: Path) -> float:
    return float(json.loads((run / "results.json").read_text())["overall"]["accuracy"])


def test_the_scores_compared_are_the_scores_reported(runs: tuple[Path, Path, Path]) -> None:
    mute, first, store = runs
    assert _accuracy(mute) > 0  # every choice item unanswered: 1/k each
    for ref in (mute, first):
        from_dir = load_run_scores(ref)
        rec = Store(store).find_run(from_dir.run.run_id)
        assert rec is not None
        from_store = Store(store).run_scores(rec.run_id)
        for scores in (from_dir, from_store):
            mean = sum(s.score for s in scores.items.values()) / len(scores.items)
            assert mean == pytest.approx(_accuracy(ref))


def test_compare_and_leaderboard_use_the_guess_credit(runs: tuple[Path, Path, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    mute, first, store = runs
    capsys.readouterr()
    assert main(["compare", str(mute), str(first), "--json", "--n-boot", "200"]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert overall["acc_a"] == pytest.approx(_accuracy(mute)) and overall["acc_b"] == pytest.approx(_accuracy(first))
    dataset = read_run(mute).manifest.dataset.name
    assert main(["leaderboard", dataset, "--store", str(store), "--json", "--n-boot", "200"]) == 0
    (board,) = json.loads(capsys.readouterr().out)
    scores = {e["model"]: e["score"] for e in board["entries"]}
    assert scores["scripted:fixed=pass"] == pytest.approx(_accuracy(mute))


def test_truncated_as_excluded_leaves_truncated_items_out() -> None:
    from proctor.log.runlog import Outcome, Sample

    def sample(i: int, outcome: Outcome, score: float | None) -> Sample:
        return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", epoch=0, dataset="d", modality="choiceof4", mode="generate",
                      prompt="p", reference="A", outcome=outcome, score=score)

    samples = [sample(0, Outcome.CORRECT, 1.0), sample(1, Outcome.TRUNCATED, 0.0), sample(2, Outcome.NO_ANSWER, 0.0)]
    assert {k: v.score for k, v in item_scores(samples).items()} == {"q0": 1.0, "q1": 0.0, "q2": 0.0}
    policy = {"truncated_as": "excluded", "no_answer": "guess"}
    assert {k: v.score for k, v in item_scores(samples, policy).items()} == {"q0": 1.0, "q2": 0.25}
