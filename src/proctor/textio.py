"""Reading text leniently (BOM, CRLF) and writing files atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import InputError, Problem


def read_text(path: str | Path) -> str:
    """Read a UTF-8 text file; accept a BOM and CRLF; reject binary and undecodable files clearly."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError.at(p, "no such file") from None
    except IsADirectoryError:
        raise InputError.at(p, "is a directory, expected a file") from None
    except OSError as e:
        raise InputError.at(p, f"cannot read: {e.strerror}") from None
    if b"\x00" in raw[:8192]:
        raise InputError.at(p, "looks like a binary file, expected UTF-8 text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError.at(p, f"not valid UTF-8 (byte {e.start})", line) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def iter_jsonl(path: str | Path, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for each non-blank line; record malformed lines in `problems`."""
    text = read_text(path)
    if not text.strip():
        problems.append(Problem(str(path), None, "empty file"))
        return
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(Problem(str(path), lineno, f"malformed JSON: {e.msg} (column {e.colno})"))


def load_json(path: str | Path) -> Any:
    """Parse a whole-file JSON document; errors carry the line."""
    text = read_text(path)
    if not text.strip():
        raise InputError.at(path, "empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError.at(path, f"malformed JSON: {e.msg} (column {e.colno})", e.lineno) from None


@contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Write to a temporary file beside `path` and rename it into place only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600: the usual mode, as open() would
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8", newline=None if "b" in mode else "\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def current_umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_writer(path) as f:
        f.write(text)


def write_json_atomic(path: str | Path, data: Any, indent: int | None = 2) -> None:
    write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")


def dumps_jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
