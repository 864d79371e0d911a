"""Replies to invented math problems, in the forms models write them, for comparing answer graders.

Each gold answer (LaTeX, invented: no benchmark content) comes with equivalent spellings and wrong ones; each
spelling is wrapped in the ways replies end (boxed, `$…$`, an `ANSWER:` line, "the final answer is", nested
boxes, Unicode, units and text, several boxes, none). Deterministic: the same list every run.
"""

from __future__ import annotations

from collections.abc import Iterator

# gold → (equivalent spellings, wrong spellings)
GOLDS: dict[str, tuple[list[str], list[str]]] = {
    "7": (["7", "07", "7.0", "+7", "\\text{7}"], ["8", "-7", "70"]),
    "250": (["250", "250.00", "2.5\\times 10^2", "250^\\circ"], ["205", "25"]),
    "\\frac{3}{4}": (["\\frac34", "0.75", "3/4", "\\dfrac{3}{4}", "\\tfrac{6}{8}"], ["\\frac{4}{3}", "0.7"]),
    "\\sqrt{2}": (["2^{1/2}", "\\sqrt 2", "\\frac{2}{\\sqrt{2}}", "1.41421356237"], ["2", "\\sqrt{3}"]),
    "\\frac{9\\sqrt{23}}{23}": (["\\frac{9}{\\sqrt{23}}", "9\\sqrt{23}/23"], ["\\frac{9\\sqrt{23}}{24}"]),
    "2^{25} \\cdot 26!": (["26! \\cdot 2^{25}", "2^{25}\\times 26!"], ["2^{24} \\cdot 26!"]),
    "1-\\frac{2}{\\pi}": (["1 - 2/\\pi", "\\frac{\\pi-2}{\\pi}"], ["1+\\frac{2}{\\pi}", "\\frac{2}{\\pi}"]),
    "\\sqrt{6}-\\sqrt{2}": (["-\\sqrt{2}+\\sqrt{6}", "\\sqrt{2}(\\sqrt{3}-1)"], ["\\sqrt{4}"]),
    "-1, 2": (["2, -1", "-1 \\text{ and } 2", "\\{-1, 2\\}"], ["-1", "1, 2"]),
    "(-1,3)": (["(-1, 3)", "-1<x<3"], ["[-1,3]", "(-3,1)"]),
    "\\left( 3, \\frac{\\pi}{2} \\right)": (["(3, \\pi/2)", "\\left(3,\\tfrac{\\pi}{2}\\right)"], ["(3, \\pi)"]),
    "\\$18.90": (["18.90", "\\$18.9", "18.9"], ["18.09"]),
    "\\pi": (["\\pi", "3.14159265358979"], ["3.14", "2\\pi"]),
    "10\\sqrt{3}": (["\\sqrt{300}", "10 \\sqrt 3", "17.3205080756888"], ["10\\sqrt{2}"]),
    "\\frac{1}{2}": (["0.5", ".5", "1/2", "50\\%"], ["2"]),
    "x^2+2x+1": (["(x+1)^2", "1+2x+x^2"], ["x^2+1"]),
    "\\text{(C)}": (["C", "\\text{C}", "(C)"], ["(D)"]),
    "3\\sqrt{3}": (["\\sqrt{27}", "3 \\sqrt{3}"], ["9"]),
    "5040": (["5,040", "5{,}040", "7!"], ["5041"]),
    "\\frac{\\sqrt{5}-1}{2}": (["\\frac{-1+\\sqrt5}{2}", "0.618033988749895"], ["\\frac{\\sqrt{5}+1}{2}"]),
}

WRAPS: tuple[tuple[str, str], ...] = (
    ("boxed", "Working it out step by step, we get the result.\n\n\\boxed{{{a}}}"),
    ("boxed_inline", "Therefore, the final answer is: $\\boxed{{{a}}}$. I hope it is correct"),
    ("answer_line", "Some reasoning here.\nANSWER: {a}"),
    ("final_is", "So the final answer is ${a}$."),
    ("nested_box", "Thus $\\boxed{{\\boxed{{{a}}}}}$"),
    ("bold_box", "**Answer:** $\\boxed{{{a}}}$"),
    ("two_boxes", "First I thought $\\boxed{{0}}$, but correcting: $\\boxed{{{a}}}$"),
    ("text_after", "$$\\boxed{{{a}}}$$\nThis completes the solution."),
    ("display", "The answer is\n\\[\n{a}\n\\]"),
    ("unicode", "Result: \\boxed{{{a}}} ✓ — done"),
)
NO_ANSWER = ("I could not solve this problem.", "", "The answer depends on the interpretation.")


def replies() -> Iterator[tuple[str, str, str, bool]]:
    """(case label, gold, reply, whether the spelling is meant to be equivalent)."""
    for g, (good, bad) in GOLDS.items():
        for meant, spellings in ((True, good), (False, bad)):
            for s in spellings:
                for label, wrap in WRAPS:
                    yield f"{label}:{s}", g, wrap.format(a=s), meant
        for text in NO_ANSWER:
            yield "none", g, text, False
