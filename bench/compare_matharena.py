"""proctor's MathArena rules against MathArena's own grader, reply by reply.

The reference: MathArena's parser (eth-sri/matharena `src/matharena/parser.py`, the installed `matharena`
package; with `--matharena MIRROR` its files are first checked byte for byte against the pinned commit) on
the path its grader takes for a final-answer competition with `strict_parsing: false` (`grader.py`
`extract_and_grade`): `extract_answer` (a list answer when the gold holds a comma), `parse_answer` of the gold,
`check_answers` (and, with the mirror, each competition's prompt as its runner builds it from the config).
proctor: the whole scoring path a run takes (`score_item` on an open Item) with

* `matharena` (HMMT's rule; AIME 2026 with `--answer-rule matharena`), every reply of `bench/math_replies.py`;
* `matharena-aime` (AIME 2026's default: llm-wc's adaptation, proctor's own code), the replies whose gold is
  an AIME answer (an integer 0-999).

    PYTHONPATH=src:bench python bench/compare_matharena.py --matharena /work/.mirror/eth-sri+matharena/repo

Nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import yaml
from math_replies import replies

from proctor.benchmarks import load_task
from proctor.data.formats.convert import question_to_item
from proctor.data.records import Question
from proctor.log.runlog import Outcome
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.math_graders import MATHARENA_COMMIT, matharena_parser
from proctor.scoring.scorers import score_item

FILES = ("src/matharena/parser.py", "src/matharena/parse_manual.py")


def check_pinned(mirror: Path) -> None:
    """The installed MathArena files are those of the pinned commit."""
    installed = Path(matharena_parser().__file__).parent
    for name in FILES:
        pinned = git_show(mirror, name)
        if (installed / Path(name).name).read_bytes() != pinned:
            raise SystemExit(f"{installed / Path(name).name}: not MathArena's {name} at {MATHARENA_COMMIT[:12]}")


def check_prompts(mirror: Path) -> None:
    """Each competition's prompt as MathArena's runner builds it from its config (runner.py: the `instruction`,
    `"\\n\\n{problem}"` appended, `format_map`) equals proctor's, on an invented problem with braces."""
    problem = "Find $x$ with {x} = \\frac{1}{2}.\n"
    for name in ("aime-2026", "hmmt-feb-2025", "hmmt-feb-2026"):
        task = load_task(name, data_file=_one_row(problem))
        config_path = task.prompts.competition.config  # type: ignore[attr-defined]
        config = yaml.safe_load(git_show(mirror, f"configs/competitions/{config_path.split('competitions/')[1]}"))
        template = config["instruction"] + ("" if "{problem}" in config["instruction"] else "\n\n{problem}")
        theirs = template.format_map({"problem": problem})
        ours = task.prompts.messages(task.items[0], "matharena")[0].content
        print(f"prompt {name}: {'same bytes' if theirs == ours else 'DIFFERENT'} as {config_path}")
        if theirs != ours:
            raise SystemExit(f"{name}: {ours!r} != {theirs!r}")


def _one_row(problem: str) -> Path:
    path = Path(tempfile.mkdtemp()) / "train.jsonl"
    path.write_text(json.dumps({"problem_idx": 1, "problem": problem, "answer": "7"}) + "\n")
    return path


def git_show(mirror: Path, name: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={mirror}", "show", f"{MATHARENA_COMMIT}:{name}"], check=True,
                          capture_output=True).stdout


def reference_correct(gold: str, reply: str) -> bool:
    parser = matharena_parser()
    listed = "," in gold
    answer, _ = parser.extract_answer(reply, strict_parsing=False, parse=True, list_answer=listed)
    return bool(parser.check_answers(answer, parser.parse_answer(gold, list_answer=listed)[0]))


def proctor_correct(rule: str, gold: str, reply: str) -> bool:
    item = question_to_item(Question(id=0, original_id="0", question="q", choices={}, answer=gold), "bench")
    return score_item(item, reply, ANSWER_RULES[rule]).outcome is Outcome.CORRECT


def is_aime(gold: str) -> bool:
    return gold.isdigit() and 0 <= int(gold) <= 999


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--matharena", type=Path, help="a mirror of eth-sri/matharena: check the installed files")
    args = ap.parse_args(argv)
    if args.matharena is not None:
        check_pinned(args.matharena)
        check_prompts(args.matharena)
    print(f"MathArena {MATHARENA_COMMIT[:12]} (installed) vs proctor's rules")
    print("| rule | replies | same verdict | MathArena correct | proctor correct | differing |")
    print("|---|---|---|---|---|---|")
    status = 0
    for rule, keep in (("matharena", lambda g: True), ("matharena-aime", is_aime)):
        n = same = ref_ok = mine_ok = 0
        differ: list[str] = []
        for label, gold, reply, _meant in replies():
            if not keep(gold):
                continue
            ref, mine = reference_correct(gold, reply), proctor_correct(rule, gold, reply)
            n, same, ref_ok, mine_ok = n + 1, same + (ref == mine), ref_ok + ref, mine_ok + mine
            if ref != mine:
                differ.append(f"{gold} {label} (MathArena {ref})")
        print(f"| {rule} | {n} | {same}/{n} | {ref_ok} | {mine_ok} | {'; '.join(differ) or '–'} |")
        status |= rule == "matharena" and same != n
    return status


if __name__ == "__main__":
    raise SystemExit(main())
