"""compare, the report and the leaderboard follow one comparability rule (proctor.analysis.comparable) and state the same
Holm-adjusted verdicts of the same records; the newcomer's two runs (one logprob, one generate, same items) are
set apart everywhere, and compared everywhere with --mix-settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_runs import binary, write_run  # tests/ is on sys.path (tests/conftest.py's directory)

from proctor.analysis.leaderboard import leaderboards
from proctor.cli import main
from proctor.report.data import load
from proctor.run.store import Store
from proctor.stats.comparison import Comparison

N = 300


def _verdicts(comparisons: list[Comparison]) -> dict[frozenset[str], tuple[float, bool, float | None]]:
    """Per unordered pair of runs: the adjusted p, whether a difference is claimed, and the MDE."""
    return {frozenset((c.a.run_id, c.b.run_id)): (round(c.overall.p_decisive, 12), c.overall.detected,
                                                   c.overall.mde) for c in comparisons}


@pytest.fixture
def three(tmp_path: Path) -> tuple[list[Path], Path]:
    runs = [write_run(tmp_path / "runs", "run-a", "hf:a", binary(N, range(200))),
            write_run(tmp_path / "runs", "run-b", "hf:b", binary(N, range(20, 200))),
            write_run(tmp_path / "runs", "run-c", "hf:c", binary(N, range(30, 198)))]
    store = tmp_path / "store.sqlite"
    with Store(store) as st:
        for r in runs:
            st.record_run(r)
    return runs, store


def test_three_runs_get_the_same_adjusted_verdicts_everywhere(three: tuple[list[Path], Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    runs, store = three
    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--store", str(store), "--json", "--n-boot", "200"]) == 0
    family = json.loads(capsys.readouterr().out)
    from_compare = _verdicts([Comparison.model_validate(c) for c in family["comparisons"]])
    assert family["correction"] == "holm" and len(from_compare) == 3
    section = load(runs).comparisons
    assert section is not None and len(section.groups) == 1 and not section.apart
    from_report = _verdicts([p.record for p in section.groups[0].pairs])
    with Store(store) as st:
        (board,) = leaderboards(st, "synth", n_boot=200)
    from_board = _verdicts(board.comparisons)
    assert from_compare == from_report == from_board
    # the family matters: a → b is detected alone (p < 0.05) but the adjusted p is Holm's, over three pairs
    ab = next(c for c in family["comparisons"] if {c["a"]["run_id"], c["b"]["run_id"]} == {"run-a", "run-b"})
    assert ab["overall"]["family_size"] == 3 and ab["overall"]["p_adjusted"] >= ab["overall"]["p_value"]
    assert board.top_vs_next is not None and board.top_vs_next.overall.family_size == 3


def test_baseline_and_bh(three: tuple[list[Path], Path], capsys: pytest.CaptureFixture[str]) -> None:
    runs, store = three
    capsys.readouterr()
    assert main(["compare", str(runs[1]), str(runs[2]), "--baseline", str(runs[0]), "--correction", "bh",
                 "--store", str(store), "--json", "--n-boot", "200"]) == 0
    family = json.loads(capsys.readouterr().out)
    assert family["baseline"] == "run-a" and family["correction"] == "bh"
    assert [(c["a"]["run_id"], c["b"]["run_id"]) for c in family["comparisons"]] == [("run-b", "run-a"),
                                                                                     ("run-c", "run-a")]
    assert main(["compare", *map(str, runs), "--store", str(store), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "3 paired comparisons (Holm-adjusted" in out and "MDE" in out
    assert main(["compare", str(runs[0]), "--correction", "x"]) == 2


def test_the_newcomer_case_is_set_apart_everywhere_or_compared_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scores = binary(N, range(150))
    lp = write_run(tmp_path / "runs", "run-lp", "hf:tiny", scores, mode="logprob", prompt_kind="")
    gen = write_run(tmp_path / "runs", "run-gen", "hf:tiny2", binary(N, range(120)),
                    generation={"temperature": 0, "max_tokens": 1024})
    store = tmp_path / "store.sqlite"
    with Store(store) as st:
        st.record_run(lp)
        st.record_run(gen)
    capsys.readouterr()
    # set apart: compare refuses, the report lists both as not comparable, the leaderboard has two boards of one
    assert main(["compare", str(lp), str(gen), "--store", str(store)]) == 2
    assert "different settings" in capsys.readouterr().err
    section = load([lp, gen]).comparisons
    assert section is not None and not section.groups and len(section.apart) == 2
    assert all("--mix-settings" in a.reason for a in section.apart)
    with Store(store) as st:
        boards = leaderboards(st, "synth", n_boot=200)
    assert len(boards) == 2 and all(not b.comparisons for b in boards)
    # compared everywhere, alike, when asked
    assert main(["compare", str(lp), str(gen), "--store", str(store), "--json", "--mix-settings"]) == 0
    from_compare = _verdicts([Comparison.model_validate(json.loads(capsys.readouterr().out))])
    mixed = load([lp, gen], mix_settings=True).comparisons
    assert mixed is not None and len(mixed.groups) == 1 and not mixed.apart
    assert mixed.groups[0].label == "synth · mixed settings"
    with Store(store) as st:
        (board,) = leaderboards(st, "synth", n_boot=200, mix_settings=True)
    assert from_compare == _verdicts([p.record for p in mixed.groups[0].pairs]) == _verdicts(board.comparisons)
