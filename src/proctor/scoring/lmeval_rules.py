"""lm-evaluation-harness's GSM8K answer filters and metric, as plain functions (`proctor.scoring.extract` wraps
them as the `lm-eval-gsm8k-strict-match` and `lm-eval-gsm8k-flexible-extract` answer rules).

From lm_eval 0.4.13: tasks/gsm8k/gsm8k.yaml's `filter_list` (a `regex` filter then `take_first`;
filters/extraction.py `RegexFilter`: `findall`, the `group_select`-th match, its first non-empty group,
stripped; "[invalid]" when nothing matches) and its `exact_match` metric (api/metrics.py
`exact_match_hf_evaluate`: `regexes_to_ignore` removed from both sides, then compared case-insensitively).
"""

from __future__ import annotations

import re

STRICT_MATCH = re.compile(r"#### (\-?[0-9\.\,]+)")
FLEXIBLE_EXTRACT = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
FALLBACK = "[invalid]"
IGNORED = (re.compile(","), re.compile(r"\$"), re.compile(r"(?s).*#### "), re.compile(r"\.$"))


def regex_filter(text: str, pattern: re.Pattern[str], group_select: int = 0) -> str:
    """lm-eval's `RegexFilter` on one response: the selected match's first non-empty group, or "[invalid]"."""
    found = pattern.findall(text)
    if not found:
        return FALLBACK
    match = found[group_select]
    if isinstance(match, tuple):
        groups = [m for m in match if m]
        match = groups[0] if groups else FALLBACK
    return str(match).strip()


def strict_match(text: str) -> str | None:
    """gsm8k.yaml's `strict-match`: the first `#### N` (None where lm-eval keeps "[invalid]")."""
    got = regex_filter(text, STRICT_MATCH)
    return None if got == FALLBACK else got


def flexible_extract(text: str) -> str | None:
    """gsm8k.yaml's `flexible-extract`: the last number-like run (`group_select: -1`)."""
    got = regex_filter(text, FLEXIBLE_EXTRACT, group_select=-1)
    return None if got == FALLBACK else got


def exact_match_normalize(text: str) -> str:
    """gsm8k.yaml's `exact_match` settings: `,`, `$`, everything up to `#### ` and a final `.` removed, lower case."""
    for pattern in IGNORED:
        text = pattern.sub("", text)
    return text.lower()


def same_exact_match(got: str, ref: str) -> bool:
    """lm-eval's GSM8K `exact_match` between an extracted answer and the reference."""
    return exact_match_normalize(got) == exact_match_normalize(ref)
