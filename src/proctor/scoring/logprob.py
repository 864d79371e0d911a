"""Probability normalizations and the distribution over queries — the one place they live.

A query's *score* is its continuation log-prob (natural log) normalized one of five ways, then divided by
the temperature:

* ``sum``   — the total log-prob of the query's tokens (default; probsem's ``norm=False``);
* ``token`` — per token (probsem's ``norm=True``);
* ``char``  — per character of the query text (lm-eval's ``acc_norm``);
* ``byte``  — per UTF-8 byte of the query text;
* ``pmi``   — minus the query's log-prob after the posttext alone (pointwise mutual information).

`softmax` turns scores into a distribution with log-sum-exp, so very negative scores (even -1e30) never
give NaN; `argmax_ties` reports every index at the maximum so ties are visible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum

BOUNDARIES = ("proctor", "lm-eval")  # where a context ends and its continuation begins (`token_boundary`)


def token_boundary(context: str, continuation: str, rule: str = "proctor") -> tuple[str, str]:
    """The (context, continuation) a backend scores. `proctor`: as given. `lm-eval`: lm-evaluation-harness's
    `_encode_pair` moves the context's trailing whitespace to the front of the continuation, so a context
    ending in a space is tokenized as the word boundary it is (its scores differ from `proctor`'s there)."""
    if rule == "proctor":
        return context, continuation
    if rule != "lm-eval":
        raise ValueError(f"unknown token boundary {rule!r}; known: {', '.join(BOUNDARIES)}")
    stripped = context.rstrip()
    return stripped, context[len(stripped):] + continuation


class Norm(StrEnum):
    SUM = "sum"
    TOKEN = "token"
    CHAR = "char"
    BYTE = "byte"
    PMI = "pmi"


def normalize(
    logprob: float,
    norm: Norm | str,
    *,
    n_tokens: int,
    text: str,
    unconditional: float | None = None,
) -> float:
    """`logprob` of continuation `text` (`n_tokens` tokens) under `norm`; PMI needs `unconditional`."""
    norm = Norm(norm)
    if norm is Norm.SUM:
        return logprob
    if norm is Norm.TOKEN:
        return logprob / max(n_tokens, 1)
    if norm is Norm.CHAR:
        return logprob / max(len(text), 1)
    if norm is Norm.BYTE:
        return logprob / max(len(text.encode("utf-8")), 1)
    if unconditional is None:
        raise ValueError("pmi normalization needs the query's unconditional log-prob")
    return logprob - unconditional


def all_norms(logprob: float, *, n_tokens: int, text: str, unconditional: float | None) -> dict[str, float]:
    """Every normalization of one log-prob (PMI only when `unconditional` is known)."""
    out = {
        n.value: normalize(logprob, n, n_tokens=n_tokens, text=text, unconditional=unconditional)
        for n in Norm
        if n is not Norm.PMI
    }
    if unconditional is not None:
        out[Norm.PMI.value] = logprob - unconditional
    return out


def apply_temperature(scores: Sequence[float], temperature: float) -> list[float]:
    """Divide scores by a positive temperature."""
    if not temperature > 0 or math.isinf(temperature):
        raise ValueError(f"temperature must be a positive number, got {temperature}")
    return [s / temperature for s in scores]


def logsumexp(values: Sequence[float]) -> float:
    """log(sum(exp(v))) without overflow or underflow; -inf for an empty or all -inf input."""
    if not values:
        return -math.inf
    m = max(values)
    if math.isinf(m):
        return m
    return m + math.log(sum(math.exp(v - m) for v in values))


def softmax(scores: Sequence[float]) -> list[float]:
    """A numerically stable softmax: shifts by the max, so no NaN on very negative scores."""
    if any(math.isnan(s) for s in scores):
        raise ValueError("softmax input contains NaN")
    if not scores:
        return []
    m = max(scores)
    if math.isinf(m):
        if m < 0:  # every score is -inf: uniform is the only honest answer
            return [1.0 / len(scores)] * len(scores)
        raise ValueError("softmax input contains +inf")
    exps = [math.exp(s - m) for s in scores]  # the max maps to 1: no overflow, the sum is >= 1
    total = sum(exps)
    return [e / total for e in exps]


def argmax_ties(scores: Sequence[float]) -> list[int]:
    """Every index whose score equals the maximum (length > 1 means a tie)."""
    if not scores:
        return []
    m = max(scores)
    return [i for i, s in enumerate(scores) if s == m]
