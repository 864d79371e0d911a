r"""AIME 2026 (MathArena/aime_2026): the 30 problems of AIME I and II 2026, integer answers 0-999.

MathArena's data and prompt (`proctor.benchmarks.matharena`; configs/competitions/aime/aime_2026.yaml at
eth-sri/matharena@e9276603), graded by MathArena's own parser (`matharena` rule, installed separately; a run
refuses in one line without it). `--answer-rule matharena-aime` reads with llm-wc's adaptation instead
(proctor's code, no install): it differs from MathArena's on boxed `+7`, `7.0`, `250^\circ`
(bench/compare_matharena.py).
"""

from __future__ import annotations

from functools import partial

from .builtin import Builtin
from .matharena import BOXED, INTEGER_RULE, MATHARENA, Competition, integer_answer, load

AIME_2026 = Competition(
    name="aime-2026", repo="MathArena/aime_2026", size=30,
    description="AIME 2026 (I and II) as published by MathArena: 30 problems with integer answers 0-999.",
    instruction=BOXED + "\n" + INTEGER_RULE, config="configs/competitions/aime/aime_2026.yaml",
    answer=integer_answer,
)

# 32,768 output tokens, as for AIME 2025 (reasoning-model reports)
BENCHMARKS = (Builtin(AIME_2026.name, partial(load, AIME_2026), AIME_2026.source, AIME_2026.size,
                      "AIME I+II 2026 (MathArena), integer answers 0-999", max_tokens=32_768,
                      answer_rules={MATHARENA: "matharena"}),)
