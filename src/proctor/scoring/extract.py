"""Auditable answer extraction: every answer comes back with the name of the rule that found it.

Each `extract_*` function tries its rules in a fixed, documented order (docs/scoring-rules.md) and
returns the first rule's answer. Within one rule the **last** occurrence wins, because models
restate and correct themselves. A rule whose match is not a valid answer for the item (a letter
outside the choices) is *rejected*, recorded in `Extraction.rejected`, and the next rule is tried.
When nothing is found the answer is None and the rule is "none".

Rules run on a cleaned copy of the text: markdown emphasis (`**B**`, `*B*`, `_B_`), backticks,
math delimiters (`$C$`, `\\(…\\)`, `\\[…\\]`) and `\\text{…}`-style wrappers are removed first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any, Literal, NamedTuple

from .lmeval_rules import flexible_extract, same_exact_match, strict_match
from .math_graders import (
    MATH_VERIFY_VERSION,
    MATHARENA_COMMIT,
    math_verify_correct,
    math_verify_extracted,
    matharena_correct,
    matharena_extracted,
    require_math_verify,
    require_matharena,
)
from .second_ask import MATHARENA_SECOND_ASK, SecondAsk

# 2: built-in benchmarks score by their reference answer rule (ANSWER_RULES), proctor's reader beside it
EXTRACTOR_VERSION = "proctor-extract/2"
NONE = "none"


@dataclass(frozen=True)
class Extraction:
    """An extracted answer (None when no rule found one) and the rule that produced it."""

    answer: str | None
    rule: str
    rejected: str | None = None  # a candidate a stronger rule found but that was not a valid answer

    @property
    def found(self) -> bool:
        return self.answer is not None


# ---------------------------------------------------------------- reasoning apart from the answer

_THINK_TAG_RE = re.compile(r"<(/?)(think|thinking)>", re.IGNORECASE)
_HARMONY_FINAL = "<|channel|>final<|message|>"
_HARMONY_ANALYSIS = "<|channel|>analysis<|message|>"
_HARMONY_END_RE = re.compile(r"<\|(?:end|return|call)\|>")


class SplitReply(NamedTuple):
    """A reply split into its thought and its final answer; `unclosed` when the thought never ended."""

    reasoning: str | None
    answer: str
    unclosed: bool


def split_reasoning(text: str) -> SplitReply:
    """Separate `<think>…</think>` (or `<thinking>`) blocks from the final answer.

    A closing tag with no opening one (templates such as Qwen3's and DeepSeek-R1's open the block in the
    prompt) makes everything before it reasoning. An opening tag that is never closed (a reply cut off
    mid-thought) makes the rest reasoning, the answer empty and `unclosed` True: nothing may be
    extracted from an unfinished thought. gpt-oss harmony channels (analysis / final) are understood too.
    Text without any of these is all answer."""
    if _HARMONY_ANALYSIS in text or _HARMONY_FINAL in text:
        return _split_harmony(text)
    if "<" not in text or not _THINK_TAG_RE.search(text):
        return SplitReply(None, text, False)
    thoughts: list[str] = []
    answer: list[str] = []
    inside, pos = False, 0
    for m in _THINK_TAG_RE.finditer(text):
        closing = m.group(1) == "/"
        if closing:
            thoughts.append(text[pos:m.start()])  # a close without an open: the template opened it
            inside = False
        elif not inside:
            answer.append(text[pos:m.start()])
            inside = True
        else:
            thoughts.append(text[pos:m.start()])  # a nested or repeated open: still thinking
        pos = m.end()
    (thoughts if inside else answer).append(text[pos:])
    reasoning = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return SplitReply(reasoning or None, "".join(answer).strip(), inside)


def _split_harmony(text: str) -> SplitReply:
    """gpt-oss raw output: `<|channel|>analysis<|message|>…<|end|>…<|channel|>final<|message|>ANSWER`."""
    head, found, final = text.rpartition(_HARMONY_FINAL)
    if not found:
        thought = text.split(_HARMONY_ANALYSIS, 1)[-1]
        return SplitReply(_HARMONY_END_RE.split(thought)[0].strip() or None, "", True)
    analysis = [_HARMONY_END_RE.split(part)[0].strip() for part in head.split(_HARMONY_ANALYSIS)[1:]]
    answer = _HARMONY_END_RE.split(final)[0].strip()
    return SplitReply("\n\n".join(a for a in analysis if a) or None, answer, False)


# ---------------------------------------------------------------- cleaning

_WRAPPER_RE = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|operatorname|emph)\s*\{([^{}]*)\}")
_BRACE_OR_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|operatorname|emph)\s*\{|[{}]")
_ITALIC_US_RE = re.compile(r"(?<![\w_])_(?!_)([^_\n]+?)_(?![\w_])")


def clean(text: str) -> str:
    """Remove markdown emphasis, math delimiters and LaTeX text wrappers (keeps boxes)."""
    s = text if text.isascii() else unicodedata.normalize("NFKC", text)
    if "\\" in s:  # unwrap nested \text{\textbf{B}}
        s = _unwrap(s)
    for token in ("\\(", "\\)", "\\[", "\\]", "$", "**", "__", "`"):
        s = s.replace(token, "")
    if "_" in s:
        s = _ITALIC_US_RE.sub(r"\1", s)
    s = s.replace("*", "")
    return s


def _unwrap(text: str) -> str:
    """`_WRAPPER_RE` replaced by its content until none is left, in one pass: a wrapper whose braces close around
    no brace left goes, innermost first (a `sub` per level took a pass over the reply for each of 2,000 levels)."""
    out: list[str] = []
    stack: list[list[Any]] = []  # [its index in `out`, a wrapper?, nothing but unwrapped braces inside?]
    at = 0
    for m in _BRACE_OR_WRAPPER.finditer(text):
        out.append(text[at: m.start()])
        at, token = m.end(), m.group()
        if token == "}" and stack:
            index, wrapper, bare = stack.pop()
            if wrapper and bare:
                out[index] = ""
                continue
            if stack:
                stack[-1][2] = False
        elif token != "}":
            stack.append([len(out), token != "{", True])
        elif stack:
            stack[-1][2] = False
        out.append(token)
    out.append(text[at:])
    return "".join(out)


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{…}` or `\\fbox{…}`, with nested braces balanced (None if none)."""
    best: str | None = None
    closes = _closing_braces(text)
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        close = closes.get(m.end() - 1)
        if close is not None:
            best = text[m.end() : close]
    if best is None:  # `\boxed 5` (no braces) is also seen in the wild
        plain = re.findall(r"\\boxed\s+([^\s$\\{}]+)", text)
        best = plain[-1] if plain else None
    return best


def _closing_braces(text: str) -> dict[int, int]:
    """Each `{` that is closed, mapped to the index of its `}`: one pass (a scan from every opening brace of a reply
    of 100,000 unclosed `\\boxed{` would take hours)."""
    opened: list[int] = []
    closes: dict[int, int] = {}
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            opened.append(m.start())
        elif opened:
            closes[opened.pop()] = m.start()
    return closes


def _last_at(pattern: re.Pattern[str], text: str, keyword: str = "answer") -> re.Match[str] | None:
    """The match of `pattern` starting at the last occurrence of `keyword` (case-insensitive) where it
    matches. Much faster than scanning every position with an IGNORECASE regex on long reasoning."""
    lower = text.lower()
    if len(lower) != len(text):  # rare: lowercasing changed the length; scan normally
        return _last(pattern, text)
    pos = lower.rfind(keyword)
    while pos >= 0:
        m = pattern.match(text, pos)
        if m:
            return m
        pos = lower.rfind(keyword, 0, pos)
    return None


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    found = None
    for found in pattern.finditer(text):
        pass
    return found


# ---------------------------------------------------------------- choices

_LETTER = r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|([A-Z])(?![A-Za-z0-9'])(?!\s+(?:think|believe|guess|am|would|will)\b))"
_ANSWER_IS_RE = re.compile(
    r"answer\s*(?:is|would\s+be|will\s+be|should\s+be|must\s+be)\s*:?\s*(?:option|choice|letter)?\s*"
    + _LETTER,
    re.IGNORECASE,
)
_ANSWER_LABEL_RE = re.compile(r"answer\s*[:=]\s*(?:option|choice|letter)?\s*" + _LETTER, re.IGNORECASE)
_PAREN_END_RE = re.compile(r"\(\s*([A-Za-z])\s*\)[\s.!]*\Z")
_LONE_LINE_RE = re.compile(r"\A\(?\s*([A-Za-z])\s*[).:]?\s*\Z")


def _letter(m: re.Match[str]) -> str:
    """The letter from a match of _LETTER (parenthesised letters may be lowercase)."""
    return next(g for g in m.groups() if g).upper()


def _non_empty_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()]


def extract_choice(text: str, letters: str) -> Extraction:
    """A letter among `letters` (e.g. "ABCDEFGHIJ"). Rules, strongest first:

    boxed (`\\boxed{B}`), answer_is ("the correct answer is (J)"), answer_label ("Answer: B"),
    paren_end ("… (B)" at the very end), lone_letter (the last line is just a letter).
    """
    valid = set(letters.upper())
    rejected: str | None = None
    cleaned = clean(text)

    def accept(letter: str | None, rule: str) -> Extraction | None:
        nonlocal rejected
        if letter is None:
            return None
        if letter in valid:
            return Extraction(letter, rule, rejected)
        rejected = rejected or letter
        return None

    boxed = last_boxed(text)
    if boxed is not None:
        m = _LONE_LINE_RE.match(clean(boxed).strip())
        if (hit := accept(m.group(1).upper() if m else None, "boxed")) is not None:
            return hit
    for rule, pattern in (("answer_is", _ANSWER_IS_RE), ("answer_label", _ANSWER_LABEL_RE)):
        m = _last_at(pattern, cleaned)
        if m and (hit := accept(_letter(m), rule)) is not None:
            return hit
    m = _PAREN_END_RE.search(cleaned)
    if m and (hit := accept(m.group(1).upper(), "paren_end")) is not None:
        return hit
    lines = _non_empty_lines(cleaned)
    if lines:
        m = _LONE_LINE_RE.match(lines[-1])
        # a lowercase lone letter is accepted only when it is the whole response ("b")
        lone_ok = m is not None and (m.group(1).isupper() or len(lines) == 1)
        if m and lone_ok and (hit := accept(m.group(1).upper(), "lone_letter")) is not None:
            return hit
    return Extraction(None, NONE, rejected)


# ---------------------------------------------------------------- boolean / ternary

from ..data.records import DONT_KNOW, FALSE, TRUE

_BOOL_WORDS = {"true": TRUE, "yes": TRUE, "correct": TRUE, "false": FALSE, "no": FALSE, "incorrect": FALSE}
_UNKNOWN_PHRASES = (
    "i don't know",
    "i do not know",
    "i dont know",
    "don't know",
    "unknown",
    "not sure",
    "unsure",
    "uncertain",
    "cannot be determined",
    "can't be determined",
    "cannot determine",
    "cannot say",
    "can't tell",
    "idk",
)


def _closed_vocab(ternary: bool) -> dict[str, str]:
    vocab = {w: v for w, v in _BOOL_WORDS.items() if w not in ("correct", "incorrect")}
    if ternary:
        vocab.update({p: DONT_KNOW for p in _UNKNOWN_PHRASES})
    return vocab


def _closed_pattern(vocab: Iterable[str]) -> str:
    alts = sorted((re.escape(w).replace("'", "['’]") for w in vocab), key=len, reverse=True)
    return r"(?<![\w'])(" + "|".join(alts) + r")(?![\w'])"


def _closed_value(fragment: str, vocab: dict[str, str]) -> str | None:
    key = normalize_answer(fragment).replace("’", "'")
    return vocab.get(key)


_SHORT = 80  # longest text that can be a bare closed answer ("whole", "last_line")


def _extract_closed(text: str, ternary: bool) -> Extraction:
    vocab = _closed_vocab(ternary)
    word = _closed_pattern(vocab)
    lookup = {k.replace("’", "'"): v for k, v in vocab.items()}
    cleaned = clean(text)

    def value(s: str) -> str | None:
        return lookup.get(s.lower().replace("’", "'"))

    boxed = last_boxed(text)
    if boxed is not None and (v := _closed_value(clean(boxed), lookup)) is not None:
        return Extraction(v, "boxed")
    m = _last_at(re.compile(r"answer\s*(?:is|[:=])\s*:?\s*" + word, re.IGNORECASE), cleaned)
    if m and (v := value(m.group(1))) is not None:
        return Extraction(v, "answer_is")
    if len(cleaned) <= _SHORT and (v := _closed_value(cleaned, lookup)) is not None:
        return Extraction(v, "whole")
    lines = _non_empty_lines(cleaned)
    if not lines:
        return Extraction(None, NONE)
    if len(lines[-1]) <= _SHORT and (v := _closed_value(lines[-1], lookup)) is not None:
        return Extraction(v, "last_line")
    m = re.match(word + r"\s*[.,;:!\-—]", lines[0], re.IGNORECASE)
    if m and (v := value(m.group(1))) is not None:  # "True. Because …"
        return Extraction(v, "first_word")
    tail = lines[-1][-_SHORT:]
    m = re.search(word + r"[\s.!)\]\"']*\Z", tail, re.IGNORECASE)
    if m and (v := value(m.group(1))) is not None:  # "… so the statement is false."
        negated = re.search(r"\bnot\s*\Z", tail[: m.start()], re.IGNORECASE)
        if not negated:
            return Extraction(v, "last_word")
        return Extraction(None, NONE, rejected=f"not {m.group(1)}")
    return Extraction(None, NONE)


def extract_boolean(text: str) -> Extraction:
    """ "True" or "False" (true/false, yes/no; case and punctuation tolerant).

    Rules: boxed, answer_is, whole (the response is just the word), last_line, first_word
    ("True. Because…"), last_word ("…the claim is false." — skipped after "not").
    """
    return _extract_closed(text, ternary=False)


def extract_ternary(text: str) -> Extraction:
    """ "True", "False" or "I don't know" ("Unknown", "not sure", "cannot be determined"…); rules as boolean."""
    return _extract_closed(text, ternary=True)


# ---------------------------------------------------------------- numbers

_NUM = r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?(?![\w])"
_NUM_RE = re.compile(_NUM)
_ANSWER_NUM_RE = re.compile(r"answer\s*(?:is|[:=])\s*:?\s*(?:of\s+)?(" + _NUM + r")", re.IGNORECASE)
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*([-+]?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


def parse_number(text: str) -> Fraction | None:
    """An exact number from a short answer: "011" → 11, "1,000" → 1000, "11." → 11, "3/4", "\\frac{3}{4}".

    Returns None unless the whole (cleaned) string is one number.
    """
    s = clean(text).strip()
    s = _FRAC_RE.sub(r"\1/\2", s)
    s = re.sub(r"\^\s*\{?\\circ\}?|°|%", "", s)
    s = s.replace("−", "-").replace(" ", "").rstrip(".")
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", s):
        s = s.replace(",", "")
    if not re.fullmatch(r"[-+]?\d+(?:\.\d+)?(?:/\d+)?", s):
        return None
    try:
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        return None


def format_number(value: Fraction) -> str:
    """Canonical text of a number: integers without leading zeros, else a reduced fraction "p/q"."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def extract_number(text: str) -> Extraction:
    """A number, canonicalised (`\\boxed{011}` → "11"). Rules: boxed, answer_is ("The answer is 11"),
    last_number (the final number in the text; "711" never yields "11").

    A boxed value that is not a plain number (e.g. `\\boxed{x+1}`) is returned as cleaned text so it
    is scored (as wrong) rather than replaced by some other number from the reasoning.
    """
    boxed = last_boxed(text)
    if boxed is not None:
        value = parse_number(boxed)
        if value is not None:
            return Extraction(format_number(value), "boxed")
        content = clean(boxed).strip()
        if content:
            return Extraction(content, "boxed")
    cleaned = clean(text)
    for rule, pattern in (("answer_is", _ANSWER_NUM_RE), ("last_number", _NUM_RE)):
        m = _last_at(pattern, cleaned) if rule == "answer_is" else _last(pattern, cleaned)
        if m:
            value = parse_number(m.group(m.lastindex or 0))
            if value is not None:
                return Extraction(format_number(value), rule)
    return Extraction(None, NONE)


# ---------------------------------------------------------------- short answers

_ARTICLES_RE = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)
_LABEL_RE = re.compile(r"^\s*(?:the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is|[:=])\s*:?\s*", re.IGNORECASE)
_SHORT_LABEL_RE = re.compile(r"(?<!\w)answer\s*(?:is\b|[:=])[ \t]*:?[ \t]*([^\n]+)", re.IGNORECASE)
_EDGE_PUNCT = " \t\n\"'“”‘’`«».,;:!?()[]{}<>"


def normalize_answer(text: str) -> str:
    """Comparable form of a short answer: no "Answer:" label, quotes, edge punctuation, articles,
    case or repeated whitespace ("The answer is: “Faith.”" → "faith")."""
    s = unicodedata.normalize("NFKC", clean(text)).strip()
    s = _LABEL_RE.sub("", s)
    s = s.strip(_EDGE_PUNCT)
    s = _ARTICLES_RE.sub(" ", s)
    s = re.sub(r"\s+", " ", s).strip(_EDGE_PUNCT).lower()
    return s


def extract_short(text: str) -> Extraction:
    """A short free answer (cloze, single-value), normalized. Rules: boxed, answer_label (the rest of
    the last "Answer: …" line), whole (a one-line response), last_line."""
    boxed = last_boxed(text)
    if boxed is not None and normalize_answer(boxed):
        return Extraction(normalize_answer(boxed), "boxed")
    cleaned = clean(text)
    m = _last_at(_SHORT_LABEL_RE, cleaned)
    if m and normalize_answer(m.group(1)):
        return Extraction(normalize_answer(m.group(1)), "answer_label")
    lines = _non_empty_lines(cleaned)
    if not lines:
        return Extraction(None, NONE)
    rule = "whole" if len(lines) == 1 else "last_line"
    answer = normalize_answer(lines[-1])
    return Extraction(answer, rule) if answer else Extraction(None, NONE)


# ---------------------------------------------------------------- the benchmarks' own rules
#
# Each reproduces, regex flags included, the answer parser of the code behind a benchmark's published numbers.
# They run on the raw final answer (no cleaning): the authors' parsers see the text as the model wrote it.

ROBUST = "robust"
REFERENCE = "reference"
EXTRACT_CHOICES = (REFERENCE, ROBUST)

_TIGER_L1_RE = re.compile(r"answer is \(?([A-J])\)?")
TIGER_L2 = r".*[aA]nswer:\s*([A-J])"  # upstream's level 2, as written (read by `_tiger_level2`, in linear time)
_ANSWER_COLON_RE = re.compile(r"[aA]nswer:\s*([A-J])")


def _tiger_level2(text: str) -> str | None:
    """What `re.search(TIGER_L2, text)` returns, without its quadratic backtracking on long replies: the
    greedy `.*` (no newlines) starts on the first line holding a match and ends at that line's last one."""
    first = _ANSWER_COLON_RE.search(text)
    if first is None:
        return None
    line_end = text.find("\n", first.start())
    line_end = len(text) if line_end < 0 else line_end
    last = first
    while (m := _ANSWER_COLON_RE.search(text, last.start() + 1)) is not None and m.start() < line_end:
        last = m  # matches may overlap ("answer:Answer:J"): search again from the next character
    return last.group(1)


TIGER_L3 = r"\b[A-J]\b(?!.*\b[A-J]\b)"  # upstream's level 3 (re.DOTALL), read by `_tiger_level3` in linear time
_LONE_AJ_RE = re.compile(r"\b[A-J]\b")
TIGER_RULES = ("answer_is_first", "answer_label", "last_lone_letter")  # levels 1, 2, 3
TIGER_LEVELS = {rule: level for level, rule in enumerate(TIGER_RULES, 1)}


def _tiger_level3(text: str) -> str | None:
    """What `re.search(TIGER_L3, text, re.DOTALL)` returns: the last lone capital A-J anywhere. One-character
    matches cannot overlap, so the last `finditer` match is the one no later match follows."""
    last = _last(_LONE_AJ_RE, text)
    return last.group(0) if last else None


def read_mmlu_pro_local(text: str) -> Extraction:
    """TIGER-Lab's MMLU-Pro rule, evaluate_from_local.py@f418b116 `extract_answer` → `extract_again` →
    `extract_final`: level 1, the *first* `answer is \\(?([A-J])\\)?`; level 2, the first line with
    `[aA]nswer:\\s*([A-J])` (its last such match); level 3, the last lone letter A-J anywhere (`\\b[A-J]\\b`,
    re.DOTALL). Nothing found: None, which the authors count as a random guess (`AnswerRule.no_answer`)."""
    m = _TIGER_L1_RE.search(text)
    if m:
        return Extraction(m.group(1), TIGER_RULES[0])
    for rule, level in ((TIGER_RULES[1], _tiger_level2), (TIGER_RULES[2], _tiger_level3)):
        letter = level(text)
        if letter:
            return Extraction(letter, rule)
    return Extraction(None, NONE)


def read_mmlu_pro(text: str) -> Extraction:
    """TIGER-Lab's MMLU-Pro rule as evaluate_from_api.py@f418b116 applies it: `response.replace('**', '')`,
    then the three levels of `read_mmlu_pro_local`."""
    return read_mmlu_pro_local(text.replace("**", ""))


LMEVAL_VERSION = "0.4.13"  # lm-evaluation-harness, lm_eval/tasks/mmlu_pro/_default_template_yaml (task version 3.1)
_LMEVAL_MMLU_PRO_RE = re.compile(r"answer is \(?([ABCDEFGHIJ])\)?")


def read_lmeval_mmlu_pro(text: str) -> Extraction:
    """lm-evaluation-harness's `mmlu_pro` filter "custom-extract": `regex` (`answer is \\(?([ABCDEFGHIJ])\\)?`,
    the first of `findall`, stripped) then `take_first`; no match is its fallback "[invalid]", which
    exact_match scores wrong."""
    m = _LMEVAL_MMLU_PRO_RE.search(text)
    return Extraction(m.group(1), "answer_is_first") if m else Extraction(None, NONE)


_GPQA_PATTERNS = tuple(
    re.compile(p) for p in (r"answer is \((.)\)", r"Answer: \((.)\)", r"answer: \((.)\)", r"answer \((.)\)", r"\((.)\)")
)
_GPQA_RULES = ("answer_is", "Answer_label", "answer_label", "answer_paren", "paren")


def read_gpqa(text: str) -> Extraction:
    """GPQA's baselines (idavidrein/gpqa baselines/run_baseline.py, `parse_sampled_answer`): five patterns
    in order, the *first* match of each; a match that is not A-D falls through to the next pattern."""
    rejected: str | None = None
    for rule, pattern in zip(_GPQA_RULES, _GPQA_PATTERNS):
        m = pattern.search(text)
        if m and m.group(1) in "ABCD":
            return Extraction(m.group(1), rule, rejected)
        if m:
            rejected = rejected or m.group(1)
    return Extraction(None, NONE, rejected)


SIMPLE_EVALS_MCQ = re.compile(r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?")


def read_simple_evals_mcq(text: str) -> Extraction:
    """openai/simple-evals@ee3b0318 common.py ANSWER_PATTERN_MULTICHOICE, as gpqa_eval.py applies it: the
    *first* `Answer: X` (case-insensitive, so `answer: b` reads `b`), else nothing."""
    m = SIMPLE_EVALS_MCQ.search(text)
    return Extraction(m.group(1), "answer_line") if m else Extraction(None, NONE)


def same_case_sensitive(got: str, ref: str) -> bool:
    """simple-evals' `extracted_answer == correct_answer`: a lower-case letter is wrong."""
    return got == ref.strip()


_MATHARENA_BOX_RE = re.compile(r"\\(?:boxed|fbox)\{")


def _braced(text: str, start: int) -> tuple[str | None, int]:
    """The content of a brace group opened just before `start`, and the index after its close."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i], i + 1
    return None, start


def _box_spans(text: str) -> list[tuple[int, int, str]]:
    spans = []
    for m in _MATHARENA_BOX_RE.finditer(text):
        content, end = _braced(text, m.end())
        if content is not None:
            spans.append((m.start(), end, content))
    return spans


def _unbox(text: str) -> str:
    """Nested `\\boxed{…}` inside an answer replaced by their content, innermost last (MathArena)."""
    while spans := _box_spans(text):
        start, end, content = spans[-1]
        text = text[:start] + content + text[end:]
    return text


def read_aime(text: str) -> Extraction:
    """llm-wc's AIME rule (src/llm_wc/matharena.py `extract_answer`, strict_parsing=False, after its
    `replace("**", "")`): the last `\\boxed{…}`/`\\fbox{…}` (inner boxes unwrapped), else the last integer
    `\\b\\d+\\b`. Scored as llm-wc's `normalize_aime_answer` does: a digit string as an integer, anything
    else wrong."""
    text = text.replace("**", "")
    if not text.strip():
        return Extraction(None, NONE)
    spans = _box_spans(text)
    if spans:
        answer = _unbox(spans[-1][2]).strip()
        rule = "boxed"
    else:
        integers = re.findall(r"\b\d+\b", text)
        if not integers:
            return Extraction(None, NONE)
        answer, rule = integers[-1], "last_integer"
    return Extraction(str(int(answer)) if _is_integer(answer) else answer, rule)


def _is_integer(text: str) -> bool:
    return text.isascii() and text.isdigit()


def same_integer(got: str, ref: str) -> bool:
    """llm-wc's AIME comparison: both digit strings, equal as integers (anything else is wrong)."""
    ref = ref.strip()
    return _is_integer(got) and _is_integer(ref) and int(got) == int(ref)


LLMWC_PATTERNS = (
    r"answer is \(?([A-Z])\)?",
    r"correct answer is \(?([A-Z])\)?",
    r"Answer: \(?([A-Z])\)?",
    r"answer: \(?([A-Z])\)?",
    r"answer \(?([A-Z])\)?",
    r"\(([A-Z])\)",
)
_LLMWC_RES = tuple(re.compile(p, re.IGNORECASE) for p in LLMWC_PATTERNS)
_LLMWC_RULES = ("answer_is", "correct_answer_is", "Answer_label", "answer_label", "answer_letter", "paren")
LLMWC_FALLBACK = "fallback_last_choice"


def read_llmwc_mcqa(text: str, choices: str) -> Extraction:
    """llm-wc's multiple-choice rule (iamsikun/llm-wc@ef7cb496 src/llm_wc/core/mcqa.py
    `extract_choice_answer`, on the reply after llm-wc's `replace("**", "")`): six patterns in order, each
    searched case-insensitively for its *first* match and accepted only if the letter (uppercased) is among
    `choices`, else the next pattern; then the last standalone choice letter anywhere (`\\b[X]\\b`, any case)."""
    text = text.replace("**", "")
    valid = set(choices)
    rejected: str | None = None
    for rule, pattern in zip(_LLMWC_RULES, _LLMWC_RES):
        m = pattern.search(text)
        if m and m.group(1).upper() in valid:
            return Extraction(m.group(1).upper(), rule, rejected)
        if m:
            rejected = rejected or m.group(1).upper()
    # upstream's `\b(X)\b(?!.*\b(X)\b)` (DOTALL) is the last standalone letter: found here in linear time
    last = _last(re.compile(r"\b(" + "|".join(map(re.escape, sorted(valid))) + r")\b", re.IGNORECASE), text)
    if last is not None:
        return Extraction(last.group(1).upper(), LLMWC_FALLBACK, rejected)
    return Extraction(None, NONE, rejected)


def _filtered(read: Callable[[str], str | None], rule: str, text: str) -> Extraction:
    """An lm-eval filter (`proctor.scoring.lmeval_rules`) as an Extraction named after it."""
    answer = read(text)
    return Extraction(answer, rule if answer is not None else NONE)


@dataclass(frozen=True)
class AnswerRule:
    """A benchmark's reference answer rule: the parser behind its authors' published numbers."""

    name: str
    # the items it reads: multiple choice, numeric answers, any open answer (an expression: `grade` decides), or
    # any item a `score_whole` function scores whole
    kind: Literal["choice", "number", "expression", "grader"]
    source: str  # the upstream file (and commit) it reproduces
    read: Callable[[str], Extraction]
    same: Callable[[str, str], bool] | None = None  # the authors' comparison, where it differs from proctor's
    # how the authors count a reply the rule cannot read: "wrong", or "guess" (1/k for k options, the expected
    # value of their random draw); the default of --no-answer for the prompt kinds this rule reads
    no_answer: Literal["wrong", "guess"] = "wrong"
    levels: Mapping[str, int] = field(default_factory=dict)  # rule name → the level of the authors' chain it is
    # the letters it reads name the options as upstream stores them ("N/A" padding included: lm-eval), not as
    # proctor's item does (padding dropped): `scorers` maps them onto the item's before comparing
    upstream_letters: bool = False
    # graders that read the whole reply themselves (math-verify, MathArena): their verdict on (reply, one gold
    # answer); `read` then only records what they read
    grade: Callable[[str, str], bool] | None = None
    require: Callable[[], None] | None = None  # fails in one line when the grader's code is not installed
    # a "grader" rule's verdict on one reply (item, text) -> `proctor.scoring.base.Scored`: the reference's own
    # scoring of the whole reply (IFEval's instruction checkers, BBH's filter and exact match); no robust reading
    score_whole: Callable[[Any, str], Any] | None = None
    # the authors grade a reply stopped at the token limit on the text received (lm-eval's IFEval); proctor's
    # exclusion of such replies is then `--truncated-as excluded`
    grades_truncated: bool = False
    # the authors' runner asks once more when it reads no answer (MathArena's last chance); `--no-second-ask` off
    second_ask: SecondAsk | None = None
    # its verdict (item, why) -> Scored on a reply its grader gave up on (`proctor.scoring.budget`), where it keeps
    # more than the generic one (no answer, score 0)
    gave_up: Callable[[Any, str], Any] | None = None
    # a rule for an agent prompt kind (`proctor.scoring.agent_scorer`): its verdict (item, Trajectory) -> Scored on
    # the sample's whole trajectory (BFCL's function-calling kind: the reply's calls by the AST checker)
    score_trajectory: Callable[[Any, Any], Any] | None = None

    def level(self, rule: str | None) -> int | None:
        """The level of the authors' fallback chain that found an answer (None: no levels, or nothing found)."""
        return self.levels.get(rule) if rule is not None else None


TIGER_API_RULE, TIGER_LOCAL_RULE, LMEVAL_RULE = "tiger-lab-mmlu-pro", "tiger-lab-mmlu-pro-local", "lm-eval-mmlu-pro"
ANSWER_RULES: dict[str, AnswerRule] = {
    r.name: r
    for r in (
        AnswerRule(TIGER_API_RULE, "choice", "TIGER-AI-Lab/MMLU-Pro evaluate_from_api.py@f418b116 extract_answer"
                   " (levels 1-3, after replace('**', ''); unread: a guess)", read_mmlu_pro, no_answer="guess",
                   levels=TIGER_LEVELS),
        AnswerRule(TIGER_LOCAL_RULE, "choice", "TIGER-AI-Lab/MMLU-Pro evaluate_from_local.py@f418b116 extract_answer"
                   " (levels 1-3; unread: a guess)", read_mmlu_pro_local, no_answer="guess", levels=TIGER_LEVELS),
        AnswerRule(LMEVAL_RULE, "choice", f"EleutherAI/lm-evaluation-harness {LMEVAL_VERSION} lm_eval/tasks/mmlu_pro/"
                   "_default_template_yaml filter custom-extract (unread: wrong)", read_lmeval_mmlu_pro,
                   upstream_letters=True),
        AnswerRule("gpqa-baselines", "choice", "idavidrein/gpqa baselines/run_baseline.py parse_sampled_answer", read_gpqa),
        AnswerRule("matharena-aime", "number", "iamsikun/llm-wc src/llm_wc/matharena.py@188f45b extract_answer", read_aime,
                   same=same_integer),
        AnswerRule("lm-eval-gsm8k-strict-match", "number", "lm-eval 0.4.13 tasks/gsm8k/gsm8k.yaml filter strict-match",
                   partial(_filtered, strict_match, "strict-match"), same=same_exact_match),
        AnswerRule("lm-eval-gsm8k-flexible-extract", "number",
                   "lm-eval 0.4.13 tasks/gsm8k/gsm8k.yaml filter flexible-extract",
                   partial(_filtered, flexible_extract, "flexible-extract"), same=same_exact_match),
        AnswerRule("simple-evals-mcq", "choice", "openai/simple-evals@ee3b0318 common.py ANSWER_PATTERN_MULTICHOICE "
                   "(gpqa_eval.py: re.search, exact comparison)", read_simple_evals_mcq, same=same_case_sensitive),
        AnswerRule("math-verify", "expression", f"math-verify {MATH_VERIFY_VERSION} (PyPI) parse + verify, the gold "
                   "parsed as \\boxed{answer}", partial(_filtered, math_verify_extracted, "math-verify"),
                   grade=math_verify_correct, require=require_math_verify),
        AnswerRule("matharena", "expression", f"eth-sri/matharena@{MATHARENA_COMMIT[:12]} src/matharena/parser.py "
                   "extract_answer (strict_parsing false), parse_answer, check_answers (MathArena's own code, "
                   "installed)", partial(_filtered, matharena_extracted, "matharena"), grade=matharena_correct,
                   require=require_matharena, second_ask=MATHARENA_SECOND_ASK),
    )
}
LLMWC_MCQA = "llm-wc-mcqa"


def llmwc_mcqa(choices: str) -> AnswerRule:
    """llm-wc's multiple-choice rule with the letters llm-wc accepts for a benchmark (MMLU-Pro: A-J whatever
    the item's options, `DEFAULT_CHOICES[:10]`; GPQA: A-D): the reference rule of `proctor run --config`."""
    return AnswerRule(LLMWC_MCQA, "choice", "iamsikun/llm-wc src/llm_wc/core/mcqa.py@ef7cb496 extract_choice_answer"
                      f" (choices {choices})", partial(read_llmwc_mcqa, choices=choices))


# the letters llm-wc's `extract_choice_answer` accepts per benchmark (llm-wc@ef7cb496: mmlu_pro.py
# `DEFAULT_CHOICES[:10]` whatever a question's options, gpqa.py `GPQA_CHOICES`)
LLMWC_CHOICES = {"mmlu-pro": "ABCDEFGHIJ", "gpqa": "ABCD"}


def llmwc_rule(benchmark: str) -> AnswerRule:
    """The answer rule llm-wc scores `benchmark` (proctor's name) with, whatever the prompt kind: its
    multiple-choice parser for MMLU-Pro and GPQA, MathArena's for AIME."""
    if benchmark == "aime-2025":
        return ANSWER_RULES["matharena-aime"]
    return llmwc_mcqa(LLMWC_CHOICES["gpqa" if benchmark.startswith("gpqa-") else benchmark])
