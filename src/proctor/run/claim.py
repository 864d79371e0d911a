"""Claims registered before a run: what a run must show, fixed and signed before anything is asked.

`proctor claim` resolves a spec as `proctor run` would (its data loaded, the benchmark's defaults applied, nothing
asked) and writes CLAIM.json: the data's content hash, the resolved spec's run id, the metric, the comparison (the
metric at least a threshold, or no worse than a baseline run by more than a drop), α, the baseline's id and the
checksums of its files, and the time, with an Ed25519 signature (`proctor keygen`'s keys, as `proctor sign`'s).
`run --claim` refuses to start a run whose run id or data differ and records the claim's hash in the manifest;
`proctor verify RUN --claim` answers:

* TAMPERED — the claim file was edited (its hash or signature no longer holds), the run's files changed since it
  finished (samples, results, manifest: `proctor.run.verify`), the data changed, the run's settings are not the
  claim's, the run began under another claim, the claim was written after the run began, or the baseline changed;
* PASS — the whole interval clears the bound: accuracy's 95% interval in results.json at or above the threshold,
  or the paired interval of run − baseline (Tango's score interval for 0/1 scores, a paired bootstrap for graded
  ones, at level 1 − α) at or above −drop;
* FAIL — the whole interval is below the bound;
* INCONCLUSIVE — the interval straddles the bound (or holds no value), or samples errored (left out of it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.results import MetricBlock, MetricValue, Results
from ..core.spec import RunSpec, canonical_json
from ..data.tasks import Task
from ..log.checksums import CHECKSUMS
from ..log.provenance import ClaimRecord
from ..log.runlog import RESULTS, IsoTime, Manifest, read_manifest
from ..metrics.results import read_run
from ..stats.comparison import graded_interval, tango_interval
from ..stats.intervals import normal_quantile
from ..util.errors import InputError, ProctorError, brief
from ..util.textio import read_bytes, read_json_record
from .store import RunScores, scores_from_log
from .verify import sign_bytes, signed_by, unchanged, verify_run

FORMAT: Literal["proctor-claim/1"] = "proctor-claim/1"
RESULTS_ALPHA = 0.05  # results.json's intervals are 95%: a threshold claim is decided on them
Comparison = Literal["at_least", "no_worse_than"]


class Answer(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    TAMPERED = "TAMPERED"


EXIT_CODES = {Answer.PASS: 0, Answer.FAIL: 1, Answer.INCONCLUSIVE: 3, Answer.TAMPERED: 4}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class BaselineRef(_Strict):
    """The run a `no_worse_than` claim compares against, as it was when the claim was written."""

    run_id: str
    path: str  # its directory, absolute
    results_sha256: str
    checksums_sha256: str


class ClaimBody(_Strict):
    """What is claimed: the run (its id and data), the metric, the comparison and its bound, α, and when."""

    format: Literal["proctor-claim/1"] = FORMAT
    dataset: str
    content_hash: str
    run_id: str
    model: str
    metric: str = "accuracy"
    comparison: Comparison
    threshold: float = Field(ge=0, le=1)  # at_least: the metric's least value (a proportion); no_worse_than: the drop
    alpha: float = Field(gt=0, lt=0.5)
    baseline: BaselineRef | None = None
    written_at: IsoTime  # UTC, microseconds

    @model_validator(mode="after")
    def _baseline_iff_compared(self) -> ClaimBody:
        if (self.comparison == "no_worse_than") != (self.baseline is not None):
            raise ValueError("baseline: a no_worse_than claim has one, an at_least claim none")
        return self

    def sha256(self) -> str:
        """The hash of the claim's canonical JSON: what `run --claim` records and the claim file carries."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()

    def text(self) -> str:
        """"accuracy ≥ 70.0% (α 0.05)" or "accuracy no worse than run 3f2a… by more than 2.0 points (α 0.05)"."""
        if self.comparison == "at_least":
            return f"{self.metric} ≥ {100 * self.threshold:.1f}% (α {self.alpha:g})"
        base = self.baseline.run_id if self.baseline is not None else "?"
        return f"{self.metric} no worse than run {base} by more than {100 * self.threshold:.1f} points (α {self.alpha:g})"


class ClaimFile(_Strict):
    """CLAIM.json: the claim, its hash and (with a key) its Ed25519 signature over that hash's input."""

    claim: ClaimBody
    sha256: str
    signature: dict[str, str] | None = None


@dataclass(frozen=True)
class Terms:
    """What `proctor claim` is asked to claim: the metric, the comparison, its bound (a proportion), α, a baseline."""

    comparison: Comparison
    threshold: float
    metric: str = "accuracy"
    alpha: float = RESULTS_ALPHA
    baseline: Path | None = None


# ---------------------------------------------------------------- writing a claim


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _check_terms(terms: Terms) -> None:
    if not 0 < terms.alpha < 0.5:
        raise ProctorError(f"--alpha must be between 0 and 0.5, got {terms.alpha:g}")
    if terms.comparison == "at_least":
        if terms.baseline is not None:
            raise ProctorError("--at-least and --no-worse-than: give one comparison")
        if abs(terms.alpha - RESULTS_ALPHA) > 1e-12:
            raise ProctorError(f"--alpha {terms.alpha:g}: a threshold claim is decided on results.json's 95% interval "
                               "(α 0.05); other levels: a claim against a --baseline")
        if not 0 <= terms.threshold <= 1:
            raise ProctorError(f"--at-least must be between 0 and 100 percent, got {100 * terms.threshold:g}")
        return
    if terms.baseline is None:
        raise ProctorError("a claim against a baseline needs one: --no-worse-than RUN")
    if terms.metric != "accuracy":
        raise ProctorError(f"--metric {terms.metric}: a claim against a baseline compares accuracy on shared items")
    if not 0 <= terms.threshold < 1:
        raise ProctorError(f"--allowed-drop must be between 0 and 100 points, got {100 * terms.threshold:g}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def baseline_ref(run_dir: Path, content_hash: str) -> BaselineRef:
    """A finished, unchanged baseline run on the same data, as the claim records it."""
    why = unchanged(run_dir)
    if why is not None:
        raise InputError.at(run_dir, f"baseline: {why}")
    manifest = read_manifest(run_dir)
    if manifest.dataset.content_hash != content_hash:
        raise InputError.at(run_dir, f"baseline: ran on other data (content hash {manifest.dataset.content_hash}, "
                                     f"the claim's {content_hash})")
    return BaselineRef(run_id=manifest.run_id, path=str(run_dir.resolve()), results_sha256=_sha256(run_dir / RESULTS),
                       checksums_sha256=_sha256(run_dir / CHECKSUMS))


def make_claim(spec: RunSpec, task: Task, terms: Terms) -> ClaimBody:
    """The claim about the run of resolved `spec` on `task` (its data), written now."""
    _check_terms(terms)
    if not spec.resolved or task.content_hash is None:
        raise ProctorError("internal: a claim is made of a resolved spec and its loaded data")
    base = baseline_ref(terms.baseline, task.content_hash) if terms.baseline is not None else None
    if base is not None and base.run_id == spec.run_id():
        raise InputError.at(terms.baseline or "--no-worse-than", f"baseline: run {base.run_id[:12]} is the claimed "
                            "run's own id (the same model and settings): a claim against itself decides nothing")
    return ClaimBody(dataset=task.name, content_hash=task.content_hash, run_id=spec.run_id(), model=spec.model.spec,
                     metric=terms.metric, comparison=terms.comparison, threshold=terms.threshold, alpha=terms.alpha,
                     baseline=base, written_at=_now())


def write_claim(path: str | Path, body: ClaimBody, key: str | Path | None = None) -> Path:
    """CLAIM.json at `path` (never over an existing file), signed with the Ed25519 key at `key` when given."""
    p = Path(path)
    if p.exists():
        raise InputError.at(p, "exists already: a claim is registered once (remove it to register another)")
    digest = body.sha256()
    signature = sign_bytes(digest.encode(), key) if key is not None else None
    data = ClaimFile(claim=body, sha256=digest, signature=signature).model_dump(mode="json", exclude_none=True)
    try:  # created, never replaced: a second `proctor claim -o` of the same path at the same moment is refused
        with open(p, "x", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except FileExistsError:
        raise InputError.at(p, "exists already: a claim is registered once (remove it to register another)") from None
    return p


# ---------------------------------------------------------------- reading one


@dataclass(frozen=True)
class Loaded:
    """A claim file read back: its claim, and what is wrong with it (None: its hash and signature hold)."""

    body: ClaimBody
    sha256: str  # the body's own hash, recomputed
    signer: str | None
    problem: str | None

    def record(self) -> ClaimRecord:
        """What `run --claim` keeps in the manifest."""
        return ClaimRecord(sha256=self.sha256, written_at=self.body.written_at, signer=self.signer)


def read_claim(path: str | Path, public_key: str | Path | None = None) -> Loaded:
    """CLAIM.json read within bounds; not a claim at all is bad input (exit 2), an edited one a `problem`."""
    p = Path(path)
    data = read_json_record(p)
    try:
        claim = ClaimFile.model_validate(data)
    except ValidationError as e:
        raise InputError.at(p, f"not a {FORMAT} claim ({brief(e)})") from None
    digest = claim.claim.sha256()
    if digest != claim.sha256:
        return Loaded(claim.claim, digest, None, f"{p}: edited after it was written (its claim hashes to "
                                                 f"{digest[:16]}…, the file records {claim.sha256[:16]}…)")
    if claim.signature is None:
        problem = f"{p}: unsigned, and a signer's key was given" if public_key is not None else None
        return Loaded(claim.claim, digest, None, problem)
    try:
        signer = signed_by(claim.signature, digest.encode(), public_key)
    except ValueError as e:
        return Loaded(claim.claim, digest, None, f"{p}: signature {e}")
    return Loaded(claim.claim, digest, signer, None)


def check_before_run(loaded: Loaded, spec: RunSpec, task: Task, where: str | Path) -> None:
    """Refuse a run under a claim whose data or settings are not this run's (exit 2, one line)."""
    if loaded.problem is not None:
        raise ProctorError(f"--claim: {loaded.problem}")
    claim = loaded.body
    if task.content_hash != claim.content_hash:
        raise InputError.at(where, f"the data has content hash {task.content_hash}, the claim's {claim.content_hash}: "
                                   "the data changed since the claim was written")
    if spec.run_id() != claim.run_id:
        raise InputError.at(where, f"this run's id is {spec.run_id()}, the claim's {claim.run_id}: its settings "
                                   "differ from the claim's (`proctor claim` with these options shows the id)")


# ---------------------------------------------------------------- verifying a run against one


class Verdict(BaseModel):
    """`verify --claim`'s answer, its reason, and the numbers it was decided on."""

    answer: Answer
    reason: str
    claim: ClaimBody
    claim_sha256: str
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    bound: float | None = None  # the interval's side must clear it: the threshold, or −drop
    signer: str | None = None
    notes: list[str] = []

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.answer]


@dataclass(frozen=True)
class Check:
    """How to verify: the run's signer's key, the claim's signer's key, the baseline's directory if it moved."""

    public_key: Path | None = None
    claim_key: Path | None = None
    baseline: Path | None = None


def _tampered_run(run_dir: Path, loaded: Loaded, check: Check, notes: list[str]) -> str | None:
    """The first way the run is not the one claimed, or was changed (None: it is, unchanged)."""
    claim = loaded.body
    found = verify_run(run_dir, check.public_key)
    notes += found.notes
    if found.problems:
        return found.problems[0]
    manifest = read_manifest(run_dir)
    if manifest.dataset.content_hash != claim.content_hash:
        return (f"data: the run evaluated content hash {manifest.dataset.content_hash}, the claim "
                f"{claim.content_hash}")
    if manifest.run_id != claim.run_id or (manifest.spec is not None and manifest.spec.run_id() != claim.run_id):
        return f"spec: the run's id is {manifest.run_id}, the claim's {claim.run_id} (its settings differ)"
    return _order(manifest, loaded, notes)


def _order(manifest: Manifest, loaded: Loaded, notes: list[str]) -> str | None:
    """Whether the claim came first: the claim the run recorded, else the claim's time against the run's start."""
    recorded = manifest.claim
    if recorded is not None:
        if recorded.sha256 != loaded.sha256:
            return (f"claim: the run began under another claim ({recorded.sha256[:16]}…, written "
                    f"{recorded.written_at}), not this one ({loaded.sha256[:16]}…)")
        return None
    written = datetime.fromisoformat(loaded.body.written_at)
    started = datetime.fromisoformat(manifest.started_at)  # to the second: a claim in that second is not before it
    if written.tzinfo is None or started.tzinfo is None or written >= started:
        return (f"claim: written {loaded.body.written_at}, after the run began ({manifest.started_at}, to the "
                "second); a claim is registered before the run (`run --claim` records it)")
    notes.append("the run was not started under --claim: that the claim came first rests on its own time "
                 f"({loaded.body.written_at}, the run began {manifest.started_at})")
    return None


def _tampered_baseline(ref: BaselineRef, where: Path) -> str | None:
    if not where.is_dir():
        return f"baseline: {where} is not a run directory (give --baseline where it is now)"
    why = unchanged(where)
    if why is not None:
        return f"baseline: {why}"
    if read_manifest(where).run_id != ref.run_id:
        return f"baseline: {where} holds run {read_manifest(where).run_id}, the claim's baseline is {ref.run_id}"
    if _sha256(where / RESULTS) != ref.results_sha256 or _sha256(where / CHECKSUMS) != ref.checksums_sha256:
        return f"baseline: {where}'s results changed since the claim was written"
    return None


def _metric(results: Results | None, name: str) -> MetricBlock | MetricValue | None:
    if results is None:
        return None
    if name == "accuracy":
        return results.overall
    if name == "acc_norm":
        return results.acc_norm
    return results.metrics.get(name)


def _value(m: MetricBlock | MetricValue) -> float | None:
    return m.accuracy if isinstance(m, MetricBlock) else m.value


def decide(lo: float, hi: float, bound: float) -> Answer:
    """PASS when the whole interval is at or above `bound`, FAIL when it is all below, else INCONCLUSIVE."""
    if lo >= bound:
        return Answer.PASS
    if hi < bound:
        return Answer.FAIL
    return Answer.INCONCLUSIVE


def _paired(cand: RunScores, base: RunScores, alpha: float) -> tuple[float, float, float] | None:
    """run − baseline on shared items with its interval at level 1 − α; None when they share none."""
    shared = sorted(cand.items.keys() & base.items.keys())
    if not shared:
        return None
    c = np.array([cand.items[i].score for i in shared])
    b = np.array([base.items[i].score for i in shared])
    if np.isin(c, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        b10, b01 = int(np.sum((c == 1) & (b == 0))), int(np.sum((c == 0) & (b == 1)))
        lo, hi = tango_interval(b10, b01, c.size, z=normal_quantile(1 - alpha / 2))
    else:
        lo, hi = graded_interval(c - b, 2000, 0, 1 - alpha)
    return float(c.mean() - b.mean()), lo, hi


def _judged(run_dir: Path, loaded: Loaded, baseline: Path | None) -> Verdict:
    claim = loaded.body
    out = Verdict(answer=Answer.INCONCLUSIVE, reason="", claim=claim, claim_sha256=loaded.sha256, signer=loaded.signer)
    log = read_run(run_dir)
    if log.manifest.partial is not None:
        out.reason = ("the run stopped early (--stop-when-decided): a fixed-sample interval does not hold on the "
                      "items it asked; verify the complete run")
        return out
    base_log = read_run(baseline) if claim.comparison == "no_worse_than" and baseline is not None else None
    errored = sum(r.results.overall.n_errors for r in (log, base_log) if r is not None and r.results is not None)
    if errored:  # an interval over the samples that answered leaves them out: a model's wrong answers, errored
        out.reason = (f"{errored:,} sample(s) errored{' (run and baseline)' if base_log is not None else ''}: "
                      "an interval over the rest leaves them out; ask them again (the same run command) and verify")
        return out
    if base_log is not None:
        got = _paired(scores_from_log(log), scores_from_log(base_log), claim.alpha)
        out.bound = -claim.threshold
        if got is None:
            out.reason = "the run and the baseline share no scored items"
            return out
        out.estimate, out.ci_low, out.ci_high = got
        what = f"run − baseline {100 * got[0]:+.1f} points, {100 * (1 - claim.alpha):g}% interval " \
               f"[{100 * got[1]:+.1f}, {100 * got[2]:+.1f}] vs the allowed drop −{100 * claim.threshold:.1f}"
    else:
        m = _metric(log.results, claim.metric)
        value = _value(m) if m is not None else None
        out.bound = claim.threshold
        if m is None or value is None or m.ci_low is None or m.ci_high is None:
            out.reason = f"results.json holds no interval for {claim.metric}"
            return out
        out.estimate, out.ci_low, out.ci_high = value, m.ci_low, m.ci_high
        what = f"{claim.metric} {100 * value:.1f}%, 95% interval [{100 * m.ci_low:.1f}, {100 * m.ci_high:.1f}] vs " \
               f"the threshold {100 * claim.threshold:.1f}%"
    out.answer = decide(out.ci_low, out.ci_high, out.bound)
    side = {Answer.PASS: "the whole interval clears it", Answer.FAIL: "the whole interval is below it",
            Answer.INCONCLUSIVE: "the interval straddles it"}[out.answer]
    out.reason = f"{what}: {side}"
    return out


def verify_claim(run_dir: str | Path, claim_path: str | Path, check: Check = Check()) -> Verdict:
    """PASS, FAIL, INCONCLUSIVE or TAMPERED, with the reason (see the module doc)."""
    d = Path(run_dir)
    if not (d / "manifest.json").is_file():
        raise InputError.at(d, "not a run directory (no manifest.json)")
    loaded = read_claim(claim_path, check.claim_key)
    notes: list[str] = []
    baseline = check.baseline or (Path(loaded.body.baseline.path) if loaded.body.baseline is not None else None)
    why = loaded.problem or _tampered_run(d, loaded, check, notes)
    if why is None and loaded.body.baseline is not None and baseline is not None:
        why = _tampered_baseline(loaded.body.baseline, baseline)
    if why is not None:
        return Verdict(answer=Answer.TAMPERED, reason=why, claim=loaded.body, claim_sha256=loaded.sha256,
                       signer=loaded.signer, notes=notes)
    if loaded.signer is None:
        notes.append(f"{claim_path}: unsigned: anyone could have written it (sign with `proctor claim --key`)")
    verdict = _judged(d, loaded, baseline)
    verdict.notes = notes
    return verdict


__all__ = ["EXIT_CODES", "FORMAT", "Answer", "BaselineRef", "Check", "ClaimBody", "ClaimFile", "Loaded", "Terms",
           "Verdict", "check_before_run", "decide", "make_claim", "read_claim", "verify_claim", "write_claim"]
