"""proctor's `matharena-aime` rule against MathArena's own parser, on llm-wc's published AIME replies.

proctor's AIME rule reproduces llm-wc's src/llm_wc/matharena.py (adapted from MathArena). This runs MathArena's
own code, eth-sri/matharena src/matharena/parser.py (and parse_manual.py) at the given revision, exported from a
(bare) mirror into a temporary package, as its grader does for AIME (`extract_and_grade`: `extract_answer`
with `strict_parsing: false` from configs/competitions/aime/aime_2025.yaml, the gold parsed by `parse_answer`,
`check_answers`), and compares its verdict with proctor's (`read_aime` + `same_integer`) on every reply of
llm-wc's AIME runs. `loguru` (MathArena's logger) is replaced by a silent stand-in when it is not installed.

It also counts the replies MathArena's runner would ask once more (its last-chance check: `extract_answer(reply,
strict_parsing=True)` finds no answer, src/matharena/runner.py) against proctor's check for the same
(`proctor.scoring.second_ask.matharena_no_answer`, the installed MathArena's parser under proctor's grader budget).

    python bench/compare_matharena_aime.py --matharena <mirror of eth-sri/matharena> --llmwc <mirror of iamsikun/llm-wc>

Nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from proctor.scoring.extract import read_aime, same_integer
from proctor.scoring.second_ask import matharena_no_answer

MATHARENA_FILES = ("src/matharena/parser.py", "src/matharena/parse_manual.py")


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={mirror}", *args], check=True, capture_output=True, text=True).stdout


def load_matharena(mirror: Path, rev: str, folder: Path) -> types.ModuleType:
    """MathArena's parser module, imported from files exported at `rev`."""
    package = folder / "matharena"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in MATHARENA_FILES:
        (package / Path(name).name).write_text(git(mirror, "show", f"{rev}:{name}"))
    if importlib.util.find_spec("loguru") is None:
        quiet = types.SimpleNamespace(warning=lambda *a, **k: None, info=lambda *a, **k: None,
                                      debug=lambda *a, **k: None, error=lambda *a, **k: None)
        sys.modules["loguru"] = types.SimpleNamespace(logger=quiet)  # type: ignore[assignment]
    sys.path.insert(0, str(folder))
    return importlib.import_module("matharena.parser")


def matharena_verdict(parser: types.ModuleType, reply: str, gold: str) -> tuple[str, bool]:
    """MathArena's grader on a final-answer competition with strict_parsing false."""
    answer, _ = parser.extract_answer(reply, strict_parsing=False, parse=True, list_answer="," in gold)
    typed_gold, _ = parser.parse_answer(gold, list_answer="," in gold)
    return str(answer), bool(parser.check_answers(answer, typed_gold))


def aime_runs(mirror: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    names = git(mirror, "ls-tree", "-r", "--name-only", "HEAD", "results/").split()
    return [(name, json.loads(git(mirror, "show", f"HEAD:{name}"))) for name in names
            if "/aime_" in f"/{name.split('/')[1]}" and name.endswith("/results.json")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--matharena", type=Path, required=True)
    parser.add_argument("--matharena-rev", default="HEAD")
    parser.add_argument("--llmwc", type=Path, required=True)
    args = parser.parse_args(argv)
    rev = git(args.matharena, "rev-parse", args.matharena_rev).strip()
    with tempfile.TemporaryDirectory() as tmp:
        matharena = load_matharena(args.matharena, rev, Path(tmp))
        print(f"MathArena {rev[:12]} vs proctor's matharena-aime")
        print("| run / model | n | same verdict | MathArena correct | proctor correct | asked again (MathArena / "
              "proctor) | differing problems |")
        print("|---|---|---|---|---|---|---|")
        asks = [0, 0, 0, 0]  # replies, MathArena asks, proctor asks, the same decision
        for name, rows in aime_runs(args.llmwc):
            same = theirs_ok = mine_ok = theirs_ask = mine_ask = 0
            differ = []
            for row in rows:
                reply, gold = row.get("model_outputs") or "", str(row["answer"])
                theirs, ok = matharena_verdict(matharena, reply, gold)
                mine = read_aime(reply)
                mine_correct = mine.answer is not None and same_integer(mine.answer, gold)
                same += ok == mine_correct
                theirs_ok += ok
                mine_ok += mine_correct
                ask = matharena.extract_answer(reply, strict_parsing=True)[0] is None
                mine_asks = matharena_no_answer(reply)
                theirs_ask += ask
                mine_ask += mine_asks
                asks[0] += 1
                asks[3] += ask == mine_asks
                if ok != mine_correct:
                    differ.append(f"{row['problem_idx']} (MathArena {theirs!r}, proctor {mine.answer!r})")
            label = "/".join(name.split("/")[1:4:2])
            asks[1] += theirs_ask
            asks[2] += mine_ask
            print(f"| {label} | {len(rows)} | {same}/{len(rows)} | {theirs_ok} | {mine_ok} | {theirs_ask} / {mine_ask} | "
                  f"{'; '.join(differ) or '–'} |")
        print(f"asked again: MathArena {asks[1]} of {asks[0]} replies, proctor {asks[2]}; the same decision on "
              f"{asks[3]}/{asks[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
