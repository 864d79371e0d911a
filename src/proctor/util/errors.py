"""Errors that reach the user as `path:line: field: message` lines, never as tracebacks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input, located as precisely as we can."""

    path: str
    line: int | None
    message: str
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        what = f"{self.field}: {self.message}" if self.field else self.message
        return f"{where}: {what}"


def first_problem(exc: ValueError) -> tuple[str | None, str, int]:
    """(field path, message, how many problems) of a pydantic ValidationError's first problem; any other
    ValueError (bad JSON) as (None, its text's first line, 1)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None, str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 1
    found = errors(include_url=False)
    first = found[0]
    return ".".join(str(p) for p in first["loc"]) or None, first["msg"], len(found)


def brief(exc: ValueError) -> str:
    """A bad record's first problem on one line: `field: message (+N more)`."""
    field, message, count = first_problem(exc)
    more = f" (+{count - 1} more)" if count > 1 else ""
    return f"{field}: {message}{more}" if field else f"{message}{more}"


DEFAULT_MAX_ERROR_RATE = 0.1  # a run with a larger share of errored samples exits 1 (--max-error-rate)


class ProctorError(Exception):
    """Base class for errors proctor reports without a traceback (exit code 2)."""

    exit_code = 2


class InputError(ProctorError):
    """Bad input: carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem] | Problem) -> None:
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def at(cls, path: str | Path, message: str, line: int | None = None, field: str | None = None) -> InputError:
        return cls(Problem(str(path), line, message, field))


class CapabilityError(ProctorError):
    """A model cannot do what a run needs; raised before the run starts."""


class MissingKey(ProctorError):
    """A vendor's API with no key given: `env` names the variable the backend reads it from."""

    def __init__(self, message: str, env: str) -> None:
        super().__init__(message)
        self.env = env


class DatasetAccessError(ProctorError):
    """A dataset could not be fetched (gated, offline, missing): the message says what to do."""


class _Guard(Protocol):
    def message(self) -> str: ...


class CostLimitReached(ProctorError):
    """`--max-cost` would be crossed by the next request: the run stops, what finished is kept (raised by the cost
    guard, `proctor.run.pricing.CostGuard`; the judge lets it through, its answers kept).
    Its message is read from the guard when printed, so it counts what the requests in flight were billed."""

    exit_code = 3

    def __init__(self, guard: _Guard) -> None:
        super().__init__()
        self.guard = guard

    def __str__(self) -> str:
        return self.guard.message()
