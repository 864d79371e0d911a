"""`prompts.jsonl`: the long heads that a run's prompts share (a few-shot block, a system prompt, a template's
instructions), each stored once, by hash. A sample whose prompt starts with one keeps the key of that head in
`prompt_prefix` and only the rest of its prompt in `prompt`; reading it back joins the two, byte for byte.

A text prompt is joined as `head + rest`; a chat prompt is stored as its messages' JSON (compact, key order kept)
and joined as `json.loads(head + rest)`. Each line of the file is `{"key": …, "chat": …, "text": …}`, where `key`
is the start of the sha256 of the head (`chat:` or `text:` and the text), checked when read.

The heads are found as the run is written, with no knowledge of how prompts were built: when the prompts of two
different items share at least `MIN_PREFIX` characters from the start, their common head (cut back to the end of a
line or of a chat message) is stored and every later prompt that starts with it refers to it. Epochs of one item
never make a head (its whole prompt would be one); at most `MAX_PREFIXES` heads are kept per run, so what a reader
holds stays small whatever the data. Run directories written before (the whole prompt in every sample) read as
they always did."""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util.errors import InputError, ProctorError
from ..util.textio import open_checked, refuse_special

PROMPTS = "prompts.jsonl"
MIN_PREFIX = 256  # characters: a shorter shared head is not worth a reference
MAX_PREFIXES = 4096  # heads per run: a reader holds them all
KEY_HEX = 16  # the key's hex digits (lengthened where two heads of one run would share it)
RECENT = 1024  # prompts remembered (by their first MIN_PREFIX characters) to find a shared head in

Prompt = list[dict[str, str]] | str


@dataclass(frozen=True)
class Head:
    """One stored head: its key, whether it is the start of a chat prompt's JSON, and its text."""

    key: str
    chat: bool
    text: str


def prompt_text(prompt: Prompt) -> tuple[str, bool]:
    """The text a prompt is matched by: a text prompt itself, a chat prompt's messages as compact JSON."""
    if isinstance(prompt, str):
        return prompt, False
    return json.dumps(prompt, ensure_ascii=False, separators=(",", ":")), True


def full_hash(text: str, chat: bool) -> str:
    return hashlib.sha256(f"{'chat' if chat else 'text'}:{text}".encode("utf-8", "surrogatepass")).hexdigest()


def join(head: Head, rest: str) -> Prompt:
    """The whole prompt from its head and the rest a sample kept."""
    if not head.chat:
        return head.text + rest
    messages = json.loads(head.text + rest)
    if not isinstance(messages, list):
        raise TypeError("a chat prompt's head and rest do not join into a list of messages")
    return messages


def common_length(a: str, b: str) -> int:
    """The length of the longest common start of `a` and `b` (binary search on slices: C-speed compares)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def cut_back(text: str, n: int, chat: bool) -> int:
    """`n` moved back to just after the last line end (or, in a chat prompt's JSON, the last message end) in
    `text[:n]`: a head that ends mid-line would hold the start of one item's question, and the next item's would
    not start with it. Unchanged where there is no such end."""
    if chat:
        ends = [i + 2 for i in (text.rfind("\\n", 0, n), text.rfind("},{", 0, n)) if i >= 0]
    else:
        ends = [i + 1 for i in (text.rfind("\n", 0, n),) if i >= 0]
    return max(ends, default=n)


def _line(head: Head) -> bytes:
    return (json.dumps({"key": head.key, "chat": head.chat, "text": head.text}) + "\n").encode("ascii")


def read_heads(run_dir: Path) -> dict[str, Head]:
    """The run's stored heads by key (none when it has no prompts.jsonl); a torn last line (a kill mid-write) is
    skipped, and a head whose text does not hash to its key (an edit) is refused, naming the line."""
    path = run_dir / PROMPTS
    heads: dict[str, Head] = {}
    if not path.exists():
        return heads
    with open_checked(path) as f:  # a regular file within the size limit: a FIFO or /dev/zero is refused
        for lineno, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                break  # torn by a kill: no sample refers to it (the head is written before the samples)
            if raw.strip():
                head = _parse_head(path, lineno, raw)
                heads[head.key] = head
    return heads


def _parse_head(path: Path, lineno: int, raw: bytes) -> Head:
    try:
        data: Any = json.loads(raw)
        head = Head(key=data["key"], chat=data["chat"], text=data["text"])
    except (ValueError, KeyError, TypeError):
        raise InputError.at(path, "not a stored prompt head ({\"key\", \"chat\", \"text\"})", lineno) from None
    if not (isinstance(head.key, str) and isinstance(head.chat, bool) and isinstance(head.text, str)):
        raise InputError.at(path, "not a stored prompt head ({\"key\", \"chat\", \"text\"})", lineno)
    if len(head.key) < KEY_HEX or not full_hash(head.text, head.chat).startswith(head.key):
        raise InputError.at(path, f"the head {head.key[:KEY_HEX]} does not hash to its key (edited?)", lineno)
    return head


@dataclass
class HeadReader:
    """The heads of one run, read from prompts.jsonl the first time a sample refers to one."""

    run_dir: Path
    heads: dict[str, Head] | None = None

    def whole(self, key: str, rest: str) -> Prompt:
        """The prompt a sample stored as (`key`, `rest`); a KeyError names a key the run does not hold."""
        if self.heads is None or key not in self.heads:
            self.heads = read_heads(self.run_dir)
        return join(self.heads[key], rest)


@dataclass
class HeadWriter:
    """Finds and stores the heads of one run's prompts as its samples are written (`split`, then `flush` before
    the samples that refer to a new head are)."""

    run_dir: Path
    heads: dict[str, Head] = field(default_factory=dict)
    by_start: dict[tuple[bool, str], list[Head]] = field(default_factory=dict)  # longest first
    recent: OrderedDict[tuple[bool, str], tuple[str, str]] = field(default_factory=OrderedDict)  # → (item, text)
    new: list[Head] = field(default_factory=list)
    size: int = 0  # prompts.jsonl's size as this writer left it: another size means someone else wrote it

    @classmethod
    def open(cls, run_dir: Path) -> HeadWriter:
        writer = cls(run_dir)
        _cut_torn_tail(run_dir / PROMPTS)
        for head in read_heads(run_dir).values():
            writer._index(head)
        writer.size = _size(run_dir / PROMPTS)
        return writer

    def _index(self, head: Head) -> None:
        self.heads[head.key] = head
        bucket = self.by_start.setdefault((head.chat, head.text[:MIN_PREFIX]), [])
        bucket.append(head)
        bucket.sort(key=lambda h: -len(h.text))

    def learn(self, prompts: Iterable[tuple[str, str, bool]]) -> None:
        """Find the heads that these (item id, `prompt_text`) share, before any of them is split."""
        for item_id, text, chat in prompts:
            self.split(item_id, text, chat)

    def split(self, item_id: str, text: str, chat: bool) -> tuple[str, str] | None:
        """(key, rest) of a prompt (its `prompt_text`) that starts with a stored head (found now, perhaps), else
        None."""
        if len(text) < MIN_PREFIX:
            return None
        start = (chat, text[:MIN_PREFIX])
        head = next((h for h in self.by_start.get(start, ()) if text.startswith(h.text)), None)
        if head is None:
            head = self._found(item_id, text, chat, start)
        return (head.key, text[len(head.text):]) if head is not None else None

    def _found(self, item_id: str, text: str, chat: bool, start: tuple[bool, str]) -> Head | None:
        """A new head: the start `text` shares with the last prompt of another item that began the same way."""
        seen = self.recent.get(start)
        self.recent[start] = (item_id, text) if seen is None or seen[0] != item_id else seen
        self.recent.move_to_end(start)
        if len(self.recent) > RECENT:
            self.recent.popitem(last=False)
        if seen is None or seen[0] == item_id or len(self.heads) >= MAX_PREFIXES:
            return None
        n = cut_back(text, common_length(text, seen[1]), chat)
        if n < MIN_PREFIX:
            return None
        return self._add(text[:n], chat)

    def _add(self, text: str, chat: bool) -> Head:
        digest = full_hash(text, chat)
        width = KEY_HEX
        while digest[:width] in self.heads and (self.heads[digest[:width]].text, self.heads[digest[:width]].chat) \
                != (text, chat):
            width *= 2  # two heads of one run sharing a key's start: this one's key is longer
        key = digest[:width]
        if key not in self.heads:
            head = Head(key, chat, text)
            self._index(head)
            self.new.append(head)
        return self.heads[key]

    def flush(self) -> None:
        """Append the heads found since the last flush, durably (before any sample that refers to one)."""
        if not self.new:
            return
        path = self.run_dir / PROMPTS
        data = b"".join(_line(h) for h in self.new)
        try:
            with open(path, "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise ProctorError(f"{path}: cannot write: {e.strerror or e}") from None
        self.new.clear()
        self.size = _size(path)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _cut_torn_tail(path: Path) -> None:
    """Cut a last line with no newline (a kill mid-append) before appending after it."""
    refuse_special(path)  # a FIFO would block the read below, /dev/zero never end it
    try:
        with open(path, "r+b") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ProctorError(f"{path}: cannot repair: {e.strerror or e}") from None


_WRITERS: OrderedDict[Path, HeadWriter] = OrderedDict()
_KEEP_WRITERS = 16


def writer_for(run_dir: Path) -> HeadWriter:
    """The head writer of `run_dir`, kept between appends (what it learnt of the prompts so far), and read again
    when prompts.jsonl is not as it left it (another process wrote it, or the directory was made anew)."""
    key = run_dir.resolve()
    writer = _WRITERS.get(key)
    if writer is None or writer.size != _size(run_dir / PROMPTS):
        writer = HeadWriter.open(run_dir)
    _WRITERS[key] = writer
    _WRITERS.move_to_end(key)
    while len(_WRITERS) > _KEEP_WRITERS:
        _WRITERS.popitem(last=False)
    return writer


__all__ = ["MIN_PREFIX", "PROMPTS", "Head", "HeadReader", "HeadWriter", "join", "prompt_text", "read_heads",
           "writer_for"]
