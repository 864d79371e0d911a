from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from history_runs import binary, write_run

from proctor.analysis.leaderboard import leaderboard
from proctor.run.store import Store
from proctor.util.errors import ProctorError


def test_ranks_latest_run_per_model_on_shared_items(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    runs = tmp_path / "runs"
    # hf:a's older run was bad; its latest (80%) must be the one ranked
    store.record_run(write_run(runs, "a-old", "hf:a", binary(200, range(20)), started_at="2025-01-01T00:00:00+00:00"))
    store.record_run(write_run(runs, "a-new", "hf:a", binary(200, range(160)), started_at="2025-03-01T00:00:00+00:00"))
    store.record_run(write_run(runs, "b", "hf:b", binary(200, range(120)), started_at="2025-02-01T00:00:00+00:00"))
    c_scores = binary(210, range(60))  # 10 extra items only hf:c answered: left out of the ranking
    store.record_run(write_run(runs, "c", "hf:c", c_scores, started_at="2025-02-02T00:00:00+00:00"))
    store.record_run(write_run(runs, "z", "hf:z", binary(200, range(200)), dataset="elsewhere"))

    lb = leaderboard(store, "synth", n_boot=1000)
    assert [e.model for e in lb.entries] == ["hf:a", "hf:b", "hf:c"]
    assert [e.run_id for e in lb.entries] == ["a-new", "b", "c"]
    assert [e.score for e in lb.entries] == pytest.approx([0.8, 0.6, 0.3])
    assert lb.n_items == 200 and lb.top == "hf:a" and lb.observed == pytest.approx(0.8)
    for e in lb.entries:
        assert e.ci_low < e.score < e.ci_high
    assert lb.p_top_stays_top > 0.99  # a 20-point lead on 200 items holds
    assert lb.adjusted <= lb.observed and lb.observed - lb.adjusted < 0.01  # little selection bias to remove
    assert any("hf:c: 10 item(s)" in w for w in lb.warnings)


def test_many_equal_models_winner_is_shrunk(tmp_path: Path) -> None:
    """Ten models of identical true skill (50%): the 'winner' is luck; its adjusted score is pulled down."""
    store = Store(tmp_path / "s.sqlite")
    rng = np.random.default_rng(7)
    for m in range(10):
        correct = set(np.flatnonzero(rng.random(100) < 0.5).tolist())
        store.record_run(write_run(tmp_path / "runs", f"run-{m}", f"hf:m{m}", binary(100, correct)))
    lb = leaderboard(store, "synth", n_boot=1000)
    scores = [e.score for e in lb.entries]
    assert scores == sorted(scores, reverse=True) and lb.observed == max(scores)
    assert lb.adjusted < lb.observed - 0.02  # a visible winner's-curse correction
    assert abs(lb.adjusted - 0.5) < abs(lb.observed - 0.5)  # closer to the truth
    assert lb.p_top_stays_top < 0.6  # the ranking is unlikely to hold


def test_different_prompts_warned_and_unknown_dataset_errors(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    store.record_run(write_run(tmp_path, "a", "hf:a", binary(30, range(20))))
    store.record_run(write_run(tmp_path, "b", "hf:b", binary(30, range(10)), template_hash="other"))
    assert any("prompt templates" in w for w in leaderboard(store, "synth", n_boot=200).warnings)
    with pytest.raises(ProctorError, match="recorded datasets: synth"):
        leaderboard(store, "nope")


def _mixed_store(tmp_path: Path) -> Store:
    """hf:a and hf:b by generation (greedy), hf:a by log-likelihood (latest of all), hf:b sampled at 0.7."""
    store = Store(tmp_path / "s.sqlite")
    greedy = {"temperature": 0.0, "max_tokens": 1024}
    runs = tmp_path / "runs"
    store.record_run(write_run(runs, "a-gen", "hf:a", binary(50, range(40)), generation=greedy,
                               started_at="2025-01-01T00:00:00+00:00"))
    store.record_run(write_run(runs, "b-gen", "hf:b", binary(50, range(30)), generation=greedy,
                               started_at="2025-01-02T00:00:00+00:00"))
    store.record_run(write_run(runs, "b-hot", "hf:b", binary(50, range(10)), generation={**greedy, "temperature": 0.7},
                               started_at="2025-01-03T00:00:00+00:00"))
    store.record_run(write_run(runs, "a-lp", "hf:a", binary(50, range(5)), mode="logprob", prompt_kind=None,
                               started_at="2025-01-04T00:00:00+00:00"))
    return store


def test_runs_of_different_settings_are_never_ranked_together(tmp_path: Path) -> None:
    from proctor.analysis.leaderboard import leaderboards

    store = _mixed_store(tmp_path)
    boards = leaderboards(store, "synth", n_boot=200)
    by_setting = {b.setting: [e.run_id for e in b.entries] for b in boards}
    assert by_setting == {
        "logprob · choices": ["a-lp"],
        "generate · zero_shot · temp 0.7 · max-tokens 1024": ["b-hot"],
        "generate · zero_shot · temp 0 · max-tokens 1024": ["a-gen", "b-gen"],
    }
    assert boards[0].setting == "logprob · choices"  # newest setting first
    with pytest.raises(ProctorError, match="3 settings.*--mix-settings"):
        leaderboard(store, "synth", n_boot=200)  # one board asked for: never silently the latest runs


def test_mode_prompt_filters_and_mix_settings(tmp_path: Path) -> None:
    from proctor.analysis.leaderboard import leaderboards

    store = _mixed_store(tmp_path)
    assert [b.setting for b in leaderboards(store, "synth", n_boot=200, mode="logprob")] == ["logprob · choices"]
    assert len(leaderboards(store, "synth", n_boot=200, mode="generate", prompt="zero_shot")) == 2
    with pytest.raises(ProctorError, match="matches --mode/--prompt; recorded settings"):
        leaderboards(store, "synth", mode="generate", prompt="five_shot")
    mixed = leaderboard(store, "synth", n_boot=200, mix_settings=True)
    assert mixed.setting == "mixed settings" and {e.run_id for e in mixed.entries} == {"a-lp", "b-hot"}
    assert mixed.warnings[0].startswith("ranks runs of 2 different settings together (--mix-settings)")
    assert {e.setting for e in mixed.entries} == {"logprob · choices",
                                                  "generate · zero_shot · temp 0.7 · max-tokens 1024"}
