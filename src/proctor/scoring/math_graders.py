"""Reference graders that read a whole reply themselves: math-verify and MathArena's parser.

Both are their authors' code, imported lazily, never copied here:

* **math-verify** (PyPI `math-verify`, the grader of lighteval and open-r1): `parse(reply)` with its default
  extraction (LaTeX, then plain expressions), `parse` of the gold written as `\\boxed{answer}`, then
  `verify(gold, parsed)` with its defaults. Its timeouts use `signal.alarm`, which works only in the main
  thread: elsewhere they are off (the verdicts are the same; only a pathological reply could run long).
* **MathArena** (GitHub eth-sri/matharena `src/matharena/parser.py`, not on PyPI): its grader's path for a
  final-answer competition with `strict_parsing: false` (`grader.py` `extract_and_grade`): `extract_answer`
  on the reply, `parse_answer` on the gold (a list answer when the gold holds a comma), `check_answers`.
  proctor imports `matharena.parser` from an installed `matharena` package (`MATHARENA_INSTALL`).

`extracted` gives the answer a grader read (for the record); `correct` its verdict against one gold answer.
"""

from __future__ import annotations

import importlib
import threading
from functools import lru_cache
from types import ModuleType
from typing import Any

from ..util.errors import ProctorError

MATH_VERIFY_VERSION = "0.9.0"
MATHARENA_COMMIT = "e92766038a80eee227589f5ea688004240bca8e0"
MATHARENA_INSTALL = (f"pip install --no-deps 'matharena @ git+https://github.com/eth-sri/matharena@{MATHARENA_COMMIT}'"
                     " && pip install 'proctor-eval[matharena]'")


# --------------------------------------------------------------------------- math-verify


def _math_verify() -> ModuleType:
    try:
        return importlib.import_module("math_verify")
    except ImportError:
        raise ProctorError("the math-verify rule needs math-verify: pip install 'proctor-eval[math]'") from None


def require_math_verify() -> None:
    """Fail before a run when math-verify cannot be imported."""
    _math_verify()


def _timeout() -> int | None:
    """math-verify's default 5 s timeouts in the main thread; none elsewhere (signal.alarm would raise)."""
    return 5 if threading.current_thread() is threading.main_thread() else None


@lru_cache(maxsize=1024)
def _parsed(text: str) -> tuple[Any, ...]:
    return tuple(_math_verify().parse(text, parsing_timeout=_timeout()))


def math_verify_gold(answer: str) -> str:
    """The gold answer as math-verify parses it: boxed, so LaTeX without `$` delimiters is read."""
    return f"\\boxed{{{answer}}}"


def math_verify_extracted(reply: str) -> str | None:
    """What math-verify's `parse` reads from the reply (its matched text), or None when it reads nothing."""
    parsed = _parsed(reply)
    return str(parsed[-1]) if parsed else None


def math_verify_correct(reply: str, gold: str) -> bool:
    """math-verify's verdict: `verify(parse(gold), parse(reply))`."""
    mv = _math_verify()
    return bool(mv.verify(list(_parsed(math_verify_gold(gold))), list(_parsed(reply)), timeout_seconds=_timeout()))


# --------------------------------------------------------------------------- MathArena


def matharena_parser() -> ModuleType:
    """MathArena's own `matharena.parser`, or one line saying how to install it."""
    try:
        parser = importlib.import_module("matharena.parser")
    except ImportError as e:
        raise ProctorError(f"the matharena rule runs MathArena's own parser, which is not installed ({e}); "
                           f"install it: {MATHARENA_INSTALL}") from None
    parser.logger.disable("matharena")  # its loguru warnings ("Could not parse …") would flood a run's console
    return parser


def is_list_answer(gold: str) -> bool:
    """MathArena's grader reads a gold holding a comma as a list answer."""
    return "," in gold


@lru_cache(maxsize=1024)
def _matharena_read(reply: str, list_answer: bool) -> Any:
    parser = matharena_parser()
    try:
        answer, _warning = parser.extract_answer(reply, strict_parsing=False, parse=True, list_answer=list_answer)
    except Exception:  # noqa: BLE001 - its parser raises on pathological nesting; that reply has no answer
        return None
    return answer


def matharena_extracted(reply: str) -> str | None:
    """What MathArena's `extract_answer` reads (as a single answer), as text, or None."""
    answer = _matharena_read(reply, False)
    return None if answer is None else str(answer)


def matharena_correct(reply: str, gold: str) -> bool:
    """MathArena's verdict on one reply against one gold answer (`extract_and_grade`, non-strict)."""
    parser = matharena_parser()
    listed = is_list_answer(gold)
    try:
        typed_gold, _warning = parser.parse_answer(gold, list_answer=listed)
    except Exception:  # noqa: BLE001 - a gold its parser cannot read credits no reply
        return False
    return bool(parser.check_answers(_matharena_read(reply, listed), typed_gold))


def require_matharena() -> None:
    """Fail before a run when MathArena's parser cannot be imported."""
    matharena_parser()
