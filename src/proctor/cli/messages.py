"""The one style of what proctor says on stderr besides results: `error: …`, `warning: …`, `hint: …`
(what to do next) and `note: …` (what proctor did on the user's behalf, e.g. a field it filled in).

Every such line starts with its kind, lower case, then a colon; a located problem keeps its
`path:line: message` right after (`error: items.jsonl:3: response: missing`), so `grep '^error:'`
finds every error and the location reads as the user's editor expects. Nothing else in `proctor`
prints these words as a prefix (tests/cli/test_messages.py greps for strays).
"""

from __future__ import annotations

import functools
import logging
import sys

from ..util.errors import InputError, ProctorError
from ..util.redact import redact_text
from ..util.termsafe import escape_control

ERROR, WARNING, HINT, NOTE = "error", "warning", "hint", "note"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `3 files` (`plural` when adding an s will not do)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def line(kind: str, message: str) -> str:
    """`kind: message`, each further line of a multi-line message indented under the first (control
    characters from data, a server's reply or a file name, shown escaped: proctor.util.termsafe)."""
    first, *rest = [escape_control(part) for part in str(message).splitlines()] or [""]
    return "\n".join([f"{kind}: {first}", *(f"  {r}" for r in rest)])


def _say(kind: str, message: str) -> None:
    """Print one message, redacted: an error may quote a URL with a key in it, or a server's echo of one."""
    print(line(kind, redact_text(str(message))), file=sys.stderr, flush=True)


def error(message: str) -> None:
    _say(ERROR, message)


def warning(message: str) -> None:
    _say(WARNING, message)


def hint(message: str) -> None:
    _say(HINT, message)


def note(message: str) -> None:
    _say(NOTE, message)


def report_error(e: ProctorError) -> None:
    """An error the user can act on: one `error:` line per problem (bad input lists every problem)."""
    if isinstance(e, InputError):
        for problem in e.problems:
            error(str(problem))
    else:
        error(str(e))


class _StderrInStyle(logging.Handler):
    """`warning: …` / `error: …` on whatever sys.stderr is when the record is written."""

    def emit(self, record: logging.LogRecord) -> None:
        _say(ERROR if record.levelno >= logging.ERROR else WARNING, record.getMessage())


@functools.cache
def route_log_warnings() -> None:
    """proctor's library warnings (`logging`, e.g. a torn last record dropped on resume) in this style,
    instead of logging's bare last-resort lines; a handler the user configured is left alone."""
    logger = logging.getLogger("proctor")
    if not logger.handlers and not logging.getLogger().handlers:
        logger.addHandler(_StderrInStyle(logging.WARNING))


def deprecated(old: str, new: str) -> None:
    """Warn that option `old` is an old spelling of `new` (kept working for one release)."""
    warning(f"{old} is deprecated and will be removed after 0.2; use {new}")


__all__ = ["deprecated", "error", "hint", "line", "note", "report_error", "route_log_warnings", "warning"]
