"""The HTML and Markdown outputs as text, and the `proctor report` command."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from report_runs import PAYLOAD, gen_samples, write_run

import proctor
from proctor.cli import main
from proctor.report import data, render_html, render_markdown, write_report
from proctor.report.html import encode_blob, json_for_script, sample_blob, shown_shares


def _blob(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="proctor-data">(.*?)</script>', html, re.DOTALL)
    assert m
    raw = json.loads(m.group(1))
    return json.loads(gzip.decompress(base64.b64decode(raw["gz"]))) if "gz" in raw else raw


def test_html_is_self_contained_and_escapes_untrusted_text(runs: list[Path]) -> None:
    html = render_html(data.load(runs, history=[]))
    assert PAYLOAD not in html and "<script>window.__pwned" not in html and "<img src=x" not in html
    assert "history &lt;b&gt;&amp;amp;&lt;/b&gt;" in html  # a category name, escaped in tables and SVG
    assert "<em>something" not in html  # suite context text
    # every URL in the page is the SVG namespace: nothing to fetch
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'<>]*", html))
    assert urls <= {"http://www.w3.org/2000/svg"}
    assert html.count("<script") == 2  # the data blob and the page's own script
    blob = _blob(html)
    first = next(s for s in blob["samples"] if s["id"] == "mc.0#0")
    assert PAYLOAD in first["out"]


def test_csp_hash_matches_the_inline_script(runs: list[Path]) -> None:
    html = render_html(data.load(runs[:1], history=[]))
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL).group(1)  # type: ignore[union-attr]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html and "default-src 'none'" in html


def test_json_for_script_cannot_close_the_element() -> None:
    text = json_for_script({"x": "</script><!-- & >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": "</script><!-- & >"}


def test_large_blobs_are_gzipped_and_prompts_interned() -> None:
    from proctor.report.html import sample_blob

    rep_runs = [data.summarize_run(0, _log(gen_samples(3000, seed=1, skill=0.5, long_output=True)))]
    blob = sample_blob(rep_runs)
    assert len(blob["strings"]) < 3000 * 2  # the shared system prompt paragraphs are stored once
    enc = encode_blob(blob)
    assert '"gz"' in enc and json.loads(gzip.decompress(base64.b64decode(json.loads(enc)["gz"]))) == blob


def _log(samples: list) -> proctor.RunLog:
    from proctor.log.runlog import Manifest, RunLog

    m = Manifest(run_id="r", proctor_version="0", dataset={"name": "d"}, model={"spec": "m"}, mode="generate", started_at="2025-01-01T00:00:00")
    return RunLog(path=Path("."), manifest=m, samples=samples)


def test_markdown_has_headline_and_breakdown_tables(runs: list[Path]) -> None:
    md = render_markdown(data.load(runs, history=[]))
    lines = md.splitlines()
    assert lines[0] == "# proctor report"
    head = next(i for i, l in enumerate(lines) if l.startswith("| Model |"))
    assert lines[head + 1].startswith("|---|") and len([l for l in lines[head + 2 :] if l.startswith("| ")]) >= 3
    row = next(l for l in lines if l.startswith("| openai:model-a"))
    assert "3 min 20 s" in row and "%" in row
    for title in ("## Accuracy by category", "## Accuracy by difficulty", "## Calibration", "## Coverage: synthetic-mc"):
        assert title in md
    assert "history \\<b\\>&amp;amp;\\</b\\>" in md  # markup in names is escaped, pipes cannot break a row
    assert all(l.count("|") == lines[head].count("|") for l in lines[head : head + 5] if l.startswith("|"))


def test_cli_writes_html_and_md_and_prints_the_path(runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", *map(str, runs), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out) and out.read_text().startswith("<!doctype html>")
    md = tmp_path / "r.md"
    assert main(["report", str(runs[0]), "-o", str(md)]) == 0  # format from the suffix
    assert md.read_text().startswith("# proctor report")
    forced = tmp_path / "r.txt"
    assert main(["report", str(runs[0]), "-o", str(forced), "--format", "md"]) == 0
    assert forced.read_text().startswith("# proctor report")


def test_cli_bad_run_dir_is_exit_2_without_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(proctor.__file__).parent.parent)}
    p = subprocess.run(
        [sys.executable, "-m", "proctor", "report", str(tmp_path), "-o", str(tmp_path / "x.html")],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )
    assert p.returncode == 2 and "not a run directory" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x.html").exists()


def test_write_report_is_atomic_and_overwrites(runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "sub" / "report.html"
    write_report(runs[:1], out, history=[])
    first = out.read_text()
    write_report(runs[:2], out, history=[])
    assert out.read_text() != first and not list(out.parent.glob(".*.tmp"))


def test_a_run_with_only_errors_renders(tmp_path: Path) -> None:
    ss = [s for s in gen_samples(200, seed=1, skill=0.5) if s.outcome == "error"]
    d = write_run(tmp_path, "errs", model="m", samples=ss)
    html = render_html(data.load([d], history=[]))
    assert "HTTP 500" not in html.split('id="proctor-data"')[0]  # the error text lives in the blob only
    assert "—" in html


def test_html_shows_epochs_judge_agreement_and_verdicts(judged_run: Path) -> None:
    res = json.loads((judged_run / "results.json").read_text())
    ep, ja = res["epochs"], res["judge_agreement"]
    html = render_html(data.load([judged_run], history=[]))
    page = html.split('id="proctor-data"')[0]
    acc, kappa = f"{100 * ja['agreement']:.1f}%", f"{ja['kappa']:.2f}"
    assert f"mean@3 <b>{100 * ep['mean_at_k']:.1f}%</b>" in page and f"pass@3 <b>{100 * ep['pass_at_k']:.1f}%</b>" in page
    assert f"judge agrees <b>{acc}</b> · κ {kappa} · n={ja['n']}" in page
    assert "mean / pass@3" in page and "Judge against exact match" in page
    confusion = re.search(r'<table class="data confusion">(.*?)</table>', page, re.DOTALL)
    assert confusion
    cells = [int(x) for x in re.findall(r'<td class="num[^"]*">(\d+)</td>', confusion.group(1))]
    assert sum(cells) == ja["n"] and sorted(c for c in cells if c) == sorted(ja["confusion"].values())
    assert PAYLOAD not in html and "<script>window.__pwned" not in html
    samples = _blob(html)["samples"]
    judged = next(s for s in samples if s["id"] == "j.0#0")
    assert judged["j"]["r"] == PAYLOAD and judged["j"]["g"] in ("CORRECT", "INCORRECT")  # as data, never markup
    checked = next(s for s in samples if s["id"] == "j.1#0")
    assert checked["jc"]["o"] in ("correct", "wrong") and checked["jc"]["r"] == "Check of item 1."
    assert "j" not in checked
    plain = write_run(judged_run.parent, "plain", model="m", samples=gen_samples(10, seed=1, skill=0.5))
    plain_html = render_html(data.load([plain], history=[]))
    assert all("jc" not in s and "j" not in s for s in _blob(plain_html)["samples"])
    assert "Judge against exact match" not in plain_html and "mean@" not in plain_html


def test_markdown_has_epochs_and_judge_agreement(judged_run: Path) -> None:
    res = json.loads((judged_run / "results.json").read_text())
    ep, ja = res["epochs"], res["judge_agreement"]
    md = render_markdown(data.load([judged_run], history=[]))
    assert f"mean@3 {100 * ep['mean_at_k']:.1f}%, pass@3 {100 * ep['pass_at_k']:.1f}%" in md
    assert f"judge agrees with exact match on {100 * ja['agreement']:.1f}% of {ja['n']} items, Cohen's κ {ja['kappa']:.2f}" in md
    lines = md.splitlines()
    head = lines.index("| judge ↓ / exact → | correct | wrong |")
    rows = {l.split("|")[1].strip(): [int(x) for x in l.split("|")[2:-1]] for l in lines[head + 2 : head + 4]}
    assert rows == {j: [ja["confusion"].get(f"{j}/{e}", 0) for e in ("correct", "wrong")] for j in ("correct", "wrong")}
    plain = render_markdown(data.load([write_run(judged_run.parent, "plain", model="m",
                                                 samples=gen_samples(10, seed=1, skill=0.5))], history=[]))
    assert "mean@" not in plain and "judge" not in plain.lower()


def test_snippet_for_runs_without_output(runs: list[Path]) -> None:
    samples = _blob(render_html(data.load(runs[2:], history=[])))["samples"]
    assert all(s["q"].startswith("Statement ") and "<em>" in s["q"] for s in samples)  # the context, as data


def test_runs_sharing_a_label_are_told_apart(runs: list[Path], tmp_path: Path) -> None:
    twin = write_run(tmp_path, "run-a2", model="openai:model-a", samples=gen_samples(20, seed=9, skill=0.5))
    blob = _blob(render_html(data.load([runs[0], twin], history=[])))
    assert blob["runs"] == ["openai:model-a · synthetic-mc · run-a", "openai:model-a · synthetic-mc · run-a2"]


def test_markdown_tells_runs_of_one_model_on_one_dataset_apart(tmp_path: Path) -> None:
    """Two runs differing only by mode and prompt: the headline table has Mode/Prompt/Settings columns, the
    breakdown headers are distinct labels, and the title says what is compared."""
    gen = write_run(tmp_path, "gen", model="hf:m", samples=gen_samples(40, seed=1, skill=0.7))
    lp = write_run(tmp_path, "lp", model="hf:m", samples=gen_samples(40, seed=2, skill=0.7), mode="logprob",
                   prompt_kind="default", generation={})
    md = render_markdown(data.load([gen, lp], history=[]))
    lines = md.splitlines()
    assert lines[2] == "**2 runs of hf:m compared on synthetic-mc**"
    head = next(i for i, l in enumerate(lines) if l.startswith("| Model |"))
    assert lines[head].startswith("| Model | Dataset | Mode | Prompt | Settings | Scored |")
    assert lines[head + 2].startswith("| hf:m | synthetic-mc | generate | zero\\_shot | T=0 · 64 tok |")
    assert lines[head + 3].startswith("| hf:m | synthetic-mc | logprob | default | — |")
    cat = next(l for l in lines if l.startswith("| Category |"))
    assert "generate · zero\\_shot" in cat and "logprob · default" in cat


def test_html_title_and_cards_say_what_is_compared(tmp_path: Path) -> None:
    from proctor.report.labels import run_labels, title

    a = write_run(tmp_path, "a", model="hf:m", samples=gen_samples(20, seed=1, skill=0.7))
    b = write_run(tmp_path, "b", model="hf:m", samples=gen_samples(20, seed=2, skill=0.7), dataset="other")
    c = write_run(tmp_path, "c", model="hf:m", samples=gen_samples(20, seed=3, skill=0.7))  # same facets as a
    runs = data.load([a, b, c], history=[]).runs
    assert title(runs) == "hf:m on 2 datasets: synthetic-mc, other"
    assert title(runs[:1]) == "hf:m on synthetic-mc"
    assert title([runs[0], runs[2]]) == "2 runs of hf:m compared on synthetic-mc"
    assert run_labels(runs) == ["hf:m · synthetic-mc · a", "hf:m · other", "hf:m · synthetic-mc · c"]  # only ids differ
    html = render_html(data.load([a, b], history=[]))
    assert "<h1>hf:m on 2 datasets: synthetic-mc, other</h1>" in html and "runs compared" not in html
    assert 'class="facet f-run differs"' in html and 'class="facet f-mode"' in html  # mode is the same: not marked


def test_html_card_shows_the_ambiguous_rate_and_the_reading_that_scored(tmp_path: Path) -> None:
    from proctor.metrics.results import summarize

    ss = [s.model_copy(update={"ambiguous": i % 4 == 0}) for i, s in enumerate(gen_samples(40, seed=3, skill=0.6))
          if s.outcome != "error"]
    d = write_run(tmp_path, "amb", model="m", samples=ss, results=summarize(ss, extract="reference"))
    html = render_html(data.load([d], history=[]))
    n = sum(bool(s.ambiguous) for s in ss)
    assert f"ambiguous <b>{100 * n / len(ss):.1f}%</b> ({n})" in html
    md = render_markdown(data.load([d], history=[]))
    assert "## Answer reading" in md and f"{100 * n / len(ss):.1f}% of answers ambiguous ({n};" in md
    plain = write_run(tmp_path, "plain", model="m", samples=gen_samples(40, seed=3, skill=0.6),
                      results=summarize(gen_samples(40, seed=3, skill=0.6)))
    assert "card-x ambiguous" not in render_html(data.load([plain], history=[])).split('id="proctor-data"')[0]
    assert "## Answer reading" not in render_markdown(data.load([plain], history=[]))


def test_zero_and_five_shot_runs_have_different_cards(tmp_path: Path) -> None:
    """#41 item 19: zero- and five-shot runs of one model had identical cards; the prompt facet now carries the
    shots (the setting label's parts), and the run labels tell them apart by it, not by their run ids."""
    from proctor.report.labels import facets, run_labels

    items = Path(__file__).parents[2] / "examples" / "items" / "multiple-choice.jsonl"
    common = ["--model", "scripted:first", "--no-history", "--no-cache", "--no-progress"]
    assert main(["run", str(items), *common, "-o", str(tmp_path / "zero")]) in (0, 1)
    assert main(["run", str(items), "--shots", "5", *common, "-o", str(tmp_path / "five")]) in (0, 1)
    runs = data.load([tmp_path / "zero", tmp_path / "five"], history=[]).runs
    prompts = [next(f.value for f in facets(r) if f.name == "prompt") for r in runs]
    assert prompts == ["zero_shot", "zero_shot · 5 shots"]
    assert run_labels(runs) == ["scripted:first · multiple-choice · zero_shot",
                                "scripted:first · multiple-choice · zero_shot · 5 shots"]


def test_runs_alone_on_their_dataset_are_not_called_not_comparable(tmp_path: Path) -> None:
    """#41.19: the demo's report listed every run under "Not comparable" though it compared nothing. Only runs that
    share a dataset with another run they cannot be compared with are listed so; runs alone on their dataset are
    named as such; a report of runs all alone says nothing of comparisons."""
    gen = write_run(tmp_path, "gen", model="openai:m", samples=gen_samples(30, seed=1, skill=0.7))
    lp = write_run(tmp_path, "lp", model="hf:m", samples=gen_samples(30, seed=2, skill=0.7), mode="logprob")
    other = write_run(tmp_path, "other", model="openai:m", samples=gen_samples(30, seed=3, skill=0.7),
                      dataset="another")
    loaded = data.load([gen, lp, other], history=[])
    cmp = loaded.comparisons
    assert cmp is not None and not cmp.groups
    assert sorted(a.run for a in cmp.apart) == [0, 1] and cmp.alone == [2]
    html, md = render_html(loaded), render_markdown(loaded)
    for text in (html, md):
        assert "No two runs here can be compared" in text and "Alone on their dataset" in text
        assert "no other run on another" not in text
    assert html.count('<ul class="apart">') == 1 and html.split('<ul class="apart">')[1].split("</ul>")[0].count("<li>") == 2
    alone = data.load([other, write_run(tmp_path, "x", model="hf:x", samples=gen_samples(9, seed=4, skill=.5),
                                        dataset="third")], history=[])
    assert 'id="comparison"' not in render_html(alone) and "## Comparison" not in render_markdown(alone)


def test_a_probsem_run_is_shown_by_its_suites_not_as_test(tmp_path: Path) -> None:
    """#41.19: `proctor score examples/suites` appeared as a dataset called `test` (its prompt file's name)."""
    suites = Path(__file__).parents[2] / "examples" / "suites"
    assert main(["score", str(suites), "--model", "scripted:first", "-o", str(tmp_path / "out"), "--no-history",
                 "--no-cache", "--no-progress"]) == 0
    (run_dir,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    loaded = data.load([run_dir], history=[])
    (run,) = loaded.runs
    assert run.dataset == "probsem suites test_A + test_B" and run.dataset_key == "test"
    html = render_html(loaded)
    assert "probsem suites test_A + test_B" in html.split('id="proctor-data"')[0]


def test_the_sample_browser_holds_at_most_max_samples_a_seeded_draw_with_a_note(tmp_path: Path) -> None:
    """#40: a run larger than --max-samples shows a random draw of its samples, the same each time (seeded by the run
    id), shared out over the runs (a small run gives its unused share to the others), and the page says so."""
    assert shown_shares([5, 100, 100], 60) == [5, 27, 28] and shown_shares([5, 10], 0) == [5, 10]
    assert shown_shares([5, 10], 15) == [5, 10] and sum(shown_shares([7, 300, 41], 100)) == 100
    big = write_run(tmp_path, "big", model="m", samples=gen_samples(300, seed=3, skill=0.5))
    small = write_run(tmp_path, "small", model="m2", samples=gen_samples(20, seed=4, skill=0.5))
    runs = data.load([big, small], history=[]).runs
    first, again = sample_blob(runs, 100), sample_blob(runs, 100)
    ids = [(row["r"], row["id"]) for row in first["samples"]]
    assert len(ids) == 100 and ids == [(row["r"], row["id"]) for row in again["samples"]] and first["total"] == 320
    assert sorted(Counter(run for run, _ in ids).values()) == [20, 80]  # the small run whole, 80 of the big one
    html = write_report([big, small], tmp_path / "r.html", history=[], max_samples=100).read_text(encoding="utf-8")
    assert "random sample of 100 of the 320 samples" in html and len(_blob(html)["samples"]) == 100
    whole = write_report([big, small], tmp_path / "all.html", history=[], max_samples=0).read_text(encoding="utf-8")
    assert 'id="sb-sampled"' not in whole and len(_blob(whole)["samples"]) == 320


def test_a_log_likelihood_sample_shows_its_options_and_the_chosen_one_not_the_few_shot_text(logprob_run: Path) -> None:
    """The "model output" column is the option the run chose with its log-probability (never the prompt's
    few-shot start); the sample view gets each option's log-probability and probability, chosen and expected
    flagged (1, 2)."""
    html = render_html(data.load([logprob_run], history=[]))
    rows = _blob(html)["samples"]
    first = json.loads((logprob_run / "samples.jsonl").read_text().splitlines()[0])
    row = next(r for r in rows if r["id"] == first["sample_id"])
    lp = first["details"]["logprobs"][first["extracted"]]
    assert row["ch"] == f"{first['extracted']} (logp {lp:.2f})".replace("-", "\u2212") and "q" not in row
    assert [o[0] for o in row["lp"]] == list(first["details"]["logprobs"])
    assert [o[2] for o in row["lp"]] == pytest.approx(list(first["details"]["distribution"].values()))
    flags = {o[0]: o[3] for o in row["lp"]}
    assert flags[first["extracted"]] & 1 and flags[first["reference"]] & 2 and sum(f & 1 for f in flags.values()) == 1
    assert all("q" not in r and r["ch"] and "\n" not in r["ch"] and len(r["ch"]) < 40 for r in rows)


def test_option_labels_reach_the_page_as_data(tmp_path: Path) -> None:
    s = type(base := gen_samples(1, seed=1, skill=1)[0]).model_validate({
        **base.model_dump(), "raw_output": None, "mode": "logprob", "extracted": PAYLOAD,
        "details": {"kind": "choice", "logprobs": {PAYLOAD: -0.5, "B": -40.5}}})
    html = render_html(data.load([write_run(tmp_path, "x", model="m", samples=[s], mode="logprob")], history=[]))
    assert PAYLOAD not in html and "<img" not in html
    row = _blob(html)["samples"][0]
    assert [o[0] for o in row["lp"]] == [PAYLOAD, "B"] and row["lp"][0][3] == 1 and row["ch"].startswith(PAYLOAD)
