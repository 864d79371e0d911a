"""HMMT February 2025 and 2026 (MathArena/hmmt_feb_2025, MathArena/hmmt_feb_2026): answers are expressions.

MathArena's data and prompt (`proctor.benchmarks.matharena`; configs/competitions/hmmt/hmmt_feb_<year>.yaml
at eth-sri/matharena@e9276603). Answers (LaTeX: `\\frac{9\\sqrt{23}}{23}`, `2^{25} \\cdot 26!`, lists) are
graded by MathArena's own parser (`matharena` rule: `extract_answer`, `parse_answer`, `check_answers`), which
must be installed (`proctor.scoring.math_graders.MATHARENA_INSTALL`); a run refuses in one line without it.
"""

from __future__ import annotations

from functools import partial

from .builtin import Builtin
from .matharena import BOXED, MATHARENA, Competition, expression_answer, load

HMMT = {
    year: Competition(
        name=f"hmmt-feb-{year}", repo=f"MathArena/hmmt_feb_{year}", size=size,
        description=f"HMMT February {year} as published by MathArena: {size} problems, answers are expressions.",
        instruction=BOXED, config=f"configs/competitions/hmmt/hmmt_feb_{year}.yaml", answer=expression_answer,
    )
    for year, size in ((2025, 30), (2026, 33))
}


BENCHMARKS = tuple(
    Builtin(c.name, partial(load, c), c.source, c.size, f"HMMT February {year} (MathArena), expression answers",
            max_tokens=32_768, answer_rules={MATHARENA: "matharena"})
    for year, c in HMMT.items()
)
