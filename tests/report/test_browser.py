"""The report in a real headless Chromium: no network, no console errors, injected markup stays text, fast at 12k."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_runs import PAYLOAD, gen_samples, write_run
from system_tools import CHROMIUM, require

from proctor.report import write_report

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync"]
SHOTS = Path(os.environ.get("PROCTOR_SCREENSHOTS", "/tmp/proctor-report-shots"))


def _require_browser() -> Any:
    require("chromium")
    from playwright.sync_api import sync_playwright

    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _require_browser()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Page:
    """A page that records console messages, page errors and every request."""

    def __init__(self, browser: Any, scheme: str = "light") -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
        self.console: list[tuple[str, str]] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.console.append(("pageerror", str(e))))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, path: Path) -> float:
        t0 = time.perf_counter()
        self.page.goto(path.resolve().as_uri(), wait_until="load")
        self.page.wait_for_selector("#sb-list[data-ready='1']", timeout=15_000)
        return time.perf_counter() - t0

    def count(self) -> int:
        return int(self.page.get_attribute("#sb-list", "data-count"))

    def chip(self, outcome: str) -> int:
        return int(self.page.inner_text(f".chip[data-outcome='{outcome}'] b"))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from report_runs import prob_samples

    root = tmp_path_factory.mktemp("runs")
    a = write_run(root, "run-a", model="openai:model-a", samples=gen_samples(240, seed=1, skill=0.85))
    b = write_run(root, "run-b", model="hf:model-b", samples=gen_samples(240, seed=2, skill=0.6),
                  started_at="2025-05-02T09:00:00+00:00")
    p = write_run(root, "run-p", model="hf:tiny", samples=prob_samples(40, seed=3), mode="logprob", dataset="suite")
    hist = [{"started_at": f"2025-04-{d:02d}T10:00:00+00:00", "accuracy": 0.5 + d / 100, "ci_low": 0.44 + d / 100,
             "ci_high": 0.56 + d / 100} for d in (2, 9, 20)]
    return write_report([a, b, p], root / "report.html", history=hist)


def test_report_opens_clean_and_the_payload_stays_text(browser: Any, report: Path) -> None:
    pg = Page(browser)
    pg.open(report)
    page = pg.page
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.click(".row >> nth=0")  # the first sample carries the payload; open its details
    page.screenshot(path=str(SHOTS / "report.png"), full_page=True)
    assert pg.console == []
    assert pg.requests == [report.resolve().as_uri()]
    assert page.evaluate("typeof window.__pwned") == "undefined"
    raw = page.inner_text(".detail pre.raw")
    assert PAYLOAD in raw
    assert page.locator(".detail img").count() == 0 and page.locator("#sb-list script").count() == 0
    for sel in ("#headline table", "#categories .hbars", "#difficulty svg", "#calibration svg", "#coverage .hbars", "#history svg"):
        assert page.locator(sel).first.is_visible(), sel


def test_filters_search_and_paging_change_what_is_shown(browser: Any, report: Path) -> None:
    pg = Page(browser)
    pg.open(report)
    page = pg.page
    total = pg.count()
    assert total == 520 and pg.chip("all") == total
    counts = {o: pg.chip(o) for o in ("correct", "wrong", "no_answer", "error", "unscored")}
    assert all(counts.values()) and sum(counts.values()) == total
    for outcome, n in counts.items():
        page.click(f".chip[data-outcome='{outcome}']")
        assert pg.count() == n
        badges = page.locator(".row .badge").all_inner_texts()
        assert badges and set(badges) == {outcome.replace("_", " ")}
    page.click(".chip[data-outcome='all']")
    assert pg.count() == total
    page.fill("#sb-q", "window.__pwned")
    page.wait_for_selector("#sb-list[data-count='2']")  # the payload sample, once per generation run
    page.fill("#sb-q", "")
    page.wait_for_selector(f"#sb-list[data-count='{total}']")
    page.select_option("#sb-run", "2")
    assert pg.count() == 40 and pg.chip("unscored") == 4
    page.select_option("#sb-run", "")
    first = page.inner_text(".row .id >> nth=0")
    page.click("#sb-next")
    assert page.inner_text(".row .id >> nth=0") != first and "page 2" in page.inner_text("#sb-page")
    assert pg.console == []


def test_dark_mode_renders(browser: Any, report: Path) -> None:
    pg = Page(browser, scheme="dark")
    pg.open(report)
    bg = pg.page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(15, 18, 22)"
    pg.page.screenshot(path=str(SHOTS / "report-dark.png"))
    assert pg.console == []


def test_12000_samples_open_fast_and_stay_small(browser: Any, tmp_path: Path) -> None:
    samples = gen_samples(12_000, seed=7, skill=0.7, long_output=True)
    d = write_run(tmp_path, "big", model="openai:big", samples=samples)
    out = write_report([d], tmp_path / "big.html", history=[])
    size = out.stat().st_size
    assert size < 15 * 1024 * 1024, f"{size / 1e6:.1f} MB"
    pg = Page(browser)
    elapsed = pg.open(out)
    assert elapsed < 3.0, f"{elapsed:.2f} s"
    # the browser holds --max-samples (10,000 by default) of the 12,000, drawn at random, and says so
    assert pg.count() == 10_000 and pg.page.locator(".row").count() == 50
    assert "random sample of 10\u2009000 of the 12\u2009000" in pg.page.inner_text("#sb-sampled")
    assert pg.console == [] and pg.requests == [out.resolve().as_uri()]
    print(f"12k-sample report: {size / 1e6:.2f} MB, opened in {elapsed:.2f} s")


def test_judge_verdicts_and_agreement_in_the_browser(browser: Any, judged_run: Path, tmp_path: Path) -> None:
    out = write_report([judged_run], tmp_path / "judged.html", history=[])
    pg = Page(browser)
    pg.open(out)
    page = pg.page
    assert page.locator("#headline table.confusion").is_visible()
    assert "pass@3" in page.inner_text("#headline .card")
    page.click(".row >> nth=0")  # j.0#0: judge-scored, its reasoning is the payload
    verdict = page.locator(".detail .verdict")
    assert "Judge verdict" in (verdict.text_content() or "") and PAYLOAD in page.inner_text(".detail pre.judge-reason")
    page.click(".row >> nth=0")
    page.click(".row >> nth=1")  # j.1#0: exact match scored it, the judge only checked
    assert "Judge check" in (page.text_content(".detail .verdict") or "") and "Check of item 1." in page.inner_text(".detail")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "report-judged.png"), full_page=True)
    assert page.evaluate("typeof window.__pwned") == "undefined" and page.locator(".detail img").count() == 0
    assert pg.console == [] and pg.requests == [out.resolve().as_uri()]


def test_a_log_likelihood_sample_shows_the_chosen_option_and_each_option_s_probability(
        browser: Any, logprob_run: Path, tmp_path: Path) -> None:
    out = write_report([logprob_run], tmp_path / "lp.html", history=[])
    pg = Page(browser)
    pg.open(out)
    page = pg.page
    snip = page.inner_text(".row >> nth=0 >> .snip")
    assert snip.upper().startswith("CHOSE") and "(logp \u2212" in snip and "Answer:" not in snip
    page.click(".row >> nth=0")
    rows = page.locator(".detail table.lp tr")
    assert rows.count() == 5 and page.locator(".detail table.lp tr.chosen").count() == 1  # a header, 4 options
    assert page.locator(".detail table.lp tr.expected").count() == 1 and "%" in page.inner_text(".detail table.lp")
    assert pg.console == [] and pg.requests == [out.resolve().as_uri()]


# ---------------------------------------------------------------- layout at phone, laptop and desktop widths

WIDTHS = (390, 1200, 1600)
LONG_MODEL = "openai:meta-llama/Llama-3.1-70B-Instruct"

FONT_SIZES = """() => {
  const out = [];
  const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  for (const t of document.querySelectorAll('svg.chart text')) {
    const svg = t.ownerSVGElement, vb = svg.viewBox.baseVal;
    if (!visible(svg) || !t.textContent.trim()) continue;
    const scale = svg.getBoundingClientRect().width / vb.width;
    out.push([parseFloat(getComputedStyle(t).fontSize) * scale, t.textContent, svg.getAttribute('aria-label')]);
  }
  for (const e of document.querySelectorAll('.hbars *')) {
    const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (own && visible(e)) out.push([parseFloat(getComputedStyle(e).fontSize), e.textContent, 'html bars']);
  }
  return out;
}"""


SUMMARY_COLUMNS_OUT_OF_VIEW = """() => {
  const wrap = document.querySelector('#headline .table-wrap').getBoundingClientRect();
  const out = [];
  for (const td of document.querySelectorAll('#headline table.headline td')) {
    const r = td.getBoundingClientRect();
    if (r.width === 0 || r.left < wrap.left - 1 || r.right > wrap.right + 1) out.push(td.dataset.label);
  }
  return out;
}"""

CLIPPED_HEADERS = """() => Array.from(document.querySelectorAll('.row-head > span'))
  .filter((s) => s.getClientRects().length && !s.querySelector('.muted') && s.scrollWidth > s.clientWidth + 1)
  .map((s) => s.textContent)"""

DIFFICULTY_CUT = """() => {
  const out = [];
  for (const box of document.querySelectorAll('#difficulty .chart-box')) {
    if (!box.getClientRects().length) continue;
    if (box.scrollWidth > box.clientWidth + 1) out.push('the chart scrolls: ' + box.scrollWidth + ' > ' + box.clientWidth);
    const b = box.getBoundingClientRect();
    for (const t of box.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1) out.push(t.textContent);
    }
  }
  return out;
}"""

BROKEN_TOKENS = r"""() => {
  // A line break inside one text node must follow a space or a separator; <wbr> splits nodes at the others.
  const ok = /[\s\/_\-,:;=&?·|@+]/;
  const out = [];
  const cells = document.querySelectorAll('#provenance th, #provenance td');
  for (const cell of cells) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent, range = document.createRange();
      let top = null;
      for (let i = 0; i < text.length; i++) {
        if (/\s/.test(text[i])) continue;
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        // a separator that opens a token (the dashes of `(--option`) is part of it: no break right after it
        const opens = i < 2 || /[\s(\[{"]/.test(text[i - 2]) || ok.test(text[i - 2]);
        const bad = !ok.test(text[i - 1]) || (!/\s/.test(text[i - 1]) && opens);
        if (top !== null && rect.top > top + 2 && i > 0 && bad) out.push(text.slice(Math.max(0, i - 8), i) + '|' + text.slice(i, i + 8));
        top = rect.top;
      }
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def layout_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worst case for layout: three runs of one long-named model on one dataset that differ only by mode,
    prompt and settings; a 3-epoch judged run (every optional headline column); a suite run; 14 categories."""
    from report_runs import MMLU_PRO_LIKE, judged_samples, prob_samples

    from proctor.metrics.results import summarize

    root = tmp_path_factory.mktemp("layout")

    def gen(seed: int) -> list[Any]:
        return gen_samples(280, seed=seed, skill=0.7, categories=MMLU_PRO_LIKE)

    zero = write_run(root, "gen-zero", model=LONG_MODEL, samples=gen(1), dataset="mmlu-pro")
    cot = write_run(root, "gen-cot", model=LONG_MODEL, samples=gen(2), dataset="mmlu-pro", prompt_kind="chain_of_thought",
                    generation={"temperature": 0.7, "max_tokens": 2048}, finished_at="2025-05-01T12:14:05+00:00")
    lp = write_run(root, "lp", model=LONG_MODEL, samples=gen(3), dataset="mmlu-pro", mode="logprob", generation={})
    ss = judged_samples(30, epochs=3, seed=5)
    results = summarize(ss)  # judge agreement included, as the runner writes it
    judged = write_run(root, "judged", model="anthropic:claude-sonnet-4-5-20250929", samples=ss, results=results,
                       dataset="judged-prose", epochs=3)
    suite = write_run(root, "suite", model="hf:out/demo/tiny-model", samples=prob_samples(40, seed=3), mode="logprob",
                      dataset="suite")
    hist = [{"started_at": f"2025-04-{d:02d}T10:00:00+00:00", "accuracy": 0.5 + d / 100, "ci_low": 0.44 + d / 100,
             "ci_high": 0.56 + d / 100} for d in (2, 9, 20)]
    return write_report([zero, cot, lp, judged, suite], root / "layout.html", history=hist)


@pytest.mark.parametrize("width", WIDTHS)
def test_layout_reads_at_phone_laptop_and_desktop_widths(browser: Any, layout_report: Path, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(layout_report.resolve().as_uri(), wait_until="load")
    page.wait_for_selector("#sb-list[data-ready='1']")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"layout-{width}.png"), full_page=True)
    # nothing pushes the page sideways; wide content scrolls inside its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    fits = page.evaluate("(() => { const t = document.querySelector('#headline table'); "
                         "return [t.scrollWidth, t.parentElement.clientWidth]; })()")
    if width >= 1200:
        assert fits[0] <= fits[1], f"headline table {fits[0]} px in {fits[1]} px"
        assert page.locator("#headline th", has_text="Duration").is_visible()
    # chart text stays readable: >= 11 px on a laptop or desktop, >= 10 px on a phone
    sizes = page.evaluate(FONT_SIZES)
    assert len(sizes) > 100
    floor = 10.0 if width < 600 else 11.0
    small = [s for s in sizes if s[0] < floor - 0.05]
    assert not small, small[:5]
    # category charts take the section's full width
    box = page.evaluate("(() => { const s = document.querySelector('#categories'), c = s.querySelector('.hbars'); "
                        "const cs = getComputedStyle(s); return [c.getBoundingClientRect().width, "
                        "s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)]; })()")
    assert box[0] >= 0.98 * box[1], box
    # the sample list has column headers; output and prompt snippets look different
    heads = page.locator(".row-head > span").all_inner_texts()
    assert heads[:2] == ["OUTCOME", "SAMPLE"] and heads[-2:] == ["EXPECTED", "EXTRACTED"]
    assert page.locator(".row-head").is_visible()
    assert page.locator(".row-head .ref").is_visible() and page.locator(".row .ref >> nth=0").inner_text() != ""
    assert page.locator(".row-head .model").is_visible() == (width > 760)  # a phone tells models by colour
    assert page.locator(".row .id .sw >> nth=0").is_visible()
    clipped = page.evaluate(CLIPPED_HEADERS)
    assert not clipped, clipped
    # every summary column is visible, or its box scrolls with a cue saying so
    hidden = page.evaluate(SUMMARY_COLUMNS_OUT_OF_VIEW)
    assert not hidden or page.locator("#headline .table-wrap.scrolls").count() == 1, hidden
    if width < 600:
        assert not hidden, hidden
    # the difficulty chart and its axis title are whole, inside the section
    assert page.evaluate(DIFFICULTY_CUT) == []
    # Provenance wraps between the parts of a value, never inside a word or a number
    broken = page.evaluate(BROKEN_TOKENS)
    assert not broken, broken[:5]
    page.close()


def test_run_cards_and_title_tell_the_runs_apart(browser: Any, layout_report: Path) -> None:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(layout_report.resolve().as_uri(), wait_until="load")
    page.wait_for_selector("#sb-list[data-ready='1']")
    title = page.inner_text("h1")
    assert "compared" not in title and "3 datasets" in title  # never "5 runs compared" across datasets
    cards = [" ".join(t.split()) for t in page.locator(".card").all_inner_texts()]
    assert len(set(cards)) == 5
    first_three = [page.locator(f".card >> nth={i}").locator(".facet.differs").all_inner_texts() for i in range(3)]
    assert ["generate", "zero_shot"] == first_three[0][:2] and "chain_of_thought" in first_three[1]
    assert "logprob" in first_three[2]
    runs = page.locator("#sb-run option").all_inner_texts()[1:]
    assert len(set(runs)) == 5 and all(LONG_MODEL in r for r in runs[:3])
    # the samples' snippets: generation output in the output style, log-prob prompts tagged "prompt"
    assert page.locator(".row .snip.out").count() > 0
    page.select_option("#sb-run", "4")
    assert page.locator(".row .snip.q .tag", has_text="prompt").count() > 0
    out_font = page.evaluate("getComputedStyle(document.querySelector('.row .snip.q')).fontStyle")
    assert out_font == "italic"
    page.close()


# ---------------------------------------------------------------- the comparison section and the notices


@pytest.fixture(scope="module")
def folder_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding two runs on the same items, a second directory of the first run, a run that scored
    nothing and a damaged directory."""
    from proctor.log.runlog import Outcome, Sample, expand_run_dirs

    root = tmp_path_factory.mktemp("folder")
    runs = root / "runs"
    a = write_run(runs, "run-a", model=LONG_MODEL, samples=gen_samples(200, seed=1, skill=0.85))
    write_run(runs, "run-b", model="hf:model-b", samples=gen_samples(200, seed=2, skill=0.6))
    shutil.copytree(a, runs / "run-a-again")
    dead = [Sample(sample_id=f"mc.{i}#0", item_id=f"mc.{i}", dataset="synthetic-mc", prompt="q", score=None,
                   outcome=Outcome.ERROR, error="HTTP 401") for i in range(20)]
    write_run(runs, "run-dead", model="hf:dead", samples=dead)
    (runs / "run-broken").mkdir()
    (runs / "run-broken" / "manifest.json").write_text("{", encoding="utf-8")
    return write_report(expand_run_dirs([runs]), root / "folder.html", history=[])


@pytest.mark.parametrize("width", WIDTHS)
def test_comparison_verdict_and_notices_at_every_width(browser: Any, folder_report: Path, width: int) -> None:
    pg = Page(browser)
    page = pg.page
    page.set_viewport_size({"width": width, "height": 900})
    pg.open(folder_report)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"comparison-{width}.png"), full_page=True)
    assert pg.console == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.locator(".card").count() == 2  # one card per real run
    verdict = page.locator("#comparison .verdict")
    assert verdict.is_visible()
    assert verdict.inner_text().startswith(f"{LONG_MODEL} · synthetic-mc ahead of hf:model-b · synthetic-mc by ")
    assert verdict.inner_text().endswith("197 shared items")  # 3 errored items in each run are not shared
    notices = page.locator("#notices")
    assert notices.is_visible()
    text = notices.inner_text()
    assert "run-broken: skipped" in text and "run-a-again: the same run as" in text and "hf:dead" in text
    assert page.locator("#comparison tr.pair").count() == 1
    assert "hf:dead" not in page.inner_text("#categories")


def test_runs_of_different_settings_are_set_apart(browser: Any, layout_report: Path) -> None:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(layout_report.resolve().as_uri(), wait_until="load")
    apart = page.locator("#comparison ul.apart li").all_inner_texts()
    assert len(apart) == 3 and all("setting:" in a for a in apart) and any("logprob" in a for a in apart)
    alone = page.inner_text("#comparison p.alone")  # #41.19: alone on a dataset is not "not comparable"
    assert alone.startswith("Alone on their dataset") and "judged-prose" in alone and "suite" in alone
    page.close()


@pytest.fixture(scope="module")
def phone_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two comparable runs with ARC-style ids (`Mercury_7175807#0`) and answers no rule found."""
    root = tmp_path_factory.mktemp("phone")

    def renamed(seed: int, skill: float) -> list[Any]:
        return [s.model_copy(update={"sample_id": f"Mercury_{7175800 + i}#0", "item_id": f"Mercury_{7175800 + i}"})
                for i, s in enumerate(gen_samples(60, seed=seed, skill=skill))]

    a = write_run(root, "a", model=LONG_MODEL, samples=renamed(1, 0.9))
    b = write_run(root, "b", model="hf:model-b", samples=renamed(2, 0.4), started_at="2025-05-02T09:00:00+00:00")
    return write_report([a, b], root / "phone.html", history=[])


def test_at_390_px_badges_ids_and_the_comparison_are_whole_and_on_screen(browser: Any, phone_report: Path) -> None:
    """#41.19: at 390 px the "no answer" badge was clipped, sample ids broke mid-token (`Mercury_71` / `75807#0`)
    and the comparison's difference, interval and verdict were off-screen in a table scrolled sideways."""
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.goto(phone_report.resolve().as_uri(), wait_until="load")
    page.wait_for_selector("#sb-list[data-ready='1']")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "phone-390.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    badge = page.locator("#sb-list .badge.o-no_answer").first
    assert badge.is_visible()
    whole = page.evaluate("(b) => { const c = b.parentElement.getBoundingClientRect(), r = b.getBoundingClientRect();"
                          " return r.right <= c.right + 0.5 && b.scrollWidth <= b.clientWidth; }", badge.element_handle())
    assert whole, "the no-answer badge is clipped"
    for ident in page.locator("#sb-list .row > .id").all()[:20]:
        lines = ident.evaluate("(e) => { const r = document.createRange();"  # the id's text, not its colour swatch
                               " r.selectNodeContents([...e.childNodes].find(n => n.nodeType === 3));"
                               " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }")
        assert lines == 1, f"{ident.inner_text()!r} breaks over {lines} lines"
    for cell in ("diff", "ci", "verdict-word"):
        box = page.locator(f"#comparison tr.pair td.{cell}").first
        assert box.is_visible()
        rect = box.bounding_box()
        assert rect is not None and rect["x"] >= 0 and rect["x"] + rect["width"] <= 390, (cell, rect)
    assert page.locator("#comparison tr.pair td.ci").first.inner_text().startswith("[")
    cut = page.evaluate("[...document.querySelectorAll('.card .facet, .card-t')]"
                        ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)")
    assert cut == [], f"cut on the cards: {cut}"  # a model, judge or prompt name wraps, never ends in "…"
    page.close()


@pytest.fixture(scope="module")
def ladder_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a budget ladder's last step (`run --budgets 40,100,300` on an echo server cut at the budget)."""
    import json

    from proctor.cli import main
    from proctor.testing import serve

    root = tmp_path_factory.mktemp("ladder")
    rows = [{"identifier": f"t{i:02d}", "modality": "boolean", "response": "True",
             "prompt": f"Answer: True. Claim {i} " + " ".join(["word"] * (0, 60, 150)[i // 10]) + "."}
            for i in range(30)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with serve(responder="echo", truncate=True) as srv:
        assert main(["run", str(root / "items.jsonl"), "--model", "openai:proctor-test", "--budgets", "40,100,300",
                     "--base-url", srv.base_url, "-o", str(root / "ladder"), "--no-progress", "--no-history",
                     "--store", str(root / "s.sqlite")]) == 0
    assert main(["report", str(root / "ladder" / "max-tokens-300"), "-o", str(root / "report.html")]) == 0
    return root / "report.html"


@pytest.mark.parametrize("width", (390, 1280))
def test_the_budget_curve_reads_at_phone_and_laptop_widths(browser: Any, ladder_report: Path, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(ladder_report.resolve().as_uri(), wait_until="load")
    page.wait_for_selector("#sb-list[data-ready='1']")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"budgets-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    chart = page.locator("#budgets .budget-curve svg:visible")
    assert chart.count() == 1
    box = chart.bounding_box()
    section = page.locator("#budgets").bounding_box()
    assert box is not None and section is not None and box["x"] >= section["x"]
    assert box["x"] + box["width"] <= section["x"] + section["width"] + 1
    assert page.locator("#budgets .budget-curve svg:visible circle").count() == 3
    ticks = page.locator("#budgets .budget-curve svg:visible text.tick").all_text_contents()
    assert {"40", "100", "300"} <= set(ticks)
    sizes = page.evaluate("(() => [...document.querySelectorAll('#budgets svg text')].filter(t => t.getBoundingClientRect()"
                          ".width > 0).map(t => parseFloat(getComputedStyle(t).fontSize) * "
                          "t.closest('svg').getBoundingClientRect().width / t.closest('svg').viewBox.baseVal.width))()")
    assert sizes and min(sizes) >= (10.0 if width < 600 else 11.0) - 0.05, sizes
    assert "settles at 300 tokens" in page.inner_text("#budgets")
    assert page.locator("#budgets table tbody tr").count() == 3
    page.close()


# ---------------------------------------------------------------- trajectories (issue 48)

@pytest.fixture(scope="module")
def trajectory_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trajectory_samples import agent_sample, calling_turn, hostile_trajectory, long_trajectory

    from proctor.core.trajectory import Trajectory, Turn
    from proctor.log.runlog import Outcome

    called = Trajectory(turns=[calling_turn(0)], stop="called", wall_s=0.3)
    failed = Trajectory(turns=[calling_turn(0), Turn(index=1, error="HTTP 500 <b>after</b> 4 retries", started_s=0.3)],
                        stop="model_error", stop_detail="HTTP 500 <b>after</b> 4 retries")
    samples = [agent_sample("traj-hostile", hostile_trajectory()),
               agent_sample("traj-long", long_trajectory(50, 100_000), Outcome.TRUNCATED),
               agent_sample("traj-called", called.model_copy(update={"turns": [
                   calling_turn(0).model_copy(update={"text": ""})]})),
               agent_sample("traj-failed", failed, Outcome.ERROR).model_copy(update={"error": "HTTP 500"})]
    root = tmp_path_factory.mktemp("traj")
    d = write_run(root, "agent-run", model="openai:agent-model", samples=samples, dataset="agentic",
                  prompt_kind="function-calling")
    return write_report([d], root / "traj.html", history=[])


def _open_sample(browser: Any, path: Path, name: str, width: int) -> tuple[Page, Any]:
    pg = Page(browser)
    pg.page.set_viewport_size({"width": width, "height": 900})
    pg.open(path)
    pg.page.click(f".row:has-text('{name}')")
    pg.page.wait_for_selector(".detail .traj")
    return pg, pg.page


OFF_SCREEN = """(w) => [...document.querySelectorAll('.detail .traj *')].filter(e => e.getClientRects().length)
  .filter(e => e.getBoundingClientRect().right > w + 0.5 || e.getBoundingClientRect().left < -0.5)
  .map(e => e.className + ': ' + e.textContent.slice(0, 60))"""


@pytest.mark.parametrize("width", (390, 1280))
def test_a_trajectory_shows_its_turns_calls_and_results_and_its_hostile_text_stays_text(
        browser: Any, trajectory_report: Path, width: int) -> None:
    from trajectory_samples import HOSTILE

    pg, page = _open_sample(browser, trajectory_report, "traj-hostile", width)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"trajectory-{width}.png"), full_page=True)
    traj = page.locator(".detail .traj")
    assert page.locator(".detail .traj .turn").count() == 3
    facts = traj.locator(".facts").inner_text()
    assert "answered" in facts and "tool calls2" in facts and "math.add" in facts
    calls = traj.locator(".call")
    assert calls.count() == 2 and calls.nth(0).locator(".fn").inner_text() == "math.add"
    assert HOSTILE.replace('"', '\\"') in calls.nth(0).locator("pre.args").inner_text()  # arguments as sent
    assert calls.nth(0).locator("pre.res").inner_text() == HOSTILE  # the result, as text
    assert "{not json " + HOSTILE in calls.nth(1).locator("pre.args").inner_text()
    assert calls.nth(1).locator(".badge").inner_text() == "bad arguments"
    assert "38 B" in calls.nth(0).locator(".res-h").inner_text()
    head = traj.locator(".turn-h").nth(0).inner_text()
    assert "Turn 1" in head and "40 in / 12 out" in head and "0.25 s" in head
    assert "cached" in traj.locator(".turn-h").nth(2).inner_text()
    assert "The answer is 5." in traj.locator(".turn").nth(2).inner_text()
    assert page.locator("#sb-list img").count() == 0 and page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(OFF_SCREEN, width) == []
    assert pg.console == [] and pg.requests == [trajectory_report.resolve().as_uri()]
    page.close()


@pytest.mark.parametrize("width", (390, 1280))
def test_a_long_trajectory_is_capped_in_the_page_and_says_what_it_left_out(
        browser: Any, trajectory_report: Path, width: int) -> None:
    """50 turns of 100 KB results (5 MB of sample): the page carries 24 turns, each text cut, and says so."""
    size = trajectory_report.stat().st_size
    assert size < 600_000, size
    pg, page = _open_sample(browser, trajectory_report, "traj-long", width)
    traj = page.locator(".detail .traj")
    assert traj.locator(".turn").count() == 24
    assert "26 more turns (turns 13–38)" in traj.locator(".gap").inner_text()
    assert "stopped at the turn limit (50 turns)" in traj.locator(".facts").inner_text()
    first = traj.locator(".call pre.res").nth(0).inner_text()
    assert "cut here: 96,000 more characters" in first
    assert "truncated" in traj.locator(".res-h").nth(0).inner_text() and "390.6 KB" in traj.locator(".res-h").nth(0).inner_text()
    assert "Turn 50" in traj.locator(".turn-h").nth(23).inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(OFF_SCREEN, width) == []
    assert pg.console == []
    page.close()


def test_a_trajectory_that_ended_in_calls_shows_them_in_its_row(browser: Any, trajectory_report: Path) -> None:
    pg = Page(browser)
    pg.open(trajectory_report)
    snip = pg.page.inner_text(".row:has-text('traj-called') .snip")
    assert snip.upper().startswith("CALLS") and 'math.add({"a": 2, "b": 3})' in snip
    pg.page.fill("#sb-q", "step 1.")  # the search reads the turns' text
    pg.page.wait_for_selector("#sb-list[data-count='2']")
    assert pg.console == []


def test_a_failed_request_shows_as_the_turn_s_error(browser: Any, trajectory_report: Path) -> None:
    pg, page = _open_sample(browser, trajectory_report, "traj-failed", 390)
    traj = page.locator(".detail .traj")
    assert "the model's request failed (HTTP 500 <b>after</b> 4 retries)" in traj.locator(".facts").inner_text()
    assert traj.locator(".turn").nth(1).locator("pre.err").inner_text() == "HTTP 500 <b>after</b> 4 retries"
    assert page.locator(".detail .traj b", has_text="after").count() == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 and pg.console == []
    page.close()
