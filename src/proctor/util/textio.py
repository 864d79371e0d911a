"""Reading text leniently (BOM, CRLF) and writing files atomically."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import InputError, Problem
from .limits import check_json_depth, max_file_bytes, max_line_bytes, max_record_bytes

_FILE_LIMIT = "PROCTOR_MAX_FILE_BYTES"


def read_bytes(path: str | Path, limit: int | None = None, limit_env: str = _FILE_LIMIT) -> bytes:
    """A regular file's bytes, within `limit` (default: the file limit); devices, pipes and unreadable paths are
    `InputError`s."""
    p = Path(path)
    limit = max_file_bytes() if limit is None else limit
    with open_checked(p, limit, limit_env) as f:
        try:
            raw = _read_up_to(f, os.fstat(f.fileno()).st_size, limit)
        except OSError as e:
            raise InputError.at(p, f"cannot read: {e.strerror or e}") from None
    if len(raw) > limit:
        raise InputError.at(p, f"file grew past the {limit:,}-byte limit while being read")
    return raw


def _checked_size(p: Path, limit: int, limit_env: str = _FILE_LIMIT) -> int:
    """The size of `p`, a regular file within `limit` bytes; anything else is an `InputError` (OSErrors pass)."""
    info = p.stat()
    if stat.S_ISDIR(info.st_mode):
        raise InputError.at(p, "is a directory, expected a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError.at(p, "not a regular file (a device, pipe or socket): refusing to read it")
    if info.st_size > limit:
        raise InputError.at(p, f"file is {info.st_size:,} bytes, over the {limit:,}-byte limit "
                               f"(raise {limit_env} to read it)")
    return info.st_size


@contextmanager
def open_checked(path: str | Path, limit: int | None = None, limit_env: str = _FILE_LIMIT) -> Iterator[IO[bytes]]:
    """A regular file opened for binary reading, after `read_bytes`' checks (a file, not a device; within the
    size limit), to be read in a stream rather than whole."""
    p = Path(path)
    try:
        _checked_size(p, max_file_bytes() if limit is None else limit, limit_env)
        f = open(p, "rb")  # noqa: SIM115 (closed below, after the caller's reads)
    except FileNotFoundError:
        raise InputError.at(p, "no such file") from None
    except IsADirectoryError:
        raise InputError.at(p, "is a directory, expected a file") from None
    except OSError as e:
        raise InputError.at(p, f"cannot read: {e.strerror or e}") from None
    with f:
        yield f


def refuse_special(path: str | Path) -> None:
    """Refuse a path that exists and is not a regular file (a FIFO, a device, a socket, a directory) before it is
    opened for update: opening or reading one would wait forever or never end. A missing path passes."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        raise InputError.at(p, "is a directory, expected a file")
    if not stat.S_ISREG(mode):
        raise InputError.at(p, "not a regular file (a device, pipe or socket): refusing to read it")


def _read_up_to(f: IO[bytes], size: int, limit: int) -> bytes:
    """The file's bytes, at most `limit + 1` of them, buffers sized by what is there (`read(limit + 1)` would
    allocate the whole limit, 4 GiB, up front); a file that grows while read is read on in 1 MiB steps."""
    chunks = [f.read(min(size, limit) + 1)]
    total = len(chunks[0])
    while total <= limit and total > size:
        chunk = f.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_text(path: str | Path, limit: int | None = None, limit_env: str = _FILE_LIMIT) -> str:
    """Read a UTF-8 text file; accept a BOM and CRLF; reject binary and undecodable files clearly."""
    p = Path(path)
    raw = read_bytes(p, limit, limit_env)
    if b"\x00" in raw[:8192]:
        raise InputError.at(p, "looks like a binary file, expected UTF-8 text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError.at(p, f"not valid UTF-8 (byte {e.start})", line) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_json(text: str, path: str | Path, line: int | None = None) -> Any:
    """`json.loads`, with every way it can fail (syntax, nesting past MAX_JSON_DEPTH, integers of more than
    4300 digits) turned into an `InputError` at `path:line`."""
    check_json_depth(text, path, line)  # before the parser, and every walker after it, recurses
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        at = e.lineno if line is None else line
        raise InputError.at(path, f"malformed JSON: {e.msg} (column {e.colno})", at) from None
    except RecursionError:
        raise InputError.at(path, "JSON nested too deeply", line) from None
    except ValueError as e:  # e.g. "Exceeds the limit (4300 digits) for integer string conversion"
        raise InputError.at(path, f"unreadable JSON: {e}", line) from None


def lone_surrogate(value: Any, loc: tuple[int | str, ...] = ()) -> tuple[int | str, ...] | None:
    """Where in JSON-like `value` a string holds a lone surrogate (not Unicode, cannot be written), else None."""
    if isinstance(value, str):
        return loc if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            found = lone_surrogate(k, (*loc, "<key>")) or lone_surrogate(v, (*loc, str(k)))
            if found is not None:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = lone_surrogate(v, (*loc, i))
            if found is not None:
                return found
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_lone_surrogate(value: Any, path: str | Path, line: int | None = None) -> None:
    """An `InputError` at `path:line` naming where parsed JSON `value` holds a lone surrogate (JSON may escape
    one; no UTF-8 file can hold it, so the run written from it would fail half-way)."""
    bad = lone_surrogate(value)
    if bad is not None:
        where = ".".join(map(str, bad))
        raise InputError.at(path, f"text with a lone surrogate (\\ud800-\\udfff escape) at {where}: not valid Unicode",
                            line)


def iter_jsonl(path: str | Path, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for each non-blank line; record malformed lines in `problems`."""
    text = read_text(path)
    if not text.strip():
        problems.append(Problem(str(path), None, "empty file"))
        return
    longest = max_line_bytes()
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(line) > longest:
            problems.append(Problem(str(path), lineno, f"line longer than {longest:,} characters "
                                                       "(raise PROCTOR_MAX_LINE_BYTES to accept it)"))
            continue
        try:
            yield lineno, parse_json(line, path, lineno)
        except InputError as e:
            problems.extend(e.problems)


def load_json(path: str | Path) -> Any:
    """Parse a whole-file JSON document; errors carry the line."""
    text = read_text(path)
    if not text.strip():
        raise InputError.at(path, "empty file")
    return parse_json(text, path)


def read_record_text(path: str | Path) -> str:
    """A run-directory record's text (checksums, signature, manifest, results, shard, plan, status, batch state):
    a regular file (a FIFO or a device is refused, never waited on) within `max_record_bytes`."""
    return read_text(path, max_record_bytes(), "PROCTOR_MAX_RECORD_BYTES")


def read_json_record(path: str | Path) -> Any:
    """A run-directory JSON record, read with every bound: `read_record_text`, then `parse_json` (nesting past
    MAX_JSON_DEPTH refused before the parser recurses). Every refusal is an `InputError` `path: what is wrong`."""
    text = read_record_text(path)
    if not text.strip():
        raise InputError.at(path, "empty file")
    return parse_json(text, path)


@contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Write to a temporary file beside `path` and rename it into place only on success. A device, pipe or socket
    at `path` (`-o /dev/null`) is refused: the rename would replace it by a regular file (as root: the device)."""
    target = Path(path)
    try:
        special = not stat.S_ISREG(mode_of := target.stat().st_mode) and not stat.S_ISDIR(mode_of)
    except OSError:
        special = False  # nothing there yet (or unreadable: the write says so)
    if special:
        raise InputError.at(target, "not a regular file (a device, pipe or socket): refusing to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600: the usual mode, as open() would
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8", newline=None if "b" in mode else "\n") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError) and e.filename is None:  # a failed write (a full disk) names no file
            raise with_path(e, target) from None
        raise


def current_umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def with_path(e: OSError, path: str | Path) -> OSError:
    """`e` naming `path`, so that the one-line message says which file a failed write was for."""
    return OSError(e.errno, e.strerror or str(e), str(path))


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_writer(path) as f:
        f.write(text)


def write_json_atomic(path: str | Path, data: Any, indent: int | None = 2) -> None:
    write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")


def write_json_list_atomic(path: str | Path, rows: Iterable[Any], indent: int = 2) -> int:
    """`write_json_atomic(path, list(rows), indent)` byte for byte, each row written as it comes (never the whole
    list, nor its text, in memory); how many rows. A row's own lines are indented one level further (a JSON
    string never holds a raw newline, so every newline of a row's text is a line break)."""
    n = 0
    pad = "\n" + " " * indent
    with atomic_writer(path) as f:
        for row in rows:
            f.write(("[" if n == 0 else ",") + pad + json.dumps(row, indent=indent, ensure_ascii=False).replace("\n", pad))
            n += 1
        f.write("\n]\n" if n else "[]\n")
    return n


def write_lines_atomic(path: str | Path, lines: Iterable[str]) -> int:
    """Write each of `lines` (streamed, never joined) and a newline into `path`, atomically; how many."""
    n = 0
    with atomic_writer(path) as f:
        for line in lines:
            f.write(line + "\n")
            n += 1
    return n


def dumps_jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def staging_name(target: Path, pid: int | None = None) -> str:
    """The name prefix of `target`'s hidden staging folders, `.NAME.pPID-hHOST.`: it names the writer, so that
    `clean_stale_staging` can tell a folder a killed writer left from one that is still being written."""
    return f".{target.name}.p{os.getpid() if pid is None else pid}-h{_host_tag()}."


def staged_for(path: Path) -> Path:
    """The target a staging folder from `make_staging` stands for (`.NAME.pPID-hHOST.XXXX.tmp` → NAME), or `path`
    itself: what a writer names in a file it writes inside the staging folder."""
    m = re.fullmatch(r"\.(.+)\.p[0-9]{1,10}-h[0-9a-f]+\..*\.tmp", path.name)
    return path.with_name(m.group(1)) if m else path


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha256(socket.gethostname().encode(errors="surrogatepass")).hexdigest()[:8]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # EPERM: it exists, owned by someone else
        return True
    return True


def make_staging(target: Path) -> Path:
    """A new hidden staging folder beside `target` (mode as mkdir would make it), after removing the stale ones."""
    clean_stale_staging(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=staging_name(target), suffix=".tmp", dir=target.parent))
    except OSError as e:  # a read-only folder: name it, not the hidden staging folder that never was
        raise with_path(e, target.parent) from None
    os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes 0700: the usual mode, as mkdir would
    return tmp


def clean_stale_staging(target: Path) -> list[Path]:
    """Remove `target`'s staging folders whose writer, a process of this host, is dead (a kill -9 or a power
    cut mid-write); those of a live writer, of another host or of unknown origin are left. The removed paths."""
    pattern = re.compile(re.escape(f".{target.name}.p") + r"([0-9]{1,10})-h" + _host_tag() + r"\..+")
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return []
    removed = []
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and not _alive(int(found.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@contextmanager
def atomic_directory(target: str | Path, carry: Callable[[str], bool] = lambda name: False) -> Iterator[Path]:
    """Build a directory in a temporary sibling of `target` and swap it in whole when the block succeeds.

    Readers see the old directory or the new one, never a mix: a kill mid-write leaves the old directory
    as it was (and a `.NAME.pPID-….tmp` sibling, removed by the next write to `target`). Entries of an existing `target` whose names
    `carry` accepts are carried over (hard-linked where possible) before the block runs.
    """
    out = Path(target)
    if out.exists() and not out.is_dir():
        raise InputError.at(out, "exists and is not a directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_staging(out)
    try:
        if out.is_dir():
            for entry in out.iterdir():
                if carry(entry.name):
                    _carry(entry, tmp / entry.name)
        yield tmp
        _fsync_dir(tmp)
        _swap_in(tmp, out)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.filename is None:
            raise with_path(e, out) from None
        raise


def _carry(src: Path, dst: Path) -> None:
    if src.is_dir() and not src.is_symlink():
        shutil.copytree(src, dst, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(str(src), str(dst))


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)
    return dst


def _fsync_dir(d: Path) -> None:
    for f in d.iterdir():
        if f.is_file() and not f.is_symlink():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())


def _swap_in(new: Path, out: Path) -> None:
    """Put `new` at `out`: one atomic exchange where the kernel offers it (Linux renameat2), else two renames."""
    if not out.exists():
        os.replace(new, out)
        return
    if _exchange(new, out):
        shutil.rmtree(new, ignore_errors=True)  # `new` now names the old directory
        return
    old = out.with_name(f".{out.name}.{os.getpid()}.old")
    os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths with renameat2(RENAME_EXCHANGE); False where unsupported."""
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(rc == 0)
