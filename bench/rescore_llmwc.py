"""Re-read llm-wc's published runs with proctor's llm-wc rule and compare with llm-wc's own `pred`s.

iamsikun/llm-wc commits its runs: `results/<benchmark>_<stamp>/models/<model>/results.json` (the question
rows plus llm-wc's `pred` and `model_outputs`, the reply after llm-wc's `replace("**", "")`) and
`summary.json` (its accuracy). For each run and model this scores every reply the way `proctor run --config`
does (the question as proctor loads it, `score_item` with `proctor.scoring.extract.llmwc_rule`: `llm-wc-mcqa` for
MMLU-Pro and GPQA, `matharena-aime` for AIME) and prints:

- agreement: the share of replies where proctor's reading equals the recorded `pred` (both None agree; AIME
  answers as llm-wc compares them, integers);
- accuracy: llm-wc's (summary.json) and proctor's (mean score), with the difference in points;
- ambiguous: the share of replies the llm-wc rule and proctor's robust reader read differently;
- differ: the question ids where the readings differ (explained in docs/benchmarks-data.md);
- cased: for the multiple-choice runs, the agreement had llm-wc's six patterns been searched *without*
  re.IGNORECASE (the runs predate the commit that added the parser; this column tests that explanation).

    python bench/rescore_llmwc.py --git /work/.mirror/iamsikun+llm-wc/repo [--rev HEAD] [--json out.json]
    python bench/rescore_llmwc.py path/to/llm-wc/results [...]

Keep llm-wc's outputs outside the repository; nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from proctor.benchmarks import aime2025, mmlu_pro
from proctor.data.formats.convert import question_to_item
from proctor.data.records import Question
from proctor.scoring.extract import LLMWC_CHOICES, LLMWC_PATTERNS, REFERENCE, llmwc_rule
from proctor.scoring.scorers import score_item

# llm-wc's benchmark name → (proctor's name, the question converter proctor's loader uses)
BENCHMARKS: dict[str, tuple[str, Callable[[dict[str, Any]], Question]]] = {
    "mmlu_pro": ("mmlu-pro", mmlu_pro._question),
    "aime_2025": ("aime-2025", aime2025._question),
}
Reader = Callable[[str], str]


def git_reader(repo: Path, rev: str) -> tuple[list[str], Reader]:
    """The results/ files of `rev` in a git repository (bare or not), and a reader of their text."""
    names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev, "results/"],
                           check=True, capture_output=True, text=True).stdout.split()

    def read(name: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{name}"], check=True,
                              capture_output=True, text=True).stdout

    return names, read


def dir_reader(roots: list[Path]) -> tuple[list[str], Reader]:
    names = [str(p) for root in roots for p in sorted(root.rglob("*.json"))]
    return names, lambda name: Path(name).read_text(encoding="utf-8")


def model_runs(names: list[str]) -> Iterator[tuple[str, str, str, str]]:
    """(run, model, results.json, summary.json) for every model directory of every run."""
    for name in sorted(names):
        parts = Path(name).parts
        if parts[-1] == "results.json" and len(parts) >= 4 and parts[-3] == "models":
            yield parts[-4], parts[-2], name, str(Path(*parts[:-1]) / "summary.json")


def benchmark_of(run: str) -> tuple[str, Callable[[dict[str, Any]], Question]] | None:
    for prefix, found in BENCHMARKS.items():
        if run.startswith(prefix + "_"):
            return found
    return None


def same_pred(ours: str | None, theirs: Any) -> bool:
    """proctor's reading equals llm-wc's recorded `pred`: both None, the same text, or (AIME) the same integer
    once llm-wc's `normalize_aime_answer` has read both ("009" is 9, which proctor records as "9")."""
    if ours is None or theirs is None:
        return ours is None and theirs is None
    theirs = str(theirs)
    if ours.isascii() and ours.isdigit() and theirs.isascii() and theirs.strip().isdigit():
        return int(ours) == int(theirs)
    return ours == theirs


def read_cased(text: str, choices: str) -> str | None:
    """llm-wc's parser with its six patterns and its fallback searched case-sensitively (the explanation
    tested, not a rule proctor scores with)."""
    for pattern in LLMWC_PATTERNS:
        m = re.search(pattern, text)
        if m and m.group(1) in choices:
            return m.group(1)
    letters = re.findall(r"\b([" + choices + r"])\b", text)
    return letters[-1] if letters else None


def rescore(benchmark: str, convert: Callable[[dict[str, Any]], Question], rows: list[dict[str, Any]],
            summary: dict[str, Any]) -> dict[str, Any]:
    """proctor's llm-wc reading of every row against llm-wc's recorded `pred`s and accuracy."""
    rule = llmwc_rule(benchmark)
    agree = ambiguous = cased = 0
    ours = 0.0
    differ: list[str] = []
    for row in rows:
        item = question_to_item(convert(row), benchmark)
        s = score_item(item, row.get("model_outputs") or "", rule, REFERENCE)
        if same_pred(s.extracted, row.get("pred")):
            agree += 1
        else:
            differ.append(f"{item.identifier}: proctor {s.extracted!r}, llm-wc {row.get('pred')!r}")
        ambiguous += bool(s.ambiguous)
        if benchmark in LLMWC_CHOICES:
            cased += read_cased(row.get("model_outputs") or "", LLMWC_CHOICES[benchmark]) == row.get("pred")
        ours += s.score or 0.0
    n = len(rows)
    theirs = float(summary["accuracy"])
    return {"n": n, "pred_agreement": agree / n, "accuracy_llmwc": theirs, "accuracy_proctor": ours / n,
            "difference_points": 100 * (ours / n - theirs), "ambiguous_rate": ambiguous / n, "differ": differ,
            "cased_pred_agreement": cased / n if benchmark in LLMWC_CHOICES else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="llm-wc results directories")
    parser.add_argument("--git", type=Path, help="read results/ from this llm-wc git repository instead")
    parser.add_argument("--rev", default="HEAD", help="the commit of --git to read (default HEAD)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.git is None and not args.paths:
        parser.error("give results directories or --git REPO")
    names, read = git_reader(args.git, args.rev) if args.git else dir_reader(args.paths)
    figures: dict[str, Any] = {}
    print(f"{'run':<28} {'model':<16} {'rule':<15} {'n':>4} {'= pred':>7} {'llm-wc':>7} {'proctor':>8} "
          f"{'diff pt':>7} {'ambig.':>7} {'cased':>7}")
    for run, model, results, summary in model_runs(names):
        found = benchmark_of(run)
        if found is None:
            print(f"  skipped {run}/{model}: proctor does not re-read this benchmark", file=sys.stderr)
            continue
        f = rescore(*found, json.loads(read(results)), json.loads(read(summary)))
        figures[f"{run}/{model}"] = f
        print(f"{run:<28} {model:<16} {llmwc_rule(found[0]).name:<15} {f['n']:>4} {f['pred_agreement']:>7.1%} "
              f"{f['accuracy_llmwc']:>7.1%} {f['accuracy_proctor']:>8.1%} {f['difference_points']:>+7.1f} "
              f"{f['ambiguous_rate']:>7.1%} "
              + (f"{f['cased_pred_agreement']:>7.1%}" if f["cased_pred_agreement"] is not None else f"{'-':>7}"))
        for d in f["differ"]:
            print(f"  differs {d}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
