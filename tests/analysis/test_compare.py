from __future__ import annotations

from pathlib import Path

import pytest
from history_runs import binary, items, write_run

from proctor.analysis.compare import compare_runs
from proctor.run.store import Store
from proctor.util.errors import InputError, ProctorError

N = 200
A_RIGHT = range(160)  # 80%
B_RIGHT = set(range(50, 170))  # 60%: A right/B wrong on 0..49 (50), A wrong/B right on 160..169 (10)


@pytest.fixture
def ab(tmp_path: Path) -> tuple[Path, Path]:
    return (write_run(tmp_path, "run-a", "hf:a", binary(N, A_RIGHT)),
            write_run(tmp_path, "run-b", "hf:b", binary(N, B_RIGHT)))


def test_known_difference_is_detected(ab: tuple[Path, Path]) -> None:
    cmp = compare_runs(*ab)
    o = cmp.overall
    assert (o.n, o.acc_a, o.acc_b) == (200, 0.8, 0.6)
    assert o.diff == pytest.approx(0.2)
    assert 0 < o.ci_low < 0.2 < o.ci_high < 0.35  # the CI excludes 0 and covers the truth
    assert {o.b01, o.b10} == {10, 50}  # the discordant pairs, whatever the orientation
    assert o.p_value < 1e-6
    assert cmp.warnings == [] and cmp.only_in_a == [] and cmp.only_in_b == []
    # per category: items alternate math/law, 100 each
    assert [(g.group, g.n) for g in cmp.by_category] == [("law", 100), ("math", 100)]
    assert all(g.diff > 0 for g in cmp.by_category)


def test_direction_flips_with_argument_order(ab: tuple[Path, Path]) -> None:
    fwd, back = compare_runs(*ab), compare_runs(*reversed(ab))
    assert back.overall.diff == pytest.approx(-fwd.overall.diff)
    assert back.overall.p_value == pytest.approx(fwd.overall.p_value)


def test_identical_runs_differ_by_nothing(tmp_path: Path) -> None:
    scores = binary(N, set(range(0, 200, 3)))
    a = write_run(tmp_path, "x", "hf:a", scores)
    b = write_run(tmp_path, "y", "hf:a", scores)
    cmp = compare_runs(a, b)
    o = cmp.overall
    z2 = 1.959963984540054**2
    assert o.diff == 0.0 and o.ci_low == pytest.approx(-z2 / (N + z2)) and o.ci_high == pytest.approx(z2 / (N + z2))
    assert (o.b01, o.b10, o.p_value) == (0, 0, 1.0)
    assert cmp.verdict.startswith("no detectable difference: A − B 0.0 points [-1.9, +1.9], p = 1.000, 200 shared")


def test_only_shared_items_are_compared_and_the_rest_listed(tmp_path: Path) -> None:
    a_scores = binary(10, range(10))
    b_scores = {k: v for k, v in binary(12, set()).items() if k != "q-000"}
    b_scores["q-001"] = None  # errored in B: not a shared scored item
    cmp = compare_runs(write_run(tmp_path, "a", "hf:a", a_scores), write_run(tmp_path, "b", "hf:b", b_scores))
    assert cmp.overall.n == 8
    assert cmp.only_in_a == ["q-000", "q-001"]
    assert cmp.only_in_b == ["q-010", "q-011"]


def test_epochs_are_averaged_per_item(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", "hf:a", {i: [1.0, 1.0] for i in items(4)})
    b = write_run(tmp_path, "b", "hf:b", {i: [1.0, 0.0] for i in items(4)})
    o = compare_runs(a, b).overall
    assert (o.acc_a, o.acc_b, o.diff) == (1.0, 0.5, 0.5)


def test_warns_on_different_prompt_revision_and_extractor(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", "hf:a", binary(20, range(10)))
    b = write_run(tmp_path, "b", "hf:b", binary(20, range(10)), template_hash="tmpl2", revision="rev2",
                  content_hash="hash2", extractor_version="2", prompt_kind="chain_of_thought")
    warnings = compare_runs(a, b).warnings
    assert len(warnings) == 1, warnings  # #32.32: one cause (another setting), one warning, not five
    for what in ("prompt templates", "dataset revisions", "dataset content hashes", "extractor versions",
                 "prompt kinds", "settings"):
        assert what in warnings[0]


def test_compare_prints_one_warning_for_runs_that_differ_in_many_ways(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#32.32: runs of another prompt kind differ in five recorded ways; `compare` says so in one warning."""
    from proctor.cli import main

    a = write_run(tmp_path, "a", "hf:a", binary(20, range(10)))
    b = write_run(tmp_path, "b", "hf:b", binary(20, range(10)), template_hash="tmpl2", revision="rev2",
                  content_hash="hash2", extractor_version="2", prompt_kind="chain_of_thought")
    assert main(["compare", str(a), str(b), "--store", str(tmp_path / "none.sqlite")]) == 2  # other settings
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--mix-settings", "--store", str(tmp_path / "none.sqlite")]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1, err


def test_run_ids_from_the_store(ab: tuple[Path, Path], tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    for d in ab:
        store.record_run(d)
    from_ids = compare_runs("run-a", "run-b", store=store)
    from_dirs = compare_runs(*ab)
    assert from_ids.overall == from_dirs.overall
    assert compare_runs("run-a", ab[1], store=store).overall == from_dirs.overall  # mixed
    with pytest.raises(InputError, match="not a run directory nor a run id"):
        compare_runs("run-zzz", "run-b", store=store)


def test_nothing_shared_is_an_error(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", "hf:a", {"q-001": 1.0})
    b = write_run(tmp_path, "b", "hf:b", {"q-002": 1.0})
    with pytest.raises(ProctorError, match="share no scored items"):
        compare_runs(a, b)
