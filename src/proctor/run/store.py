"""The local store: a request cache and the history of finished runs, in one SQLite file.

* **Request cache** — every model response keyed by what produced it (model identity, request kind,
  the full request with its generation settings, and the sample index when sampling), so re-running a
  command makes no model call. Errored responses are never cached: a re-run retries them.
* **Run history** — one row per finished run (provenance + overall metrics), its per-category and
  per-modality metrics, and its per-item scores, so `history`, `compare` and `leaderboard` never reopen
  run directories.

One file keeps one `--store` option; `Store.clear_cache()` empties the cache and keeps the history.
Several processes may share a store: WAL mode (readers never block), a busy timeout, short
`BEGIN IMMEDIATE` write transactions, and a retry loop on SQLITE_BUSY / "database is locked".
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Self, TypeVar

from pydantic import JsonValue

from ..core.model import GenerateRequest, Generation, Loglikelihood, LoglikelihoodRequest
from ..core.results import MetricBlock
from ..core.tools import ToolCall
from ..log.runlog import SCORED_OUTCOMES, Manifest, Outcome, RunLog, Sample
from ..log.sequential import Partial
from ..log.setting import run_setting, setting_key, setting_label
from ..metrics.results import read_run
from ..stats.intervals import guess_credit
from ..util.columns import Labels
from ..util.errors import InputError
from ..util.redact import redact

STORE_ENV = "PROCTOR_STORE"
STORE_FILENAME = "store.sqlite"
SCHEMA_VERSION = 1
CACHE_KEY_VERSION = 1

#: describe() fields that do not change a model's answers (or that must never be hashed) — left out of keys.
VOLATILE_FIELDS = frozenset({
    "device", "device_map", "host", "pid", "loaded_at", "started_at", "timestamp", "latency_s",
    "batch_size", "max_batch_size", "concurrency", "max_concurrency", "timeout", "timeout_s",
    "max_retries", "retries", "base_url", "organization", "headers", "capabilities",
})
_SECRET_HINTS = ("key", "token", "secret", "password", "auth")

Response = Generation | Loglikelihood
Request = GenerateRequest | LoglikelihoodRequest
_KINDS: dict[str, type[Generation | Loglikelihood]] = {"generate": Generation, "loglikelihood": Loglikelihood}
_CHUNK = 500  # rows per statement / write transaction: keeps every lock short
_T = TypeVar("_T")


def default_store_path() -> Path:
    """`$PROCTOR_STORE`, else `store.sqlite` in the user data directory (platformdirs)."""
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("proctor", appauthor=False)) / STORE_FILENAME


# ----------------------------------------------------------------------------- cache keys


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _stable(d: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: (_stable(v) if isinstance(v, Mapping) else v)
        for k, v in d.items()
        if k not in VOLATILE_FIELDS and not any(h in k.lower() for h in _SECRET_HINTS)
    }


def model_identity(model: Any) -> dict[str, Any]:
    """What identifies a model's answers: a `Model`'s declared `identity()`, else a describe()-style
    mapping minus volatile fields and secrets, or a spec string.
    """
    if isinstance(model, str):
        return {"spec": model}
    identity = getattr(model, "identity", None)
    if callable(identity):
        return _stable(identity())
    if isinstance(model, Mapping):
        desc = dict(model)
    else:
        describe = getattr(model, "describe", None)
        desc = dict(describe()) if callable(describe) else {}
        desc.setdefault("spec", getattr(model, "name", type(model).__name__))
    return _stable(desc)


def request_kind(request: Request) -> str:
    if isinstance(request, GenerateRequest):
        return "generate"
    if isinstance(request, LoglikelihoodRequest):
        return "loglikelihood"
    raise TypeError(f"not a model request: {type(request).__name__}")


def request_key(model_id: Mapping[str, Any], request: Request, sample_index: int = 0) -> str:
    """sha256 of the canonical JSON of (model identity, request kind, full request, sample index).

    The sample index only counts for generations sampled with temperature > 0: a greedy answer or a
    log-likelihood is the same on every epoch, so every epoch shares one cache entry.
    """
    kind = request_kind(request)
    sampled = isinstance(request, GenerateRequest) and request.settings.temperature != 0  # None: may sample
    payload = {
        "v": CACHE_KEY_VERSION,
        "model": _stable(model_id),
        "kind": kind,
        "request": request.as_dict(),
        "sample": sample_index if sampled else None,
    }
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def _encode(response: Response) -> tuple[str, str]:
    kind = "generate" if isinstance(response, Generation) else "loglikelihood"
    if not isinstance(response, Generation | Loglikelihood):
        raise TypeError(f"not a model response: {type(response).__name__}")
    fields = dataclasses.asdict(response).items()  # no calls: the value stored as before tool calling
    return kind, _canonical({k: v for k, v in fields if k != "cached" and not (k == "tool_calls" and not v)})


def _decode(kind: str, value: str) -> Response:
    cls = _KINDS[kind]
    data = json.loads(value)
    names = {f.name for f in dataclasses.fields(cls)}
    if data.get("tool_calls"):  # a reply's calls come back as the records they were
        data["tool_calls"] = tuple(ToolCall(**c) for c in data["tool_calls"])
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclasses.dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0
    skipped_errors: int = 0  # errored responses offered to put_many and not stored
    busy_retries: int = 0  # times the database was busy past busy_timeout and the operation was retried


# ----------------------------------------------------------------------------- history records


#: what the history keeps of a category's or modality's `MetricBlock` (its `run_groups` row)
GROUP_FIELDS = ("n_scored", "accuracy", "ci_low", "ci_high")


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """One finished run as the history knows it."""

    run_id: str
    path: str
    model: str
    dataset: str
    dataset_revision: str | None
    dataset_hash: str | None
    mode: str
    prompt_kind: str | None
    template_hash: str | None
    extractor_version: str | None
    started_at: str
    finished_at: str | None
    n_scored: int | None = None
    n_errors: int | None = None
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    cost: str | None = None  # exact money (a Decimal as text), from results.json's `cost` when prices were known
    cost_per_correct: str | None = None
    currency: str | None = None
    truncated_rate: float | None = None
    # results.json's blocks as the history keeps them (`GROUP_FIELDS`)
    by_category: dict[str, MetricBlock] = dataclasses.field(default_factory=dict)
    by_modality: dict[str, MetricBlock] = dataclasses.field(default_factory=dict)
    setting: dict[str, Any] = dataclasses.field(default_factory=dict)  # proctor.log.setting.run_setting
    partial: Partial | None = None  # a run --stop-when-decided stopped early: its items asked of its items
    stored_as: str | None = None  # its row's key in the history (`record_key`), when read from there

    @property
    def setting_label(self) -> str:
        return setting_label(self.setting or {"mode": self.mode, "prompt": self.prompt_kind})

    @property
    def key(self) -> str:
        """Its key in the history: the run id, or the run id marked partial (kept beside the complete run)."""
        return self.stored_as or record_key(self.run_id, self.partial is not None)

    @property
    def partial_label(self) -> str | None:
        """`partial 150/400` for a run stopped early, else None."""
        return self.partial.label if self.partial is not None else None

    @property
    def setting_key(self) -> str:
        return setting_key(self.setting or {"mode": self.mode, "prompt": self.prompt_kind})

    def to_dict(self) -> dict[str, JsonValue]:
        """The record as `runs --json` and `history --json` print it."""
        fields: dict[str, JsonValue] = dataclasses.asdict(dataclasses.replace(self, partial=None, by_category={}, by_modality={}))
        del fields["stored_as"]  # the history's bookkeeping
        for axis in ("by_category", "by_modality"):
            fields[axis] = {k: g.model_dump(mode="json", include=set(GROUP_FIELDS)) for k, g in getattr(self, axis).items()}
        return {**fields, "setting_label": self.setting_label, "partial_label": self.partial_label,
                "partial": self.partial.model_dump(mode="json") if self.partial is not None else None}


PARTIAL_KEY = "+partial"  # a partial run's key in the history: its run id and this


def record_key(run_id: str, partial: bool) -> str:
    """A run's key in the history: a partial run (stopped early) is kept beside the complete run of its id."""
    return run_id + PARTIAL_KEY if partial else run_id


@dataclasses.dataclass(frozen=True)
class ItemScore:
    """One item's score in one run: the mean over its scored epochs."""

    item_id: str
    score: float
    n_epochs: int
    category: str | None
    modality: str | None


@dataclasses.dataclass(frozen=True)
class RunScores:
    run: RunRecord
    items: dict[str, ItemScore]


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not math.isnan(x) else None


def _group(m: MetricBlock) -> MetricBlock:
    """What the history keeps of a results block (`GROUP_FIELDS`)."""
    return _stored_group(m.n_scored, m.accuracy, m.ci_low, m.ci_high)


def _stored_group(n_scored: int | None, accuracy: object, ci_low: object, ci_high: object) -> MetricBlock:
    """A `run_groups` row as the results block it keeps (`GROUP_FIELDS`; a number that is not one as None)."""
    return MetricBlock(n_scored=n_scored or 0, accuracy=_num(accuracy), ci_low=_num(ci_low), ci_high=_num(ci_high))


def record_from_log(log: RunLog) -> RunRecord:
    """Provenance and metrics of a run read back from its directory (metrics empty if unfinished)."""
    man = log.manifest
    ds, model = man.dataset, man.model
    res = log.results
    overall = _group(res.overall) if res else None
    cost = res.cost if res else None
    return RunRecord(
        run_id=man.run_id,
        path=str(log.path.resolve()),
        model=model.spec or "?",
        dataset=ds.name or "?",
        dataset_revision=ds.revision,
        dataset_hash=ds.content_hash,
        mode=man.mode,
        prompt_kind=man.prompt_kind,
        template_hash=man.prompt_template_hash,
        extractor_version=man.extractor_version,
        started_at=man.started_at,
        finished_at=man.finished_at,
        n_scored=overall.n_scored if overall else None,
        n_errors=res.overall.n_errors if res else None,
        accuracy=overall.accuracy if overall else None,
        ci_low=overall.ci_low if overall else None,
        ci_high=overall.ci_high if overall else None,
        cost=str(cost.total) if cost else None,
        cost_per_correct=str(cost.per_correct) if cost and cost.per_correct is not None else None,
        currency=cost.currency if cost else None,
        truncated_rate=res.overall.truncated_rate if res else None,
        by_category={k: _group(v) for k, v in (res.by_category if res else {}).items()},
        by_modality={k: _group(v) for k, v in (res.by_modality if res else {}).items()},
        setting=run_setting(man),
        partial=man.partial,
    )


def counted_score(score: float | None, outcome: str, modality: str | None,
                  setting: Mapping[str, Any] | None) -> float | None:
    """A sample's score as the run's results count it (`proctor.metrics.results.summarize`): `truncated_as: excluded`
    leaves a truncated sample out (None), `no_answer: guess` credits an unanswered one 1/k; else the raw score."""
    policy = setting or {}
    if outcome == Outcome.TRUNCATED.value and policy.get("truncated_as") == "excluded":
        return None
    if outcome == Outcome.NO_ANSWER.value and policy.get("no_answer") == "guess":
        return guess_credit(modality)
    return score


def _items(rows: Iterable[tuple[str, float | None, str | None, str | None]]) -> dict[str, ItemScore]:
    """(item id, counted score, category, modality) rows → per-item scores, epochs averaged; an item with no
    counted epoch is left out."""
    acc: dict[str, list[tuple[float, str | None, str | None]]] = {}
    for item, score, category, modality in rows:
        if score is not None:
            acc.setdefault(item, []).append((score, category, modality))
    return {item: ItemScore(item, sum(x[0] for x in xs) / len(xs), len(xs), xs[0][1], xs[0][2])
            for item, xs in acc.items()}


def item_scores(samples: Iterable[Sample], setting: Mapping[str, Any] | None = None) -> dict[str, ItemScore]:
    """Per-item scores, epochs averaged, counted as the run's `setting` says (its no-answer and truncation
    policies: `counted_score`); items with no scored epoch (all errored/unscored/excluded) are left out."""
    return _items((s.item_id, counted_score(s.score, s.outcome.value, s.modality, setting), s.category, s.modality)
                  for s in samples if s.outcome in SCORED_OUTCOMES)


def scores_from_log(log: RunLog) -> RunScores:
    record = record_from_log(log)
    return RunScores(record, item_scores(log.samples, record.setting))


@dataclass
class ItemRows:
    """A run's `run_items` rows gathered from its samples streamed (from disk, for a run left there) as columns:
    the item as a code, the epoch, the (category, modality, outcome) as a code, the score (NaN: none). Gathered
    while the run is summarized (`proctor.run.finalize.results_of`), the samples are read once for both."""

    items: Labels = field(default_factory=Labels)
    epochs: array[int] = field(default_factory=lambda: array("q"))
    kinds: array[int] = field(default_factory=lambda: array("i"))
    scores: array[float] = field(default_factory=lambda: array("d"))
    kind_codes: dict[tuple[str | None, str | None, str], int] = field(default_factory=dict)

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> ItemRows:
        rows = cls()
        for s in samples:
            rows.add(s)
        return rows

    def add(self, s: Sample) -> None:
        self.items.append(s.item_id)
        self.epochs.append(s.epoch)
        kind = (s.category, s.modality, s.outcome.value)
        self.kinds.append(self.kind_codes.setdefault(kind, len(self.kind_codes)))
        scored = s.score if s.outcome in SCORED_OUTCOMES else None
        self.scores.append(math.nan if scored is None else scored)

    def rows(self, run_id: str) -> Iterator[tuple[Any, ...]]:
        kinds = list(self.kind_codes)
        for item, epoch, code, score in zip(self.items, self.epochs, self.kinds, self.scores, strict=True):
            category, modality, outcome = kinds[code]
            yield (run_id, item, epoch, category, modality, None if math.isnan(score) else score, outcome)


# ----------------------------------------------------------------------------- the store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
  key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, created_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, path TEXT NOT NULL, model TEXT NOT NULL, dataset TEXT NOT NULL,
  dataset_revision TEXT, dataset_hash TEXT, mode TEXT NOT NULL, prompt_kind TEXT, template_hash TEXT,
  extractor_version TEXT, started_at TEXT NOT NULL, finished_at TEXT, recorded_at TEXT NOT NULL,
  n_scored INTEGER, n_errors INTEGER, accuracy REAL, ci_low REAL, ci_high REAL,
  manifest TEXT NOT NULL, results TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_model_dataset ON runs (model, dataset, started_at);
CREATE INDEX IF NOT EXISTS runs_by_dataset ON runs (dataset, started_at);
CREATE TABLE IF NOT EXISTS run_groups (
  run_id TEXT NOT NULL, axis TEXT NOT NULL, name TEXT NOT NULL,
  n_scored INTEGER, accuracy REAL, ci_low REAL, ci_high REAL, PRIMARY KEY (run_id, axis, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS run_items (
  run_id TEXT NOT NULL, item_id TEXT NOT NULL, epoch INTEGER NOT NULL, category TEXT, modality TEXT,
  score REAL, outcome TEXT NOT NULL, PRIMARY KEY (run_id, item_id, epoch)
) WITHOUT ROWID;
"""
_RUN_FIELDS = (
    "run_id", "path", "model", "dataset", "dataset_revision", "dataset_hash", "mode", "prompt_kind",
    "template_hash", "extractor_version", "started_at", "finished_at", "n_scored", "n_errors", "accuracy",
    "ci_low", "ci_high",
)
_RUN_COLS = ", ".join(_RUN_FIELDS)
# read from the stored results.json (no schema change): cost and truncation (issue 15)
_DERIVED = {"cost": "$.cost.total", "cost_per_correct": "$.cost.per_correct", "currency": "$.cost.currency",
            "truncated_rate": "$.overall.truncated_rate"}
_DERIVED_COLS = ", ".join(f"json_extract(results, '{path}')" for path in _DERIVED.values())


def _is_money(value: object) -> bool:
    """A finite, non-negative amount that can be shown to the cent."""
    from decimal import InvalidOperation

    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return False
    return amount.is_finite() and amount >= 0 and amount.adjusted() < 24


def _readable_cost(fields: dict[str, Any]) -> dict[str, Any]:
    """A stored run's fields with a cost that cannot be money (recorded from a price table before tables were
    bounded: `1e999999999`, NaN, a list) dropped, with a warning naming the run: the run is shown, its cost is not."""
    bad = [k for k in ("cost", "cost_per_correct") if fields.get(k) is not None and not _is_money(fields[k])]
    currency = fields.get("currency")
    if currency is not None and not (isinstance(currency, str) and currency.isalpha() and len(currency) <= 10):
        bad.append("currency")
    if not bad:
        return fields
    import logging

    logging.getLogger("proctor.run.store").warning(
        "run %s in the history store has an unreadable cost (%s); it is shown without one", fields["run_id"],
        ", ".join(bad))
    return fields | {"cost": None, "cost_per_correct": None, "currency": None}


def _is_busy(e: sqlite3.OperationalError) -> bool:
    msg = str(e).lower()
    return "locked" in msg or "busy" in msg


class Store:
    """Request cache + run history in one SQLite file; safe to share between processes."""

    def __init__(self, path: str | Path | None = None, *, timeout: float = 30.0) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self.timeout = timeout
        self.stats = CacheStats()
        self._lock = threading.RLock()
        if self.path.is_dir():
            raise InputError.at(self.path, "is a directory; the store is a single SQLite file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.OperationalError) as e:
            raise InputError.at(self.path, f"cannot open the store: {e}") from None
        self.read_only = False
        try:
            self._retry_busy(self._setup)
        except sqlite3.DatabaseError as e:
            self._conn.close()
            if not self._on_read_only_place():
                raise InputError.at(self.path, f"not a proctor store ({e})") from None
            self._open_read_only()

    def _on_read_only_place(self) -> bool:
        """An existing store whose folder cannot be written (a read-only file system, a read-only mount)."""
        return self.path.is_file() and not os.access(self.path.parent, os.W_OK)

    def _open_read_only(self) -> None:
        """Open the store for reading only: SQLite cannot make its WAL index beside it, so it is opened as an
        immutable file (a write-ahead log left beside it is read too when it can be); writes are refused."""
        wal = self.path.with_name(self.path.name + "-wal")
        mode = "ro" if wal.is_file() and wal.stat().st_size else "ro&immutable=1"
        uri = f"{self.path.resolve().as_uri()}?mode={mode}"
        try:
            self._conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None,
                                         check_same_thread=False)
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise InputError.at(self.path, f"on a read-only file system and cannot be read there ({e}); copy it "
                                           "to a writable place") from None
        if version < SCHEMA_VERSION:
            self._conn.close()
            raise InputError.at(self.path, "not a proctor store, or one an older proctor wrote (it cannot be "
                                           "upgraded on a read-only file system)")
        self.read_only = True

    # -- plumbing

    def _setup(self) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        if c.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        if c.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            c.execute("BEGIN IMMEDIATE")
            try:
                for stmt in filter(str.strip, _SCHEMA.split(";")):
                    c.execute(stmt)
                c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise

    def _retry(self, fn: Callable[[], _T]) -> _T:
        """Run `fn` (see `_retry_busy`); a damaged or full database is one clear `InputError` with the path."""
        try:
            return self._retry_busy(fn)
        except sqlite3.DatabaseError as e:
            if self.read_only:
                raise InputError.at(self.path, "the store is on a read-only file system: it can be read, not "
                                               "written (pass --no-history, or another --store)") from None
            hint = ("the file is damaged: move it aside (the cache is rebuilt, the run history is lost) or pass "
                    "another --store" if "malformed" in str(e) or "not a database" in str(e) else "")
            raise InputError.at(self.path, f"store failed: {e}" + (f"; {hint}" if hint else "")) from None

    def _retry_busy(self, fn: Callable[[], _T]) -> _T:
        """Run `fn`, retrying on SQLITE_BUSY / "database is locked" (with jittered backoff) until timeout."""
        deadline = time.monotonic() + max(self.timeout, 1.0) * 4
        delay = 0.005
        while True:
            try:
                with self._lock:
                    return fn()
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or time.monotonic() > deadline:
                    raise
                self.stats.busy_retries += 1
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)

    def _write(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """One short write transaction, retried as a whole if the database is busy."""

        def tx() -> _T:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                out = fn(c)
                c.execute("COMMIT")
                return out
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise

        return self._retry(tx)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._retry(lambda: self._conn.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- request cache

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """Cached responses for the keys that have one; counts hits and misses."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Response] = {}
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(part))
            for key, kind, value in self._read(f"SELECT key, kind, value FROM cache WHERE key IN ({marks})", part):
                found[key] = _decode(kind, value)
        self.stats.hits += len(found)
        self.stats.misses += len(wanted) - len(found)
        return found

    def get(self, key: str) -> Response | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple[str, Response]]) -> int:
        """Cache responses; errored ones are skipped (so a re-run retries them). Returns how many were stored."""
        rows: list[tuple[str, str, str, float]] = []
        now = time.time()
        for key, response in items:
            if response.error is not None:
                self.stats.skipped_errors += 1
                continue
            kind, value = _encode(response)
            rows.append((key, kind, value, now))
        for i in range(0, len(rows), _CHUNK):
            part = rows[i : i + _CHUNK]
            self._write(lambda c, part=part: c.executemany(  # type: ignore[misc]
                "INSERT OR REPLACE INTO cache (key, kind, value, created_at) VALUES (?, ?, ?, ?)", part))
        self.stats.writes += len(rows)
        return len(rows)

    def put(self, key: str, response: Response) -> bool:
        return self.put_many([(key, response)]) == 1

    def cache_size(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM cache")[0][0])

    def clear_cache(self) -> int:
        """Delete every cached response (the run history stays). Returns how many were deleted."""
        return int(self._write(lambda c: c.execute("DELETE FROM cache").rowcount))

    # -- run history

    def record_run(self, run: str | Path | RunLog, items: ItemRows | None = None) -> RunRecord:
        """Record a finished run — a directory, or a RunLog already in memory (idempotent by run_id:
        recording it again replaces the earlier record). `items`: its samples' rows, gathered already."""
        log = run if isinstance(run, RunLog) else read_run(run)
        run_dir = log.path
        if log.results is None:
            raise InputError.at(Path(run_dir), "run has no results.json yet (unfinished?); finish it first")
        rec = record_from_log(log)
        key = rec.key

        manifest = _canonical(redact(log.manifest.model_dump(mode="json")))  # never a secret in the history
        results = _canonical(log.results.as_dict())
        groups = [
            (key, axis, name, g.n_scored, g.accuracy, g.ci_low, g.ci_high)
            for axis, table in (("category", rec.by_category), ("modality", rec.by_modality))
            for name, g in table.items()
        ]
        if items is None:  # a few bytes a sample: the transaction stays short
            items = ItemRows.of(log.iter_samples())
        gathered = items
        recorded_at = datetime.now(UTC).isoformat(timespec="seconds")

        def tx(c: sqlite3.Connection) -> None:
            for old in _replaced(c, rec):
                for table in ("runs", "run_groups", "run_items"):
                    c.execute(f"DELETE FROM {table} WHERE run_id = ?", (old,))
            c.execute(
                f"INSERT INTO runs ({_RUN_COLS}, recorded_at, manifest, results) "
                f"VALUES ({','.join('?' * 20)})",
                (key, *_record_row(rec)[1:], recorded_at, manifest, results),
            )
            c.executemany("INSERT INTO run_groups VALUES (?, ?, ?, ?, ?, ?, ?)", groups)
            c.executemany("INSERT INTO run_items VALUES (?, ?, ?, ?, ?, ?, ?)", gathered.rows(key))

        self._write(tx)
        return rec

    def _records(self, where: str = "", params: Sequence[Any] = (), order: str = "started_at DESC") -> list[RunRecord]:
        """The rows `where` selects as records: each its run id and partial mark, its key kept (`stored_as`)."""
        rows = self._read(f"SELECT {_RUN_COLS}, {_DERIVED_COLS}, manifest FROM runs {where} ORDER BY {order}, run_id",
                          params)
        if not rows:
            return []
        ids = [r[0] for r in rows]
        groups: dict[str, dict[str, dict[str, MetricBlock]]] = {i: {"category": {}, "modality": {}} for i in ids}
        for i in range(0, len(ids), _CHUNK):
            part = ids[i : i + _CHUNK]
            for run_id, axis, name, n, a, lo, hi in self._read(
                f"SELECT * FROM run_groups WHERE run_id IN ({','.join('?' * len(part))})", part
            ):
                groups[run_id].setdefault(axis, {})[name] = _stored_group(n, a, lo, hi)
        return [_row_record(r, groups[r[0]]) for r in rows]

    def list_runs(self, model: str | None = None, dataset: str | None = None) -> list[RunRecord]:
        """Recorded runs, newest first, optionally only one model's and/or one dataset's."""
        clauses, params = [], []
        if model is not None:
            clauses.append("model = ?")
            params.append(model)
        if dataset is not None:
            clauses.append("dataset = ?")
            params.append(dataset)
        return self._records(f"WHERE {' AND '.join(clauses)}" if clauses else "", params)

    def history(self, model: str, dataset: str) -> list[RunRecord]:
        """One model's runs on one dataset, oldest first (accuracy over time)."""
        return self._records("WHERE model = ? AND dataset = ?", (model, dataset), order="started_at ASC")

    def find_run(self, ref: str) -> RunRecord | None:
        """The run with this id, or the only one whose id starts with `ref` (at least 4 characters): its complete
        record, else its partial one (`ID+partial` names the partial one)."""
        exact = self._records("WHERE run_id IN (?, ?)", (ref, record_key(ref, True)))
        if exact:
            return _complete_first(exact)
        if len(ref) < 4:
            return None
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        found = self._records("WHERE run_id LIKE ? ESCAPE '\\'", (like,))
        return _complete_first(found) if len({r.run_id for r in found}) == 1 else None

    def get_run(self, ref: str) -> RunRecord:
        rec = self.find_run(ref)
        if rec is None:
            raise InputError.at(ref, f"no recorded run with this id in {self.path} (`proctor runs` lists them)")
        return rec

    def run_scores(self, ref: str) -> RunScores:
        """A recorded run with its per-item scores (epochs averaged), without reopening its directory."""
        rec = self.get_run(ref)
        rows = self._read("SELECT item_id, score, outcome, category, modality FROM run_items WHERE run_id = ? "
                          "AND outcome IN (" + ",".join("?" * len(SCORED_OUTCOMES)) + ") ORDER BY item_id, epoch",
                          (rec.key, *sorted(o.value for o in SCORED_OUTCOMES)))
        return RunScores(rec, _items((item, counted_score(score, outcome, modality, rec.setting), category, modality)
                                     for item, score, outcome, category, modality in rows))

    def latest_runs(self, dataset: str) -> list[RunRecord]:
        """The latest complete run of each model on `dataset` (a partial run is never any model's latest)."""
        latest: dict[str, RunRecord] = {}
        for rec in self._records("WHERE dataset = ?", (dataset,), order="started_at ASC"):
            if rec.partial is None:
                latest[rec.model] = rec
        return list(latest.values())


def _record_row(rec: RunRecord) -> tuple[Any, ...]:
    return tuple(getattr(rec, f) for f in _RUN_FIELDS)


def _row_record(row: Sequence[Any], groups: Mapping[str, dict[str, MetricBlock]]) -> RunRecord:
    """A `runs` row (its fields, the derived ones, its manifest) as a record; its key read as its run id."""
    fields = _readable_cost(dict(zip((*_RUN_FIELDS, *_DERIVED), row[:-1], strict=True)))
    manifest = Manifest.model_validate_json(row[-1])
    key = fields["run_id"]
    return RunRecord(**{**fields, "run_id": key.removesuffix(PARTIAL_KEY)}, by_category=groups["category"],
                     by_modality=groups["modality"], setting=run_setting(manifest), partial=manifest.partial,
                     stored_as=key)


def _replaced(c: sqlite3.Connection, rec: RunRecord) -> list[str]:
    """The history keys recording `rec` replaces: its own; for a complete run, also the partial record of the same
    directory (the run finished since it stopped). A complete run is never replaced by a partial one."""
    if rec.partial is not None:
        return [rec.key]
    partial = record_key(rec.run_id, True)
    same_dir = c.execute("SELECT 1 FROM runs WHERE run_id = ? AND path = ?", (partial, rec.path)).fetchone()
    return [rec.key, *([partial] if same_dir else [])]


def _complete_first(records: Sequence[RunRecord]) -> RunRecord:
    """Of one run id's records, the complete run's, else the partial one."""
    return min(records, key=lambda r: r.partial is not None)


def load_run_scores(ref: str | Path, store: Store | None = None) -> RunScores:
    """A run given as a run directory, or as a (prefix of a) run id recorded in `store`."""
    p = Path(ref)
    if p.is_dir():
        return scores_from_log(read_run(p))
    if store is not None:
        rec = store.find_run(str(ref))
        if rec is not None:
            return store.run_scores(rec.run_id)
    where = f" nor a run id recorded in {store.path}" if store is not None else ""
    raise InputError.at(str(ref), f"not a run directory{where}")


__all__ = [
    "GROUP_FIELDS",
    "CacheStats",
    "ItemRows",
    "ItemScore",
    "RunRecord",
    "RunScores",
    "Store",
    "counted_score",
    "default_store_path",
    "item_scores",
    "load_run_scores",
    "model_identity",
    "record_from_log",
    "record_key",
    "request_key",
    "scores_from_log",
]
