"""A benchmark's second ask: when its authors' runner finds no answer in a reply, it asks the model once more.

MathArena's runner (eth-sri/matharena@e9276603 `src/matharena/runner.py`): for a final-answer competition, when
`extract_answer(last_content, strict_parsing=True)` finds no boxed answer in the reply's final message, it asks
once more (`_build_last_chance_prompt`, `PureModelSolver.last_chance`): the conversation so far (the reasoning
left out), then one user message, with the same settings; the second reply is the one graded. proctor does the
same (`run.chunk` sends it; the scorer says whether it is needed and grades the last reply) and records the second
request and reply in the sample (`details.second_ask`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .budget import GaveUp, within_budget
from .math_graders import MATHARENA_COMMIT, matharena_parser

# MathArena's `_build_last_chance_prompt(options=None)`: its triple-quoted text, each line's spaces stripped
MATHARENA_LAST_CHANCE = (
    "\nYour last message does not provide a final answer in a way that follows the formatting instructions.\n"
    "Please based on the conversation history, report the final answer again within \\boxed{}.\n"
    "If you did not find the answer, please use \\boxed{None}.\n"
    "Do not reason about the problem again or use tools, simply try to extract the final answer from the previous "
    "reasoning.\n"
    "Boxed answers in thinking/reasoning stages will be ignored; only the final response message is considered.\n"
)


@dataclass(frozen=True)
class SecondAsk:
    """What the authors' runner asks when a reply gives no answer, and when it asks."""

    name: str
    message: str  # the user message appended after the reply
    needed: Callable[[str], bool]  # the reply's final message (as returned) has no answer by the runner's rule
    source: str


def matharena_no_answer(content: str) -> bool:
    """MathArena's runner check: its strict parser finds no boxed answer in the reply's final message. The
    parser runs under the graders' budget (`scoring.budget`, in the grader process): one that raises or gives up
    on a reply (`9^{9^{9}}`, a power tower) has read no answer."""
    try:
        return within_budget("matharena last-chance check", _no_strict_answer, content, text=content, isolate=True)
    except GaveUp:
        return True


def _no_strict_answer(content: str) -> bool:
    answer, _warning = matharena_parser().extract_answer(content, True)
    return answer is None


MATHARENA_SECOND_ASK = SecondAsk(
    "matharena-last-chance", MATHARENA_LAST_CHANCE, matharena_no_answer,
    f"eth-sri/matharena@{MATHARENA_COMMIT[:12]} src/matharena/runner.py _build_last_chance_prompt, "
    "solvers/pure_model_solver.py last_chance")
