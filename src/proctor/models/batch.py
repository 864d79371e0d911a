"""Provider batch APIs, the shared part: request ids, the state file, submit / poll / collect.

A batch backend (`batch_openai.py`, `batch_anthropic.py`) sends a run's requests as one or more provider
batches (half price, results within 24 hours). Every batch id is written to `batches.json` in the run
directory the moment the provider accepts it, so a proctor that is killed and started again polls the
batches it already paid for instead of submitting them twice. Requests carry a `custom_id` derived from
their content (model, messages, settings, and the occurrence of identical requests), which is how a
restarted run recognises its own requests in the state file.

Outcomes are Generation records as with every backend: a request that failed inside the batch, expired
with it or was cancelled comes back with `error` set (and is submitted again by the next run, in a new
batch); a batch still running when `max_wait` is reached comes back as errors that say so, and the next
run goes on polling it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

from ..core.model import GenerateRequest, Generation
from ..core.rundir import PAID_STATE
from ..util.errors import InputError, ProctorError
from ..util.redact import redact_text
from ..util.textio import read_json_record
from ._http import CREDENTIAL_HEADERS, HTTPBackend, redacted
from .batch_http import BatchHTTP, jsonl_lines
from .tool_names import named_back

log = logging.getLogger("proctor.models.batch")

STATE_FILE = PAID_STATE  # never removed with a failed run's directory (runlock)
STATE_VERSION = 1
SUBMITTING = "submitting"


def request_ids(model: str, requests: Sequence[GenerateRequest]) -> list[str]:
    """A stable `custom_id` per request (valid for both providers: [A-Za-z0-9_-], at most 64 characters)."""
    seen: Counter[str] = Counter()
    ids = []
    for r in requests:
        canonical = json.dumps({"model": model, **r.as_dict()}, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:40]
        ids.append(f"{digest}-{seen[digest]}")
        seen[digest] += 1
    return ids


@dataclass
class BatchJob:
    """One provider batch, as recorded in the state file."""

    provider: str  # "openai" | "anthropic"
    batch_id: str
    custom_ids: list[str]
    submitted_at: float
    status: str = "submitted"
    ended: bool = False
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    results_url: str | None = None
    failed_ids: list[str] = field(default_factory=list)  # collected with an error: the next run resubmits them
    detail: str | None = None  # why the provider refused the whole batch, when it did
    submission: str | None = None  # the key sent with the batch (OpenAI metadata) to find it after a kill

    @property
    def submitting(self) -> bool:
        """Recorded before submission, not yet confirmed: the provider may or may not hold it."""
        return self.status == SUBMITTING

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BatchJob:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class BatchState:
    """The run directory's `batches.json`: every batch submitted for the run, written atomically."""

    def __init__(self, path: Path, jobs: list[BatchJob]) -> None:
        self.path = path
        self.jobs = jobs

    @classmethod
    def load(cls, path: Path) -> BatchState:
        if not path.exists():
            return cls(path, [])
        try:
            data = read_json_record(path)  # bounded: a FIFO, a huge or deep file is refused, never waited on
            jobs = [BatchJob.from_dict(j) for j in data["jobs"]]
        except (OSError, ValueError, KeyError, TypeError, InputError) as e:
            why = e.problems[0].message if isinstance(e, InputError) else f"{type(e).__name__}: {e}"
            raise InputError.at(path, f"unreadable batch state ({why}); it lists batches "
                                      "already paid for: repair it rather than deleting it") from None
        return cls(path, jobs)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        payload = json.dumps({"version": STATE_VERSION, "jobs": [asdict(j) for j in self.jobs]}, indent=1)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def covering(self, ids: Sequence[str]) -> tuple[list[BatchJob], list[str]]:
        """The recorded batches that hold some of `ids` (not as failures), and the ids no batch holds."""
        wanted = set(ids)
        jobs, covered = [], set()
        for job in self.jobs:
            held = (set(job.custom_ids) - set(job.failed_ids)) & wanted
            if held:
                jobs.append(job)
                covered |= held
        return jobs, [i for i in ids if i not in covered]


class BatchProvider(Protocol):
    """One provider's batch protocol."""

    name: str
    max_requests: int  # per batch

    async def submit(self, items: Sequence[tuple[str, GenerateRequest]], submission: str) -> BatchJob: ...

    async def recover(self, intent: BatchJob) -> BatchJob | None:
        """The batch submitted for `intent` (recorded before a submission that was cut off), if the
        provider has it; None when it does not (or cannot tell)."""
        ...

    async def poll(self, job: BatchJob) -> None:
        """Refresh `job.status` (and `job.ended`, file ids, results URL) from the provider."""
        ...

    async def collect(self, job: BatchJob) -> Collected:
        """Results of an ended batch, every line as it came (a custom_id twice is flagged by the caller)."""
        ...


@dataclass
class Collected:
    """What a batch's results files held: (custom_id, outcome) per line, and the lines no request owns."""

    results: list[tuple[str, Generation]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def read(self, f: IO[bytes], what: str, outcome: Callable[[dict[str, Any]], Generation]) -> None:
        """Every line of the JSONL `f`: `outcome(line)` for a line naming its custom_id, else a problem."""
        for line in jsonl_lines(f):
            cid = line.custom_id
            if line.problem is None:
                value = line.value
                cid = value.get("custom_id") if isinstance(value, dict) else None
                if isinstance(cid, str) and cid:
                    self.results.append((cid, outcome(value)))
                    continue
                self.problems.append(f"{what} line {line.number}: no custom_id")
            elif cid is not None:
                self.results.append((cid, Generation(error=f"{what} line {line.number}: {line.problem}")))
            else:
                self.problems.append(f"{what} line {line.number}: {line.problem}")


@dataclass(frozen=True)
class BatchOptions:
    state_path: Path
    poll_interval: float = 30.0  # seconds between status requests
    max_wait: float = 24 * 3600.0  # give up waiting (the batch keeps running; the next run picks it up)


class BatchBackend:
    """What a batch backend adds to its online model: the state file in the run directory, and `generate`
    through `run_batched`. Mixed in before the online model's class."""

    preferred_chunk_size = 100_000  # the runner should hand over the whole run: one batch, not many
    model: str
    batches: BatchProvider
    options: BatchOptions | None = None
    http: HTTPBackend
    _urls: list[str]
    _request_headers: dict[str, str]

    def _batch_http(self, seed: int) -> BatchHTTP:
        """The batch calls' client: the online model's base URL (query kept) and key (user info included),
        the key sent only to that origin."""
        creds = {k: v for k, v in self._request_headers.items() if k.lower() in CREDENTIAL_HEADERS}
        plain = {k: v for k, v in self._request_headers.items() if k.lower() not in CREDENTIAL_HEADERS}
        return BatchHTTP(self._urls[0], plain, self.http.policy, seed, credentials=creds)

    def _use_batches(self, provider: BatchProvider, state_dir: str | Path | None, poll_interval: float,
                     max_wait: float) -> None:
        self.batches = provider
        self.poll_interval, self.max_wait = poll_interval, max_wait
        if state_dir is not None:
            self.use_run_dir(Path(state_dir))

    def use_run_dir(self, run_dir: Path) -> None:
        """Keep the batch state (`batches.json`) in `run_dir`: a killed run finds its batches there."""
        self.options = BatchOptions(run_dir / STATE_FILE, self.poll_interval, self.max_wait)

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        if self.options is None:
            raise ProctorError("a batch model needs a state directory (the run directory) before it runs")
        return await run_batched(requests, self.model, self.batches, self.options)


async def run_batched(requests: Sequence[GenerateRequest], model: str, provider: BatchProvider,
                      options: BatchOptions) -> list[Generation]:
    """Submit what no recorded batch holds, poll every batch until it ends, return Generations in order."""
    ids = request_ids(model, requests)
    by_id = dict(zip(ids, requests, strict=True))
    state = BatchState.load(options.state_path)
    for intent in [j for j in state.jobs if j.submitting]:
        await _settle_intent(intent, provider, state)
    jobs, todo = state.covering(ids)
    if jobs:
        log.info("resuming %d recorded batch(es) from %s", len(jobs), options.state_path)
    results: dict[str, Generation] = {}
    for start in range(0, len(todo), provider.max_requests):
        chunk = todo[start:start + provider.max_requests]
        try:
            job = await _submit(provider, state, [(cid, by_id[cid]) for cid in chunk])
        except ProctorError as e:  # nothing was accepted: these requests are error records, nothing is lost
            results |= {cid: Generation(error=f"batch not submitted: {e}") for cid in chunk}
            continue
        jobs.append(job)
        log.info("submitted %s batch %s (%d requests)", provider.name, job.batch_id, len(chunk))
    why: dict[str, str] = {}  # batch id -> why its results are not here
    for job in await _wait(jobs, provider, state, options, why):
        try:
            results |= await _collect(job, provider, state, set(ids))
        except ProctorError as e:
            why[job.batch_id] = f"its results could not be read ({e})"
            log.warning("could not read the results of %s batch %s (%s); the next run reads them again",
                        provider.name, job.batch_id, redact_text(str(e)))
    return [redacted(_named_back(results.get(cid), by_id[cid]) or _missing(cid, jobs, options, why)) for cid in ids]


def _named_back(g: Generation | None, r: GenerateRequest) -> Generation | None:
    """A result's tool calls with the names the request offered (a results line is read without its request)."""
    return replace(g, tool_calls=named_back(g.tool_calls, r.tools)) if g is not None and g.tool_calls else g


async def _submit(provider: BatchProvider, state: BatchState, items: list[tuple[str, GenerateRequest]]) -> BatchJob:
    """Record the intent, submit, record the batch: a kill at any point leaves a state the next run settles,
    and ctrl-C waits for the submission under way so that a batch the provider accepted is always recorded."""
    ids = [cid for cid, _ in items]
    key = f"{hashlib.sha256(chr(10).join(ids).encode()).hexdigest()[:32]}-{secrets.token_hex(8)}"  # one per submission
    intent = BatchJob(provider.name, "", ids, time.time(), status=SUBMITTING, submission=key)
    state.jobs.append(intent)
    state.save()
    submitting = asyncio.ensure_future(provider.submit(items, key))
    interrupted = await _finish_despite_ctrl_c(submitting, provider.name)
    try:
        job = submitting.result()
    except ProctorError:
        found = await _recover_quietly(provider, intent)  # it may have been accepted before the error
        if found is None:
            state.jobs.remove(intent)
            state.save()
            if interrupted:
                raise asyncio.CancelledError from None
            raise
        job = found
    state.jobs[state.jobs.index(intent)] = job
    state.save()
    if interrupted:  # recorded: now the interruption goes on, and the resume polls this batch
        raise asyncio.CancelledError
    return job


async def _finish_despite_ctrl_c(task: asyncio.Future[BatchJob], provider: str) -> bool:
    """Wait for `task` to end even when ctrl-C cancels the run meanwhile; whether it did (a second ctrl-C
    raises KeyboardInterrupt and abandons the submission: the next run settles it from the recorded intent)."""
    interrupted = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not interrupted:
                log.warning("interrupted while submitting a %s batch: waiting for the provider's answer so the "
                            "batch is recorded, not paid for twice (ctrl-C again to abandon it)", provider)
            interrupted = True
        except BaseException:  # noqa: BLE001 - the task's own failure: read from task.result() by the caller
            break
    return interrupted


async def _recover_quietly(provider: BatchProvider, intent: BatchJob) -> BatchJob | None:
    try:
        return await provider.recover(intent)
    except ProctorError as e:
        log.warning("%s batch submission failed and the provider could not be asked whether it was accepted "
                    "(%s); its requests are error records and the next run submits them", provider.name,
                    redact_text(str(e)))
        return None


async def _settle_intent(intent: BatchJob, provider: BatchProvider, state: BatchState) -> None:
    """A submission a previous run began but never confirmed: adopt the provider's batch, or forget it."""
    try:
        found = await provider.recover(intent)
    except ProctorError as e:
        raise ProctorError(f"{state.path}: a batch submission was cut off and the provider could not be asked "
                           f"whether it holds it ({redact_text(str(e))}); run again when it answers") from None
    if found is None:
        log.warning("%s: a %s batch submission was cut off and the provider has no such batch; its %d requests "
                    "will be submitted again", state.path, provider.name, len(intent.custom_ids))
        state.jobs.remove(intent)
    else:
        log.info("%s: found the %s batch %s of a cut-off submission", state.path, provider.name, found.batch_id)
        state.jobs[state.jobs.index(intent)] = found
    state.save()


MAX_POLL_FAILURES = 10  # failed status requests in a row (each already retried) before this run stops polling a batch


async def _wait(jobs: list[BatchJob], provider: BatchProvider, state: BatchState, options: BatchOptions,
                why: dict[str, str]) -> list[BatchJob]:
    """Poll until every job has ended, `max_wait` passes or a job's status stays unreadable; the jobs that ended."""
    deadline = time.monotonic() + options.max_wait
    failures: Counter[str] = Counter()
    while True:
        for job in jobs:
            if not job.ended and failures[job.batch_id] < MAX_POLL_FAILURES:
                await _poll(job, provider, state, failures, why)
        pending = [j for j in jobs if not j.ended and failures[j.batch_id] < MAX_POLL_FAILURES]
        if not pending or time.monotonic() + options.poll_interval > deadline:
            return [j for j in jobs if j.ended]
        await asyncio.sleep(options.poll_interval)


async def _poll(job: BatchJob, provider: BatchProvider, state: BatchState, failures: Counter[str],
                why: dict[str, str]) -> None:
    before = job.status
    try:
        await provider.poll(job)
    except ProctorError as e:  # retried already; try again at the next poll
        failures[job.batch_id] += 1
        why[job.batch_id] = f"its status could not be read {failures[job.batch_id]} time(s) in a row ({e})"
        level = logging.WARNING if failures[job.batch_id] in (1, MAX_POLL_FAILURES) else logging.INFO
        log.log(level, "polling %s batch %s failed (%d in a row): %s", provider.name, job.batch_id,
                failures[job.batch_id], redact_text(str(e)))
        return
    failures[job.batch_id] = 0
    why.pop(job.batch_id, None)
    if job.status != before:
        log.info("%s batch %s: %s", provider.name, job.batch_id, job.status)
        state.save()


async def _collect(job: BatchJob, provider: BatchProvider, state: BatchState, wanted: set[str]) -> dict[str, Generation]:
    """The outcome of every request of an ended batch: a custom_id answered twice is an error, never last-wins."""
    got = await provider.collect(job)
    times = Counter(cid for cid, _ in got.results)
    out: dict[str, Generation] = {}
    for cid, gen in got.results:
        out[cid] = gen if times[cid] == 1 else Generation(
            error=f"{provider.name} batch {job.batch_id} holds {times[cid]} results for this request; none is scored")
    unread = f" ({len(got.problems)} unreadable result line(s), first {got.problems[0]})" if got.problems else ""
    for cid in job.custom_ids:
        if cid not in out:
            out[cid] = Generation(error=f"{provider.name} batch {job.batch_id} ended '{job.status}' without a result "
                                        f"for this request{unread}; the next run submits it again")
    failed = sorted(cid for cid, g in out.items() if g.error is not None and cid in job.custom_ids)
    if failed != sorted(job.failed_ids):
        job.failed_ids = failed
        state.save()
    return {cid: g for cid, g in out.items() if cid in wanted}


def _missing(cid: str, jobs: list[BatchJob], options: BatchOptions, why: dict[str, str]) -> Generation:
    job = next((j for j in jobs if cid in j.custom_ids and cid not in j.failed_ids), None)
    where = f"batch {job.batch_id} is '{job.status}'" if job else "no batch holds it"
    if job is not None and job.batch_id in why:
        where += f" and {why[job.batch_id]}"
    return Generation(error=f"no result yet: {where}; run again to pick it up (recorded in {options.state_path})")
