"""proctor's IFEval grader against lm-eval's ifeval task, instruction by instruction, and its four metrics.

Give it google/IFEval's rows (a local copy: jsonl, json, csv or parquet) and replies in Google's
instruction_following_eval format (`input_response_data_*.jsonl`: lines `{"prompt": …, "response": …}`, e.g.
the GPT-4 replies the IFEval authors publish): each reply is graded by proctor (`proctor.scoring.ifeval`) and by
lm-eval's `test_instruction_following_strict` / `_loose` directly, and the counts of equal verdicts per
instruction id and the four metrics of both are printed.

    python bench/compare_lmeval_ifeval.py --rows ifeval_train.jsonl --replies input_response_data_gpt4.jsonl

`--synthetic` draws a row for every instruction id lm-eval registers (its own checkers' random kwargs) and
grades a fixed set of replies. nltk's punkt_tab must be installed (python -m nltk.downloader punkt_tab).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from proctor.benchmarks import ifeval
from proctor.benchmarks.hub import load_file
from proctor.scoring.ifeval import grade, require_checkers

REPLIES = ["", "ALL CAPS REPLY, WITH A COMMA.", "lower case reply\n\n***\n\nP.S. more", '"quoted reply"',
           "<<Title>>\n* one\n* two\nSECTION 1\n[name] *x*", '{"a": 1}', "Le chat dort sur la table toute la journée.",
           "One. Two! Three? Four.\n\nMy answer is yes.", "Is there anything else I can help with?"]


def synthetic_rows() -> list[dict[str, Any]]:
    registry = require_checkers()
    random.seed(37)
    rows = []
    built = []
    for iid, cls in sorted(registry.items()):
        checker = cls(iid)
        text = (checker.build_description(prompt_to_repeat="Write about cats.") if iid == "combination:repeat_prompt"
                else checker.build_description())
        built.append((iid, dict(checker.get_instruction_args() or {}), text))
    names = sorted({k for _, kw, _ in built for k in kw})
    for key, (iid, kw, text) in enumerate(built):
        rows.append({"key": key, "prompt": f"Write about cats. {text}", "instruction_id_list": [iid],
                     "kwargs": [{n: kw.get(n) for n in names}]})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=Path)
    parser.add_argument("--replies", type=Path)
    parser.add_argument("--synthetic", action="store_true")
    args = parser.parse_args()
    from lm_eval.tasks.ifeval import utils as lm

    if args.synthetic:
        rows = synthetic_rows()
        pairs = [(r, reply) for r in rows for reply in REPLIES]
    elif args.rows and args.replies:
        rows = load_file(args.rows, ifeval.SOURCE).rows
        by_prompt = {r["prompt"]: r for r in rows}
        replies = [json.loads(x) for x in args.replies.read_text().splitlines() if x.strip()]
        pairs = [(by_prompt[x["prompt"]], x["response"]) for x in replies if x["prompt"] in by_prompt]
        print(f"{len(pairs)} of {len(replies)} replies matched a row", file=sys.stderr)
    else:
        parser.error("give --rows and --replies, or --synthetic")
    counts: Counter[str] = Counter()
    ours: dict[str, list[bool]] = {"ps": [], "pl": [], "is": [], "il": []}
    theirs: dict[str, list[bool]] = {"ps": [], "pl": [], "is": [], "il": []}
    for row, reply in pairs:
        item = item_of(row)
        verdict = grade(item, reply)
        checks = verdict.details.get("instructions")
        inp = lm.InputExample(key=row["key"], instruction_id_list=list(row["instruction_id_list"]),
                              prompt=row["prompt"], kwargs=list(row["kwargs"]))
        strict, loose = lm.test_instruction_following_strict(inp, reply), lm.test_instruction_following_loose(inp, reply)
        for c, s, lo in zip(checks, strict.follow_instruction_list, loose.follow_instruction_list, strict=True):
            counts[f"{c.id}: {'same' if (c.strict, c.loose) == (s, lo) else 'DIFFERS'}"] += 1
        ours["ps"].append(all(c.strict for c in checks))
        ours["pl"].append(all(c.loose for c in checks))
        ours["is"] += [c.strict for c in checks]
        ours["il"] += [c.loose for c in checks]
        theirs["ps"].append(strict.follow_all_instructions)
        theirs["pl"].append(loose.follow_all_instructions)
        theirs["is"] += strict.follow_instruction_list
        theirs["il"] += loose.follow_instruction_list
    names = {"ps": "prompt_level_strict_acc", "pl": "prompt_level_loose_acc", "is": "inst_level_strict_acc",
             "il": "inst_level_loose_acc"}
    metrics = {names[k]: {"proctor": sum(ours[k]) / len(ours[k]), "lm_eval": sum(theirs[k]) / len(theirs[k])}
               for k in names}
    for k in (k for k in counts if k.endswith("DIFFERS")):
        print(k, file=sys.stderr)
    print(json.dumps({"replies": len(pairs), "instructions": sum(counts.values()),
                      "differs": sum(n for k, n in counts.items() if k.endswith("DIFFERS")),
                      "instruction_ids": len({k.split(': ')[0] for k in counts}), "metrics": metrics}, indent=1))
    return 0 if all("DIFFERS" not in k for k in counts) else 1


def item_of(row: dict[str, Any]) -> Any:
    from proctor.benchmarks.hub import Rows

    return ifeval.to_items(Rows([row], {}, "<rows>"))[0]


if __name__ == "__main__":
    sys.exit(main())
