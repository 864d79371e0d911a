"""IFEval's grader: lm-evaluation-harness's own instruction checkers, called, never copied.

The reference is lm-eval's `ifeval` task (lm_eval/tasks/ifeval/utils.py `process_results`: each instruction
built from the row's kwargs, `if v` filtered, checked strictly on the reply and loosely on eight variants of it
— first/last line dropped, `*` removed). proctor calls that very function on each reply (the `ifeval` extra
installs lm_eval, langdetect and immutabledict), so its verdicts are lm-eval's by construction; proctor adds
only the four means (`proctor.metrics.ifeval`) and a fixed seed for langdetect (lm-eval leaves it unseeded, so its
language checks can give a short reply a different verdict on each run). The checkers need nltk's `punkt_tab` data; lm-eval downloads it
at import, proctor refuses to start without it instead (one line saying how to install it).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ..data.records import Item
from ..log.runlog import GenerationDetails, InstructionCheck, Outcome
from ..util.errors import ProctorError
from .base import Scored
from .budget import GAVE_UP
from .extract import NONE, AnswerRule, Extraction

RULE_NAME = "lm-eval-ifeval"
SOURCE = "EleutherAI/lm-evaluation-harness 0.4.x lm_eval/tasks/ifeval/utils.py process_results (strict and loose)"
INSTALL = "pip install 'proctor[ifeval]'"
LANGDETECT_SEED = 0


def require_checkers() -> dict[str, Any]:
    """lm-eval's instruction registry (id → checker class); a ProctorError naming the fix when lm_eval or
    nltk's punkt_tab is missing (checked before lm-eval is imported: its import would try to download)."""
    try:
        import nltk
    except ImportError:
        raise ProctorError(f"IFEval is scored by lm-eval's instruction checkers: {INSTALL}") from None
    try:
        nltk.data.find("tokenizers/punkt_tab")
    except LookupError:
        raise ProctorError("IFEval's checkers need nltk's punkt_tab data: python -m nltk.downloader punkt_tab "
                           "(or set NLTK_DATA to a folder holding tokenizers/punkt_tab)") from None
    return _registry()


@cache
def _registry() -> dict[str, Any]:
    try:
        import langdetect
        from lm_eval.tasks.ifeval import instructions_registry
    except ImportError as e:
        raise ProctorError(f"IFEval is scored by lm-eval's instruction checkers ({e}): {INSTALL}") from None
    # langdetect draws at random (its DetectorFactory is unseeded): lm-eval's verdict of a language check on a
    # short reply can flip from run to run. proctor fixes its seed, so a reply's verdict is reproducible.
    langdetect.DetectorFactory.seed = LANGDETECT_SEED
    return dict(instructions_registry.INSTRUCTION_DICT)


def unknown_instructions(ids: Sequence[str]) -> list[str]:
    """The ids lm-eval has no checker for."""
    registry = require_checkers()
    return [i for i in ids if i not in registry]


def kwargs_problem(registry: dict[str, Any], ids: Sequence[str], kwargs: Sequence[dict[str, Any]],
                   prompt: str) -> str | None:
    """Why lm-eval's checkers cannot take a row's kwargs (`keywords: 5`, `num_words: "x"`), or None: each checker is
    built as `test_instruction_following_strict` builds it and tried on a probe reply, so a bad value is the row's
    problem at load time, never a crash while scoring."""
    for i, (ident, given) in enumerate(zip(ids, kwargs, strict=True)):
        try:
            checker = registry[ident](ident)
            checker.build_description(**{k: v for k, v in given.items() if v})
            args = checker.get_instruction_args()
            if args and "prompt" in args:
                checker.build_description(prompt=prompt)
            checker.check_following("A probe reply.\n\nIt has two paragraphs.")
        except Exception as e:  # noqa: BLE001 - lm-eval's checkers raise anything on values of the wrong type
            return f"kwargs[{i}] ({ident}): lm-eval's checker cannot take {given!r:.80}: {type(e).__name__}: {e}"
    return None


def doc_of(item: Item) -> dict[str, Any]:
    """The upstream row lm-eval's `process_results` reads, as the item keeps it."""
    meta = item.metadata
    return {"key": meta["key"], "instruction_id_list": list(meta["instruction_id_list"]),
            "prompt": meta["prompt"], "kwargs": [dict(k) for k in meta["kwargs"]]}


def check_reply(item: Item, text: str) -> dict[str, Any]:
    """lm-eval's `process_results` on one reply: prompt-level (bool) and instruction-level (list) strict/loose."""
    require_checkers()
    from lm_eval.tasks.ifeval.utils import process_results

    result: dict[str, Any] = process_results(doc_of(item), [text])
    return result


def grade(item: Item, text: str) -> Scored:
    """The verdict on one reply: correct when every instruction is followed strictly (prompt_level_strict_acc);
    each instruction's strict and loose verdicts kept in the details for the other three metrics."""
    r = check_reply(item, text)
    checks = [InstructionCheck(id=i, strict=bool(s), loose=bool(loose))
              for i, s, loose in zip(item.metadata["instruction_id_list"], r["inst_level_strict_acc"],
                                     r["inst_level_loose_acc"], strict=True)]
    followed = bool(r["prompt_level_strict_acc"])
    return Scored(Outcome.CORRECT if followed else Outcome.WRONG, GenerationDetails(instructions=checks),
                  score=1.0 if followed else 0.0, extracted=None, extraction_rule=RULE_NAME)


def gave_up(item: Item, why: str) -> Scored:
    """A reply lm-eval's checkers gave up on (`proctor.scoring.budget`): no instruction followed, strict or loose,
    so that the four IFEval means count it as the accuracy does; `why` kept in `details.rejected`."""
    checks = [InstructionCheck(id=i, strict=False, loose=False) for i in item.metadata["instruction_id_list"]]
    return Scored(Outcome.NO_ANSWER, GenerationDetails(instructions=checks, rejected=why), score=0.0,
                  extracted=None, extraction_rule=GAVE_UP)


def no_answer_read(text: str) -> Extraction:
    """A grader rule extracts no answer: it scores the whole reply (`grade`)."""
    return Extraction(None, NONE)


IFEVAL_RULE = AnswerRule(RULE_NAME, "grader", SOURCE, read=no_answer_read, score_whole=grade, gave_up=gave_up)
