"""The report's comparison section, notices (damaged, duplicate, aborted runs) and one record's figures everywhere."""

from __future__ import annotations

import html as htmllib
import json
import re
import shutil
from pathlib import Path

import pytest
from report_runs import gen_samples, write_run

from proctor.analysis.compare import compare_runs
from proctor.cli import main
from proctor.log.runlog import Outcome, Sample
from proctor.report import load, render_html, render_markdown
from proctor.report.comparisons import MAX_PAIRWISE
from proctor.stats.comparison import Comparison, p_cell, points


def _aborted(n: int) -> list[Sample]:
    return [Sample(sample_id=f"mc.{i}#0", item_id=f"mc.{i}", dataset="synthetic-mc", prompt="q", score=None,
                   outcome=Outcome.ERROR, error="HTTP 401") for i in range(n)]


@pytest.fixture
def two(tmp_path: Path) -> list[Path]:
    return [write_run(tmp_path, "run-a", model="openai:model-a", samples=gen_samples(120, seed=1, skill=0.9)),
            write_run(tmp_path, "run-b", model="hf:model-b", samples=gen_samples(120, seed=2, skill=0.5))]


def test_two_runs_on_the_same_items_get_a_verdict(two: list[Path]) -> None:
    data = load(two, history=[])
    assert data.comparisons is not None and not data.comparisons.apart
    (group,) = data.comparisons.groups
    (pair,) = group.pairs
    record = compare_runs(*two)
    assert pair.record.overall == record.overall  # the report's record is compare's
    html, md = htmllib.unescape(render_html(data)), render_markdown(data)
    verdict = pair.record.overall.verdict("openai:model-a · synthetic-mc", "hf:model-b · synthetic-mc")
    assert verdict.startswith("openai:model-a · synthetic-mc ahead of hf:model-b · synthetic-mc by ")
    assert f'<p class="verdict">{verdict}</p>' in html
    assert f"- {verdict}" in md.replace("\\", "")


def test_the_same_figures_everywhere(two: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    """results of `compare --json`, the console, Markdown and HTML all show the one record's figures."""
    record = compare_runs(*two)
    o = record.overall
    figures = [points(o.diff), o.interval_text(), p_cell(o.p_value)]
    saved = two[0].parent / "comparison.json"
    assert main(["compare", str(two[0]), str(two[1]), "--json", "--save", str(saved)]) == 0
    as_json = json.loads(capsys.readouterr().out)
    assert as_json["overall"] == o.model_dump(mode="json") and as_json["verdict"] == record.verdict
    assert Comparison.model_validate_json(saved.read_text(encoding="utf-8")).overall == o  # the stored record
    assert main(["compare", str(two[0]), str(two[1])]) == 0
    console = " ".join(capsys.readouterr().out.split())
    assert record.verdict in console
    data = load(two, history=[])
    md, html = render_markdown(data), htmllib.unescape(render_html(data))
    row = next(line for line in md.splitlines() if line.startswith("| openai:model-a · synthetic-mc | hf:"))
    for text in (console, row, html):
        for fig in figures:
            assert fig in text, (fig, text[:200])


def test_duplicate_aborted_and_damaged_runs(two: list[Path], tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for d in two:
        shutil.copytree(d, folder / d.name)
    shutil.copytree(two[0], folder / "run-a-copy")  # the same run reached through a second directory
    write_run(folder, "run-dead", model="hf:dead", samples=_aborted(30))
    damaged = folder / "run-broken"
    damaged.mkdir()
    (damaged / "manifest.json").write_text("{not json", encoding="utf-8")
    from proctor.log.runlog import expand_run_dirs

    data = load(expand_run_dirs([folder]), history=[])
    assert [r.model for r in data.runs] == ["openai:model-a", "hf:model-b"]
    assert [r.index for r in data.runs] == [0, 1]
    assert [r.model for r in data.aborted] == ["hf:dead"]
    text = "\n".join(data.warnings)
    assert "run-broken: skipped" in text and "run-a-copy: the same run as" in text
    html = render_html(data)
    assert html.count('<div class="card">') == 2
    assert "run-broken: skipped" in html and "hf:dead" in html.split('id="notices"')[1].split("</div>")[0]
    assert "hf:dead" not in html.split('id="categories"')[1].split("</section>")[0]  # not charted
    md = render_markdown(data)
    assert "scored nothing: hf:dead" in md and "run-broken: skipped" in md


def test_report_command_warns_about_what_it_skipped(two: list[Path], tmp_path: Path) -> None:
    """As a user sees it (a fresh process: pytest's own log handlers would swallow the warning)."""
    import subprocess
    import sys

    import proctor

    broken = tmp_path / "run-broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{", encoding="utf-8")
    out = tmp_path / "r.html"
    env = {"PYTHONPATH": str(Path(proctor.__file__).resolve().parents[1]), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "proctor", "report", *map(str, two), str(broken), "-o", str(out)],
                          check=False, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"warning: {broken}: skipped, not a readable run directory" in done.stderr and out.exists()


def test_only_damaged_directories_is_still_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text("[]", encoding="utf-8")
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert "bad manifest" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


def test_runs_that_cannot_be_compared_are_set_apart_with_the_reason(two: list[Path], tmp_path: Path) -> None:
    other = write_run(tmp_path, "run-c", model="hf:model-c", samples=gen_samples(120, seed=3, skill=0.7),
                      prompt_kind="chain_of_thought")
    data = load([*two, other], history=[])
    assert data.comparisons is not None
    (apart,) = data.comparisons.apart
    assert apart.run == 2 and "chain_of_thought" in apart.reason
    assert "sha256:" not in apart.reason and "run-" not in apart.reason  # names what differs; values in Provenance
    html = render_html(data)
    assert "Not comparable" in html and "chain_of_thought" in html.split('id="comparison"')[1]


def test_many_runs_compare_the_best_with_the_rest_in_distinct_colours(tmp_path: Path) -> None:
    n = MAX_PAIRWISE + 4
    dirs = [write_run(tmp_path, f"run-{i:02d}", model=f"hf:m{i:02d}", samples=gen_samples(40, seed=i, skill=0.3 + i / 30))
            for i in range(n)]
    data = load(dirs, history=[])
    assert data.comparisons is not None
    (group,) = data.comparisons.groups
    assert group.best_vs_rest and len(group.pairs) == n - 1 and len({p.a for p in group.pairs}) == 1
    html = render_html(data)
    cards = re.findall(r'<div class="card-h"[^>]*><i class="sw (s\d+)"', html)
    assert len(cards) == n and len(set(cards)) == n  # 12 runs, 12 colours
    light = dict(re.findall(r"--(c\d+): (#[0-9a-f]{6})", html.split("@media")[0]))
    assert len({light[f"c{i}"] for i in range(n)}) == n


def test_small_category_rows_are_wide_never_zero_width(tmp_path: Path) -> None:
    a = write_run(tmp_path, "a", model="hf:a", samples=gen_samples(30, seed=1, skill=0.9, categories=["x", "y"]))
    b = write_run(tmp_path, "b", model="hf:b", samples=gen_samples(30, seed=1, skill=0.9, categories=["x", "y"]))
    for g in [compare_runs(a, b).overall, *compare_runs(a, b).by_category]:
        assert g.ci_high - g.ci_low > 0.1 and g.ci_low <= g.diff <= g.ci_high
