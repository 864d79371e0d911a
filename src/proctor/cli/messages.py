"""The one style of what proctor says on stderr besides results: `error: …`, `warning: …`, `hint: …`.

Every such line starts with its kind, lower case, then a colon; a located problem keeps its
`path:line: message` right after (`error: items.jsonl:3: response: missing`), so `grep '^error:'`
finds every error and the location reads as the user's editor expects. Nothing else in `proctor`
prints these words as a prefix (tests/cli/test_messages.py greps for strays).
"""

from __future__ import annotations

import sys

from ..errors import InputError, ProctorError

ERROR, WARNING, HINT = "error", "warning", "hint"


def line(kind: str, message: str) -> str:
    """`kind: message`, each further line of a multi-line message indented under the first."""
    first, *rest = str(message).splitlines() or [""]
    return "\n".join([f"{kind}: {first}", *(f"  {r}" for r in rest)])


def _say(kind: str, message: str) -> None:
    print(line(kind, message), file=sys.stderr, flush=True)


def error(message: str) -> None:
    _say(ERROR, message)


def warning(message: str) -> None:
    _say(WARNING, message)


def hint(message: str) -> None:
    _say(HINT, message)


def report_error(e: ProctorError) -> None:
    """An error the user can act on: one `error:` line per problem (bad input lists every problem)."""
    if isinstance(e, InputError):
        for problem in e.problems:
            error(str(problem))
    else:
        error(str(e))


def deprecated(old: str, new: str) -> None:
    """Warn that option `old` is an old spelling of `new` (kept working for one release)."""
    warning(f"{old} is deprecated and will be removed after 0.2; use {new}")


__all__ = ["deprecated", "error", "hint", "line", "report_error", "warning"]
