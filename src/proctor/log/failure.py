"""Why a sample failed, read from what it records (`Sample.failure`): the model's answer, a refusal, a limit, or the
infrastructure — the sandbox, the server, a timeout, a request that could not be made. Derived, never stored, so a
run written before it is classified too. See docs/statistics.md, "Infrastructure noise".

The rules, in order (a sample that earned credit, or has no reference, is no failure):

* an error (`Outcome.ERROR`): the message as `proctor.models._http` writes it — `timed out after` is a timeout;
  HTTP 408/409/425/429/5xx/529, a connection error, an unreadable body or a batch that ended without running
  the request is the server; an execution that failed
  with code taken from the reply (`ExecutionDetails.verdict == "error"` with the code or the sandbox recorded) is the
  sandbox; any other error (HTTP 4xx, a prompt longer than the context, a reply of the wrong shape) is a request
  error;
* a refusal: the reply ended as the API marks a refusal (`finish_reason` `content_filter`, OpenAI; `refusal`,
  Anthropic). No wording is read: a reply that declines in words is a wrong answer;
* a limit: truncated (the token budget, an agent's turn/call/token/time limit), or a program stopped by its time,
  memory or process limit — except a limit of proctor's containment that the benchmark's authors do not set
  (`ExecutionDetails.beyond_authors`), which is the sandbox's;
* otherwise a wrong answer (including no answer found).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Protocol


class Recorded(Protocol):
    """What the rules read of a sample (`proctor.log.runlog.Sample`, which this module never imports)."""

    @property
    def outcome(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def finish_reason(self) -> str | None: ...
    @property
    def extracted(self) -> str | None: ...
    @property
    def details(self) -> object: ...


class Failure(StrEnum):
    WRONG = "wrong"  # the model answered, and earned nothing (or no answer was found)
    REFUSAL = "refusal"  # the API marked the reply a refusal (finish_reason)
    LIMIT = "limit"  # token truncation, an agent limit, the program's own time/memory limit
    SANDBOX = "sandbox"  # the sandbox failed, or its containment stopped what the authors' harness would run
    SERVER = "server"  # HTTP 5xx/429 after the retries, a connection error, an unreadable reply
    TIMEOUT = "timeout"  # the request timed out (after the retries)
    REQUEST = "request"  # another request error: HTTP 4xx, a prompt too long, a reply of the wrong shape


MODEL_FAILURES = frozenset({Failure.WRONG, Failure.REFUSAL, Failure.LIMIT})  # the model's share
INFRA_FAILURES = frozenset(Failure) - MODEL_FAILURES  # the infrastructure's: sandbox, server, timeout, request
REFUSAL_FINISHES = frozenset({"content_filter", "refusal"})

_TIMEOUT = re.compile(r"\btimed out after\b")
_SERVER = re.compile(r"\bHTTP (?:5\d\d|408|409|425|429)\b|\bconnection error\b|\bunreadable JSON body\b"
                     r"|\bexpected a JSON object\b|\bnested too deeply\b"
                     r"|\bwithout a result\b|\bno result yet\b|\(not run; the next run submits it again\)")  # batches


def error_failure(message: str | None) -> Failure:
    """The class of an error message as the HTTP backends write it: timeout, server, or request."""
    text = message or ""
    if _TIMEOUT.search(text):
        return Failure.TIMEOUT
    return Failure.SERVER if _SERVER.search(text) else Failure.REQUEST


def failure_of(s: Recorded) -> Failure | None:
    """The sample's failure class (module docstring); None when it is no failure (credit earned, or unscored)."""
    d = s.details
    execution = getattr(d, "kind", None) == "execution"
    verdict = getattr(d, "verdict", None) if execution else None
    if s.outcome == "error":
        ran = verdict == "error" and (s.extracted is not None or getattr(d, "sandbox", None) is not None)
        return Failure.SANDBOX if ran else error_failure(s.error)
    if s.outcome in ("correct", "partial", "unscored"):
        return None
    if s.finish_reason in REFUSAL_FINISHES:
        return Failure.REFUSAL
    if execution and getattr(d, "beyond_authors", None):
        return Failure.SANDBOX
    if s.outcome == "truncated" or verdict == "limit":
        return Failure.LIMIT
    return Failure.WRONG
