"""`run --cluster`: the attribute is recorded in the manifest and results.json (not in the run id), the report
shows the naive interval beside the clustered one, and a bad attribute is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.results import read_run


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
    assert o.design_effect == pytest.approx(4 * 23 / 20, rel=0.05)  # perfectly correlated passages of 4
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
