"""proctor's `math-verify` rule (MATH-500's grader) against math-verify itself, reply by reply.

The reference: math-verify (PyPI, the installed version) called directly, as lighteval and open-r1 grade:
`verify(parse(gold), parse(reply))`, the gold written `\\boxed{gold}`. proctor: the whole scoring path a run
takes (`proctor.scoring.scorers.score_item` on an open Item with the `math-verify` rule). The replies are
`bench/math_replies.py`'s (invented golds, each in equivalent and wrong spellings, wrapped as replies end).

    PYTHONPATH=src python bench/compare_math_verify.py

Nothing here is run by the tests.
"""

from __future__ import annotations

import argparse
from importlib import metadata

import math_verify
from math_replies import replies

from proctor.data.formats.convert import question_to_item
from proctor.data.records import Question
from proctor.log.runlog import Outcome
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.scorers import score_item


def proctor_correct(gold: str, reply: str) -> bool:
    item = question_to_item(Question(id=0, original_id="0", question="q", choices={}, answer=gold), "bench")
    return score_item(item, reply, ANSWER_RULES["math-verify"]).outcome is Outcome.CORRECT


def reference_correct(gold: str, reply: str) -> bool:
    return bool(math_verify.verify(math_verify.parse(f"\\boxed{{{gold}}}"), math_verify.parse(reply)))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0]).parse_args(argv)
    n = same = ref_ok = mine_ok = meant_ok = 0
    differ: list[str] = []
    for label, gold, reply, meant in replies():
        ref, mine = reference_correct(gold, reply), proctor_correct(gold, reply)
        n += 1
        same += ref == mine
        ref_ok += ref
        mine_ok += mine
        meant_ok += ref == meant
        if ref != mine:
            differ.append(f"{gold!r} {label!r}: math-verify {ref}, proctor {mine}")
    print(f"math-verify {metadata.version('math-verify')} vs proctor's math-verify rule")
    print("| replies | same verdict | math-verify correct | proctor correct | math-verify = the spelling's intent |")
    print("|---|---|---|---|---|")
    print(f"| {n} | {same}/{n} | {ref_ok} | {mine_ok} | {meant_ok}/{n} |")
    for line in differ:
        print("differs:", line)
    return 0 if same == n else 1


if __name__ == "__main__":
    raise SystemExit(main())
