"""`run --cluster`: the attribute is recorded in the manifest and results.json (not in the run id), the report
shows the naive interval beside the clustered one, and a bad attribute is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.metrics.results import read_run
from proctor.stats.intervals import wilson_interval


def _items(path: Path) -> Path:
    """24 questions on 6 passages: in passages 0–2 the answer is A, in 3–5 it is B (so `scripted:first`,
    always A, is right on whole passages at once: strongly clustered errors)."""
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "AB"[i // 12],
             "choices": {"A": "yes", "B": "no"}, "category": "c", "metadata": {"passage": f"p{i // 4}"}}
            for i in range(24)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, out: str, *extra: str) -> list[str]:
    return ["run", str(_items(tmp_path / "items.jsonl")), "--model", "scripted:first", "-o", str(tmp_path / out),
            "--no-progress", "--no-history", "--no-cache", *extra]


def test_run_cluster_is_recorded_and_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path, "plain")) == 0
    assert main(_run(tmp_path, "clustered", "--cluster", "metadata.passage")) == 0
    plain, clustered = read_run(tmp_path / "plain"), read_run(tmp_path / "clustered")
    assert plain.manifest.run_id == clustered.manifest.run_id  # a reporting choice, not part of the run
    assert clustered.manifest.cluster == "metadata.passage" and plain.manifest.cluster is None
    assert {s.cluster for s in clustered.samples} == {f"p{k}" for k in range(6)}
    assert clustered.results is not None and plain.results is not None
    o, p = clustered.results.overall, plain.results.overall
    assert clustered.results.cluster == "metadata.passage" and o.ci_method == "cluster_wilson" and o.n_clusters == 6
    # perfectly correlated passages of 4: V_CR2 = C/(C−1)·p(1−p)/C over V_iid = p(1−p)/n, i.e. n/(C−1)
    assert o.design_effect == pytest.approx(24 / 5)
    assert (o.naive_ci_low, o.naive_ci_high) == (p.ci_low, p.ci_high) and o.cluster_differs
    assert (o.ci_high or 0) - (o.ci_low or 0) > 1.5 * ((p.ci_high or 0) - (p.ci_low or 0))
    capsys.readouterr()
    md = tmp_path / "report.md"
    assert main(["report", str(tmp_path / "clustered"), "-o", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert "(naive [31.4%, 68.6%])" in text and "clustered by metadata.passage (6 clusters, design effect" in text
    html = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "clustered"), "-o", str(html)]) == 0
    assert "clustered by metadata.passage" in html.read_text(encoding="utf-8")


def test_a_bad_cluster_attribute_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path, "bad", "--cluster", "passage")) == 2
    err = capsys.readouterr().err
    assert "--cluster" in err and "metadata.KEY" in err and "Traceback" not in err
    assert not (tmp_path / "bad").exists()


def test_mmlu_pro_clusters_by_src() -> None:
    from proctor.benchmarks.registry import load_task

    task = load_task("mmlu-pro", data_file=Path(__file__).resolve().parents[2] / "examples/upstream/mmlu_pro")
    assert task.cluster == "metadata.src"
    assert {it.metadata.get("src") for it in task.items} >= {"synthetic-math", "synthetic-law"}


CAPITALS = Path(__file__).parents[2] / "examples" / "benchmarks" / "capitals.yaml"


@pytest.mark.parametrize("attribute", ["metadata.nokey", "subcategory"])
def test_a_cluster_attribute_no_item_has_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    attribute: str) -> None:
    """Results would claim a clustered interval where every item is its own cluster."""
    out = tmp_path / "run"
    assert main(["run", str(CAPITALS), "--model", "scripted:first", "--cluster", attribute, "-o", str(out)]) == 2
    assert f"cannot cluster capitals by '{attribute}': none of its 8 items has a value" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("value", ["__class__", "NONE", "difficulty"])
def test_a_spec_file_clusters_only_by_an_item_attribute(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        value: str) -> None:
    spec = tmp_path / "capitals.yaml"
    spec.write_text(CAPITALS.read_text().replace("cluster: category", f"cluster: {value}"))
    (tmp_path / "capitals").symlink_to(CAPITALS.parent / "capitals")
    assert main(["validate", str(spec)]) == 2
    assert f"capitals.yaml:6: cluster: cannot cluster by '{value}'" in capsys.readouterr().err


def _three_categories(path: Path) -> Path:
    """30 questions in three categories of 10 whose answer is always B: `scripted:first` (A) gets 0 of 30."""
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "B",
             "choices": {"A": "yes", "B": "no"}, "category": f"cat{i % 3}"} for i in range(30)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_zero_of_thirty_over_three_clusters_one_interval_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: 0/30 over three categories printed [0.000, 0.861] (Wilson at 3 effective items with t on 2 df)
    while each category's own interval is [0, 0.278]. Three clusters are too few to cluster: the interval is the
    items' one, with a note, and run, results.json, the report, the leaderboard, compare and gate all show it."""
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("PROCTOR_STORE", str(store))
    items = _three_categories(tmp_path / "items.jsonl")
    common = ["--no-progress", "--no-cache", "--cluster", "category"]
    assert main(["run", str(items), "--model", "scripted:first", "-o", str(tmp_path / "cand"), *common]) == 0
    console = capsys.readouterr().out
    assert main(["run", str(items), "--model", "scripted:random,seed=1", "-o", str(tmp_path / "base"), *common]) == 0
    capsys.readouterr()
    res = read_run(tmp_path / "cand").results
    assert res is not None
    o = res.overall
    lo, hi = o.ci_low or 0.0, o.ci_high or 0.0
    assert (o.accuracy, lo) == (0.0, 0.0) and o.n_clusters == 3 and o.design_effect is None
    widest = max((b.ci_high or 0) - (b.ci_low or 0) for b in res.by_category.values())
    assert len(res.by_category) == 3 and hi - lo <= widest
    assert (lo, hi) == pytest.approx(wilson_interval(0, 30)) and hi == pytest.approx(0.1135, abs=1e-4)
    assert o.cluster_note is not None and "too few" in o.cluster_note
    shown = f"[{lo:.3f}, {hi:.3f}]"
    assert shown in console and "0.861]" not in console and "clustered by category: 3 clusters" in console
    raw = json.loads((tmp_path / "cand" / "results.json").read_text(encoding="utf-8"))["overall"]
    assert (raw["ci_low"], raw["ci_high"]) == (lo, hi)
    pct = f"[{100 * lo:.1f}, {100 * hi:.1f}]"  # 11.4 in every view that shows percent
    md = tmp_path / "report.md"
    assert main(["report", str(tmp_path / "cand"), "-o", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert f"[{100 * lo:.1f}%, {100 * hi:.1f}%]" in text and "too few" in text and "design effect 0.00" not in text
    capsys.readouterr()
    assert main(["leaderboard", "items", "--json", "--n-boot", "200"]) == 0
    boards = json.loads(capsys.readouterr().out)
    (entry,) = [e for b in boards for e in b["entries"] if e["model"] == "scripted:first"]
    assert (entry["ci_low"], entry["ci_high"]) == (lo, hi)
    assert main(["compare", str(tmp_path / "cand"), str(tmp_path / "base"), "--json", "--n-boot", "200"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert (cmp["a"]["ci_low"], cmp["a"]["ci_high"]) == (lo, hi)
    assert main(["compare", str(tmp_path / "cand"), str(tmp_path / "base"), "--n-boot", "200"]) == 0
    assert f"0.0% {pct}" in capsys.readouterr().out
    code = main(["gate", str(tmp_path / "cand"), "--baseline", str(tmp_path / "base"), "--max-drop", "5"])
    assert code in (1, 3) and f"0.0% {pct}" in capsys.readouterr().out
