"""Re-score every per-question MMLU-Pro output file TIGER-Lab publishes, through proctor, against the authors.

TIGER-AI-Lab/MMLU-Pro publishes each model's raw outputs (`eval_results/*.zip` at f418b116: one JSON list of
test rows, the reply under `model_outputs` or `generated_text`, the authors' recorded `pred`, and the row's
own question, options and answer). Each row is replayed keyed by its `question_id` (never by prompt text: 159
texts repeat in the test split) with the row's own options, so no test split is needed. Per file:

- rows: JSON entries that are rows (stray non-row entries are skipped and counted), with text;
- = pred: proctor's default letter (`tiger-lab-mmlu-pro-local`, the three levels) equals the recorded `pred`;
- = 3-level: it equals upstream's three regexes, run verbatim here (`extract_answer` → `extract_again` →
  `extract_final`), on the same text;
- accuracy: recorded (`pred` = `answer`, a missing `pred` 1/k as the scripts' seeded draw expects), the
  authors' count of the same text (three levels, unread 1/k), proctor's default, and the README's headline
  figure where the README lists the model;
- era: which script wrote `pred` (the levels whose reading it equals best) and the rows where it differs from
  the three levels: unread by all three but a letter recorded (a random letter written into `pred`), or read
  by level 2 or 3 but recorded None (an older script that stopped at level 1 or 2).

    python bench/rescore_published.py --git <mirror of TIGER-AI-Lab/MMLU-Pro> [--json out.json]
    python bench/rescore_published.py FILE.zip [FILE.json ...]

A bad input (a truncated zip, a file whose JSON list holds no rows) is one line `path: what is wrong`, exit 2.
Nothing here is run by the tests but `tests/bench/test_rescore_published.py` on synthetic files.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.benchmarks.mmlu_pro import TIGER_COMMIT, _question
from proctor.data.formats.convert import question_to_item
from proctor.scoring.extract import ANSWER_RULES, REFERENCE, TIGER_L2, TIGER_L3, TIGER_LOCAL_RULE
from proctor.scoring.scorers import score_item
from proctor.stats.intervals import guess_credit

RULE = ANSWER_RULES[TIGER_LOCAL_RULE]  # the API script's replace('**', '') is already in its saved text
TEXT_KEYS = ("model_outputs", "generated_text")
_README_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([0-9]+(?:\.[0-9]+)?)\s*\|")


class BadInput(Exception):
    """A published file this script cannot read: its message is `path: what is wrong`."""


# upstream's level 2 anchored at line starts: the same match as `re.search(TIGER_L2, text)` (its first success
# starts a line: `.` stops at newlines, so a later start on a failing line fails too) without re-scanning each
# long line from every position, which takes seconds on a base model's 10,000-character single-line reply
_L2_AT_LINE_STARTS = re.compile("^" + TIGER_L2, re.MULTILINE)


def upstream_levels(text: str) -> tuple[str | None, str | None, str | None]:
    """upstream's chain with its regexes and flags (level 2 anchored, see above): each level's letter, a later
    level run only when the earlier ones found nothing, as upstream runs them."""
    match = re.search(r"answer is \(?([A-J])\)?", text)
    if match:
        return match.group(1), None, None
    match = _L2_AT_LINE_STARTS.search(text)
    if match:
        return None, match.group(1), None
    match = re.search(TIGER_L3, text, re.DOTALL)
    return None, None, match.group(0) if match else None


def _load_json(data: bytes, where: str) -> list[Any]:
    try:
        rows = json.loads(data)
    except UnicodeDecodeError as e:
        raise BadInput(f"{where}: not UTF-8 JSON ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{where}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(rows, list):
        raise BadInput(f"{where}:1: expected a JSON list of rows, got {type(rows).__name__}")
    return rows


def read_rows(name: str, blob: bytes) -> list[Any]:
    """The JSON list of a published file: a .json, or a .zip holding one .json (macOS resource forks ignored)."""
    if not name.endswith(".zip"):
        return _load_json(blob, name)
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            members = [n for n in z.namelist() if n.endswith(".json") and not n.startswith("__MACOSX")]
            if len(members) != 1:
                raise BadInput(f"{name}: expected one .json inside the zip, found {len(members)}")
            data = z.read(members[0])
    except (zipfile.BadZipFile, EOFError, OSError, zipfile.LargeZipFile) as e:
        raise BadInput(f"{name}: not a readable zip archive ({e})") from None
    return _load_json(data, f"{name}:{members[0]}")


@dataclass
class FileFigures:
    """One published file's replay: counts and sums, turned into the table's columns by `row`."""

    name: str
    entries: int = 0
    stray: int = 0  # entries that are not rows (strings, numbers) or lack question_id
    duplicates: int = 0  # rows whose question_id came earlier in the file (the first is kept)
    no_text: int = 0
    skipped: list[str] = field(default_factory=list)  # rows proctor's loader refuses (named)
    n: int = 0  # rows with text, replayed
    eq_pred: int = 0
    eq_levels: int = 0
    recorded: float = 0.0
    authors: float = 0.0
    proctor: float = 0.0
    by_level: Counter[str] = field(default_factory=Counter)
    eras: Counter[str] = field(default_factory=Counter)  # which levels' reading `pred` equals
    random_pred: int = 0  # a letter recorded where no level reads one
    unread_pred: int = 0  # None recorded where level 2 or 3 reads a letter

    def add(self, row: dict[str, Any], text: str) -> None:
        item = question_to_item(_question(row), "mmlu-pro")
        k_credit = guess_credit(item.modality.value)
        pred, answer = row.get("pred"), str(row["answer"]).strip()
        mine = score_item(item, text, RULE, REFERENCE)
        levels = upstream_levels(text)
        theirs = next((x for x in levels if x is not None), None)
        level = next((i for i, x in enumerate(levels, 1) if x is not None), None)
        self.n += 1
        self.eq_pred += mine.extracted == pred
        self.eq_levels += mine.extracted == theirs
        self.recorded += k_credit if not pred else float(pred == answer)
        self.authors += k_credit if theirs is None else float(theirs == answer)
        self.proctor += k_credit if mine.extracted is None else (mine.score or 0.0)
        self.by_level[str(level or "none")] += 1
        self.eras.update(_eras(pred, levels))
        self.random_pred += bool(pred) and theirs is None
        self.unread_pred += not pred and theirs is not None

    def row(self, readme: float | None) -> dict[str, Any]:
        n = self.n or 1
        return {
            "file": self.name, "entries": self.entries, "stray": self.stray, "duplicates": self.duplicates,
            "no_text": self.no_text, "skipped": self.skipped, "n": self.n,
            "eq_pred": self.eq_pred / n, "eq_levels": self.eq_levels / n,
            "accuracy_recorded": 100 * self.recorded / n, "accuracy_authors": 100 * self.authors / n,
            "accuracy_proctor": 100 * self.proctor / n, "readme": readme,
            "by_level": dict(self.by_level), "era": _era(self.eras, self.n), "random_pred": self.random_pred,
            "unread_pred": self.unread_pred,
        }


def _eras(pred: Any, levels: tuple[str | None, str | None, str | None]) -> list[str]:
    """The scripts whose reading equals the recorded `pred`: level 1 only, levels 1-2, all three."""
    found = []
    for era, upto in (("level 1", 1), ("levels 1-2", 2), ("levels 1-3", 3)):
        read = next((x for x in levels[:upto] if x is not None), None)
        if pred == read or (not pred and read is None):
            found.append(era)
    return found


def _era(eras: Counter[str], n: int) -> str:
    """The script era that explains most rows' `pred` (ties: the later script)."""
    best = max(("levels 1-3", "levels 1-2", "level 1"), key=lambda e: eras[e])
    return f"{best} ({eras[best] / (n or 1):.2%})"


def replay(name: str, entries: list[Any]) -> FileFigures:
    """Every row of one file, keyed by question_id (a repeated id is counted, its first row kept)."""
    figures = FileFigures(name, entries=len(entries))
    seen: set[Any] = set()
    for entry in entries:
        if not isinstance(entry, dict) or "question_id" not in entry:
            figures.stray += 1
            continue
        if entry["question_id"] in seen:
            figures.duplicates += 1
            continue
        seen.add(entry["question_id"])
        text = next((entry[k] for k in TEXT_KEYS if isinstance(entry.get(k), str)), None)
        if text is None:
            figures.no_text += 1
            continue
        try:
            figures.add(entry, text)
        except (ValueError, TypeError, KeyError) as e:  # proctor's loader skips such a row, naming it
            figures.skipped.append(f"question {entry.get('question_id')}: {e}")
    if not figures.n and not figures.skipped:
        raise BadInput(f"{name}:1: no row with question_id and text among {len(entries)} entries")
    return figures


def published_files(mirror: Path, commit: str) -> tuple[list[tuple[str, bytes]], list[str], str]:
    """(name, bytes) of every eval_results/ file at `commit` the mirror holds, the names it lacks, the README."""
    def git(*args: str) -> bytes:
        return subprocess.run(["git", f"--git-dir={mirror}", *args], check=True, capture_output=True).stdout

    listing = git("ls-tree", "-r", commit, "eval_results/").decode().splitlines()
    found, absent = [], []
    for line in listing:
        meta, path = line.split("\t", 1)
        sha = meta.split()[2]
        present = subprocess.run(["git", f"--git-dir={mirror}", "cat-file", "-e", sha], check=False).returncode == 0
        if present:
            found.append((Path(path).name, git("cat-file", "blob", sha)))
        else:
            absent.append(Path(path).name)
    return found, absent, git("show", f"{commit}:README.md").decode()


def readme_figures(readme: str) -> dict[str, float]:
    """The README's mini-leaderboard: normalised model name → overall accuracy (points)."""
    return {_norm(m.group(1)): float(m.group(2)) for line in readme.splitlines() if (m := _README_ROW.match(line))}


def _norm(model: str) -> str:
    return model.lower().removeprefix("meta-").replace("_", ".")


def model_of(file_name: str) -> str:
    """`model_outputs_Meta-Llama-3-70B_5shots.zip` → `Meta-Llama-3-70B`."""
    stem = file_name.removeprefix("model_outputs_").split(".json")[0].removesuffix(".zip")
    return re.sub(r"_\d+-?shots.*$", "", stem)


def print_table(rows: list[dict[str, Any]], absent: list[str]) -> None:
    """The Markdown table of docs/benchmarks-data.md."""
    print("| published file | rows | = `pred` | = 3 levels | recorded | authors' count | proctor | README | "
          "`pred` written by | rows where `pred` is not the 3 levels |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        readme = f"{r['readme']:.2f}" if r["readme"] is not None else "–"
        notes = []
        if r["random_pred"]:
            notes.append(f"{r['random_pred']} random letters recorded")
        if r["unread_pred"]:
            notes.append(f"{r['unread_pred']} read by level 2/3, recorded None")
        extra = [f"{r['stray']} stray entries skipped"] if r["stray"] else []
        extra += [f"{len(r['skipped'])} row refused"] if r["skipped"] else []
        print(f"| {model_of(r['file'])} | {r['n']:,}{' (' + ', '.join(extra) + ')' if extra else ''} | "
              f"{r['eq_pred']:.2%} | **{r['eq_levels']:.2%}** | {r['accuracy_recorded']:.2f} | "
              f"{r['accuracy_authors']:.2f} | **{r['accuracy_proctor']:.2f}** | {readme} | {r['era']} | "
              f"{'; '.join(notes) or '0'} |")
    for name in absent:
        print(f"| {model_of(name)} | not in the mirror (a large file) | | | | | | | | |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="published files (.zip or .json)")
    parser.add_argument("--git", type=Path, help="a (bare) mirror of TIGER-AI-Lab/MMLU-Pro: read eval_results/")
    parser.add_argument("--commit", default=TIGER_COMMIT)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    files, absent, readme = [(p.name, _read_bytes(p)) for p in args.paths], [], ""
    if args.git is not None:
        found, absent, readme = published_files(args.git, args.commit)
        files += found
    headline = readme_figures(readme)
    rows = []
    for name, blob in files:
        figures = replay(name, read_rows(name, blob))
        rows.append(figures.row(headline.get(_norm(model_of(name)))))
        for s in figures.skipped:
            print(f"{name}: skipped {s}", file=sys.stderr)
    print_table(rows, absent)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "absent": absent}, indent=2) + "\n")
    return 0


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None


def entry(argv: list[str] | None = None) -> int:
    """main, with a bad input as one line and exit 2."""
    try:
        return main(argv)
    except BadInput as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(entry())
