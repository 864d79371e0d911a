"""Humanity's Last Exam's judge: the authors' judge prompt and structured verdict, as `BenchmarkJudge`.

The reference is centerforaisafety/hle at 67b325111a0c3678eeb563eb30f98344f06846ad (2025-06-06):
`hle_eval/run_judge_results.py` `JUDGE_PROMPT` (below, byte for byte; sha256 `JUDGE_PROMPT_SHA256`) filled with
the question, the reply and the correct answer, sent as the one user message; the authors read the verdict with
OpenAI's structured outputs (`client.beta.chat.completions.parse`, `response_format=ExtractedAnswer`:
extracted_final_answer, reasoning, correct "yes"/"no", confidence an int). An endpoint without structured
outputs answers in prose, so proctor reads the same four fields from the reply (`parse`): a JSON object holding
them (bare, or in a ```json fence), else the `field: value` lines the prompt asks for. A reply without a
`correct` of yes/no or a confidence of 0-100 is a judge error, never a wrong answer. The sample is correct when
`correct` is "yes" (the authors: `"yes" in judge_response["correct"]`); the confidence (the reply's own, as the
judge read it) is kept as `p_correct` = confidence / 100 for the authors' calibration error
(`proctor.metrics.hle`).

The model is asked as `run_model_predictions.py` asks it: `SYSTEM_PROMPT` as the system message, the question as
the user message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.model import GenerationSpec
from ..data.records import Item
from ..log.runlog import Outcome
from .judge import BenchmarkJudge, JudgeReading

COMMIT = "67b325111a0c3678eeb563eb30f98344f06846ad"
SOURCE = f"centerforaisafety/hle hle_eval/run_judge_results.py@{COMMIT} JUDGE_PROMPT, ExtractedAnswer"
PROMPT_SOURCE = f"centerforaisafety/hle hle_eval/run_model_predictions.py@{COMMIT} SYSTEM_PROMPT"
JUDGE_NAME = "hle-judge"
JUDGE_PROMPT_SHA256 = "0f0023ee579b8c134f1834ed8952778b9e01460e31d47c242ee3629da9d44835"
SYSTEM_PROMPT_SHA256 = "40f399fe8c277e2cb98ad8ca663461141d1abbf01a18da3c4129eccc706b4326"
FIELDS = ("extracted_final_answer", "reasoning", "correct", "confidence")

SYSTEM_PROMPT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your answer choice}\n"
    "Answer: {your chosen answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)

JUDGE_PROMPT = (
    "Judge whether the following [response] to [question] is correct or not based on the "
    "precise and unambiguous [correct_answer] below.\n"
    "\n"
    "[question]: {question}\n"
    "\n"
    "[response]: {response}\n"
    "\n"
    "Your judgement must be in the format and criteria specified below:\n"
    "\n"
    "extracted_final_answer: The final exact answer extracted from the [response]. Put the "
    "extracted answer as 'None' if there is no exact, final answer to extract from the "
    "response.\n"
    "\n"
    "[correct_answer]: {correct_answer}\n"
    "\n"
    "reasoning: Explain why the extracted_final_answer is correct or incorrect based on "
    "[correct_answer], focusing only on if there are meaningful differences between "
    "[correct_answer] and the extracted_final_answer. Do not comment on any background to "
    "the problem, do not attempt to solve the problem, do not argue for any answer different "
    "than [correct_answer], focus only on whether the answers match.\n"
    "\n"
    "correct: Answer 'yes' if extracted_final_answer matches the [correct_answer] given "
    "above, or is within a small margin of error for numerical problems. Answer 'no' "
    "otherwise, i.e. if there if there is any inconsistency, ambiguity, non-equivalency, or "
    "if the extracted answer is incorrect.\n"
    "\n"
    "\n"
    "confidence: The extracted confidence score between 0|\\%| and 100|\\%| from [response]. "
    "Put 100 if there is no confidence score available."
)

_LABEL = re.compile(r"^[ \t>*_#`-]*(" + "|".join(FIELDS) + r")[ \t*_`]*:[ \t*_`]*", re.MULTILINE | re.IGNORECASE)
_CONFIDENCE = re.compile(r"^\s*(\d{1,3})(?:\.0+)?\s*(?:%|\\%|\|\\%\|)?\s*$")


def prompt(item: Item, answer: str) -> str:
    """The judge prompt for one reply, filled as the authors fill it."""
    question = item.metadata.get("question_raw")
    correct = item.metadata.get("answer_raw")
    return JUDGE_PROMPT.format(question=question if isinstance(question, str) else item.prompt, response=answer,
                               correct_answer=correct if isinstance(correct, str) else item.best_answer)


def parse(judge_reply: str) -> JudgeReading | None:
    """The authors' four fields read from the judge's reply (JSON, else labelled lines); None when `correct` is not
    yes/no or the confidence is not a whole number 0-100."""
    found, json_end = _json_fields(judge_reply)
    lines = _line_fields(judge_reply)
    # the judge's verdict is its last word: labelled lines after a JSON object (a quote of the reply) are read
    fields = found if found and _last_label(judge_reply, "correct") < json_end else lines or found
    correct = str(fields.get("correct", "")).strip().strip("*_`'\".").lower()
    confidence = _confidence(fields.get("confidence"))
    if correct not in ("yes", "no") or confidence is None:
        return None
    answer = fields.get("extracted_final_answer")
    reasoning = fields.get("reasoning")
    return JudgeReading(Outcome.CORRECT if correct == "yes" else Outcome.WRONG, 1.0 if correct == "yes" else 0.0,
                        correct, reasoning=str(reasoning).strip() if reasoning is not None else None,
                        answer=str(answer).strip() if answer is not None else None, p_correct=confidence / 100)


def _json_fields(text: str) -> tuple[dict[str, Any], int]:
    """The fields of the JSON object the reply is (or holds in its last fence, or spans from its first `{` to its
    last), and where in `text` that object ends (0: none)."""
    fences = _fenced(text)  # the last fence: the judge's verdict comes after whatever it quotes
    candidates = [(text, len(text)), *fences[-1:], (text[text.find("{"): text.rfind("}") + 1], text.rfind("}") + 1)]
    for candidate, end in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict) and "correct" in value:
            return {k: value[k] for k in FIELDS if k in value}, end
    return {}, 0


def _fenced(text: str) -> list[tuple[str, int]]:
    """Each ```` ```json {…} ``` ```` fence's object and where its fence ends, in one pass (a regex spanning
    fences backtracks quadratically on a reply of unclosed ones)."""
    out: list[tuple[str, int]] = []
    parts = text.split("```")
    at = len(parts[0]) + 3
    for i in range(1, len(parts) - 1, 2):
        body = parts[i].removeprefix("json").strip()
        at += len(parts[i]) + 3
        if body.startswith("{") and body.endswith("}"):
            out.append((body, at))
        at += len(parts[i + 1]) + 3
    return out


def _last_label(text: str, field: str) -> int:
    """Where the last `field:` label starts (-1: nowhere)."""
    return max((m.start() for m in _LABEL.finditer(text) if m.group(1).lower() == field), default=-1)


def _line_fields(text: str) -> dict[str, Any]:
    """`field: value` sections as the prompt lays them out (a value runs to the next field's label); a field
    labelled twice is read from its last label (the judge's own, after any it quotes from the reply)."""
    marks = list(_LABEL.finditer(text))
    out: dict[str, Any] = {}
    for mark, following in zip(marks, [*marks[1:], None]):
        value = text[mark.end(): following.start() if following is not None else len(text)]
        out[mark.group(1).lower()] = value.strip()
    return out


def _confidence(value: Any) -> int | None:
    """A whole-number confidence 0-100 (the authors' `confidence: int`; `85%` read as 85)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        match = _CONFIDENCE.match(str(value)) if value is not None else None
        if match is None:
            return None
        number = int(match.group(1))
    return number if 0 <= number <= 100 else None


#: run_judge_results.py's `--max_completion_tokens` default, 4096; it sends no temperature (its judge, o3-mini, takes
#: none) where proctor sends its judge's greedy 0 (docs/benchmarks-data.md)
JUDGE_SETTINGS = GenerationSpec(temperature=0.0, max_tokens=4096)
JUDGE = BenchmarkJudge(JUDGE_NAME, SOURCE, JUDGE_PROMPT, prompt, parse, settings=JUDGE_SETTINGS)
