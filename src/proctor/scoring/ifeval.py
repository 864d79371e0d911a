"""IFEval's grader: lm-evaluation-harness's own instruction checkers, called, never copied.

The reference is lm-eval's `ifeval` task (lm_eval/tasks/ifeval/utils.py `process_results`: each instruction
built from the row's kwargs, `if v` filtered, checked strictly on the reply and loosely on eight variants of it
— first/last line dropped, `*` removed). proctor calls that very function on each reply (the `ifeval` extra
installs lm_eval, langdetect and immutabledict), so its verdicts are lm-eval's by construction; proctor adds
only the four means (`proctor.metrics.ifeval`) and a fixed seed for langdetect (lm-eval leaves it unseeded, so its
language checks can give a short reply a different verdict on each run). The checkers need nltk's `punkt_tab` data; lm-eval downloads it
at import, proctor refuses to start without it instead (one line saying how to install it).

A checker built without a value it needs draws one from Python's unseeded `random` (Google's code and lm-eval's): a
letter-frequency row asking for `#` checks a random letter, a new one on every run. proctor seeds the draw per
instruction (`draw_seed`: sha256 of the row's key, the instruction id and its kwargs), before each checker is built,
so a reply's verdict is the same on every run (strict and loose draw alike). Where lm-eval would draw a letter
for a non-letter asked for, proctor's own reading (`COUNTED_READING`) counts that character and is kept beside
(`InstructionCheck.counted_strict`/`counted_loose`); the verdict stays lm-eval's (seeded).
"""

from __future__ import annotations

import hashlib
import json
import random
import string
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
DRAW_SEED = "proctor-ifeval-draw-1"  # the seed's prefix: a new one would change the drawn values
COUNTED_READING = "proctor-letter-count"  # proctor's reading of a letter-frequency check asking for a non-letter
LETTER_FREQUENCY = "keywords:letter_frequency"
_PATCH = threading.Lock()  # lm-eval's module-level `random` and registry are swapped for one reply at a time


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


def draw_seed(key: Any, instruction_id: str, kwargs: dict[str, Any]) -> int:
    """The seed of one instruction's draws: sha256 of (DRAW_SEED, the row's key, the id, its kwargs)."""
    text = json.dumps([DRAW_SEED, key, instruction_id, kwargs], sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _seeded_class(cls: Any, rng: random.Random, key: Any) -> type:
    """`cls` reseeding `rng` (lm-eval's `random` while a reply is checked) before each description is built."""

    def build_description(self: Any, **kwargs: Any) -> Any:
        rng.seed(draw_seed(key, self.id, kwargs))
        return cls.build_description(self, **kwargs)

    return type(cls.__name__, (cls,), {"build_description": build_description})


def _counting_class(cls: Any) -> type:
    """lm-eval's letter-frequency checker counting the character asked for where it would draw a letter."""

    def build_description(self: Any, **kwargs: Any) -> Any:
        letter = kwargs.get("letter")
        asked = counted_differs(kwargs, self.id)
        out = cls.build_description(self, **(kwargs | {"letter": "a"} if asked else kwargs))
        if asked:
            self._letter = str(letter).lower()
        return out

    return type(cls.__name__, (cls,), {"build_description": build_description})


def counted_differs(kwargs: dict[str, Any], instruction_id: str) -> bool:
    """proctor's counting reading differs from lm-eval's: a letter-frequency check asking for one non-letter."""
    letter = kwargs.get("letter")
    return (instruction_id == LETTER_FREQUENCY and isinstance(letter, str) and len(letter) == 1
            and letter.lower() not in string.ascii_lowercase)


@contextmanager
def _seeded(item: Item, counting: bool = False) -> Iterator[None]:
    """lm-eval's checkers with their draws seeded per instruction (and, `counting`, proctor's letter count)."""
    from lm_eval.tasks.ifeval import instructions, instructions_registry, instructions_util

    registry = instructions_registry.INSTRUCTION_DICT
    rng = random.Random()
    with _PATCH:
        saved, saved_random, saved_util = dict(registry), instructions.random, instructions_util.random
        try:
            instructions.random = instructions_util.random = rng
            for ident in set(item.metadata["instruction_id_list"]):
                base = _counting_class(saved[ident]) if counting and ident == LETTER_FREQUENCY else saved[ident]
                registry[ident] = _seeded_class(base, rng, item.metadata["key"])
            yield
        finally:
            registry.clear()
            registry.update(saved)
            instructions.random, instructions_util.random = saved_random, saved_util


def check_reply(item: Item, text: str, counting: bool = False) -> dict[str, Any]:
    """lm-eval's `process_results` on one reply, its draws seeded per instruction: prompt-level (bool) and
    instruction-level (list) strict/loose; `counting`: proctor's reading of letter-frequency checks."""
    require_checkers()
    from lm_eval.tasks.ifeval.utils import process_results

    with _seeded(item, counting):
        result: dict[str, Any] = process_results(doc_of(item), [text])
    return result


def grade(item: Item, text: str) -> Scored:
    """The verdict on one reply: correct when every instruction is followed strictly (prompt_level_strict_acc);
    each instruction's strict and loose verdicts kept in the details for the other three metrics."""
    r = check_reply(item, text)
    ids, kwargs = item.metadata["instruction_id_list"], item.metadata["kwargs"]
    checks = [InstructionCheck(id=i, strict=bool(s), loose=bool(loose))
              for i, s, loose in zip(ids, r["inst_level_strict_acc"], r["inst_level_loose_acc"], strict=True)]
    if any(counted_differs(k, i) for i, k in zip(ids, kwargs, strict=True)):
        c = check_reply(item, text, counting=True)
        checks = [check.model_copy(update={"counted_strict": bool(cs), "counted_loose": bool(cl)})
                  if counted_differs(k, check.id) else check
                  for check, k, cs, cl in zip(checks, kwargs, c["inst_level_strict_acc"], c["inst_level_loose_acc"],
                                              strict=True)]
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


IFEVAL_RULE = AnswerRule(RULE_NAME, "grader", SOURCE, read=no_answer_read, score_whole=grade, grades_truncated=True,
                         gave_up=gave_up)
POLICY = f"draws seeded per instruction ({DRAW_SEED}); a truncated reply graded on its text"  # in the prompt hash
