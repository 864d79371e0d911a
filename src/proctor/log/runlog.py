"""The run log — the product of every run, readable without a model.

A run directory holds:
* `manifest.json` — what produced the run (never a secret);
* `samples.jsonl` — one `Sample` per line, appended as each finishes;
* `prompts.jsonl` — the heads the prompts share (a few-shot block), stored once (`proctor.log.prompts`);
* `results.json` — the metrics, a pure function of the samples (`proctor.metrics.results.summarize`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from itertools import islice
from pathlib import Path
from typing import IO, Annotated, Any, BinaryIO, Literal, overload

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..core.money import Money, recorded_money
from ..core.results import Results
from ..core.spec import GenerationSpec, RunSpec
from ..core.trajectory import Trajectory
from ..util.errors import InputError, ProctorError, brief
from ..util.limits import check_json_depth, max_line_bytes
from ..util.redact import redact
from ..util.textio import open_checked, read_record_text, refuse_special, write_json_atomic
from .failure import Failure, failure_of
from .prompts import PROMPTS, HeadReader, prompt_text, writer_for
from .provenance import (
    SCORER_SETTINGS,
    BackendIdentity,
    BackendInfo,
    ClaimRecord,
    DatasetInfo,
    ImportOrigin,
    Provenance,
    ScorerInfo,
    migrate_manifest,
)
from .sampleindex import SampleIndex
from .sequential import Partial, SequentialRecord

MANIFEST, SAMPLES, RESULTS = "manifest.json", "samples.jsonl", "results.json"
# 1: proctor 0.1 (no results schema_version, suites scored outside the run loop); 2: open-dict manifests (main
# 6639c56 and earlier); 4: typed provenance ("manifest v4", issue 30; 3 was never written); 5: every setting once
# (the spec's, issue 36). 1, 2 and 4 migrate on read.
RUNLOG_VERSION = 5
log = logging.getLogger("proctor.log.runlog")


class Outcome(StrEnum):
    CORRECT = "correct"  # full credit
    PARTIAL = "partial"  # some credit (graded responses, judge grades)
    WRONG = "wrong"  # an answer was found and earned nothing
    NO_ANSWER = "no_answer"  # the extractor found no answer: scored 0, reported on its own
    ERROR = "error"  # the model/API failed: not scored, retried by a re-run
    UNSCORED = "unscored"  # no reference answer (e.g. suite context with expected = -1)
    TRUNCATED = "truncated"  # stopped on its token limit or mid-thought: no answer; `--truncated-as` decides


SCORED_OUTCOMES = frozenset({Outcome.CORRECT, Outcome.PARTIAL, Outcome.WRONG, Outcome.NO_ANSWER, Outcome.TRUNCATED})


class _Log(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # every typed float finite (NaN never exported)


class _Details(_Log):
    """Per-sample details of one scorer kind: every key declared (`extra="forbid"`). `get`, `in` and `[]` read a
    field by name across kinds (an unset field, or one this kind lacks, reads as absent)."""

    def _value(self, key: str) -> Any:
        """A field's value (None when unset or not a field of this kind)."""
        return getattr(self, key) if key in type(self).model_fields else None

    def get(self, key: str, default: Any = None) -> Any:
        value = self._value(key)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._value(key) is not None

    def __getitem__(self, key: str) -> Any:
        value = self._value(key)
        if value is None:
            raise KeyError(key)
        return value

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Overlap(_Details):
    """Lexical overlap of a prose answer with its references (`proctor.scoring.text_metrics.overlap_metrics`)."""

    token_f1: float | None = None
    rouge1: float | None = None
    rouge2: float | None = None
    rougeL: float | None = None
    bleu: float | None = None


class JudgeUsage(_Log):
    """What one judge call billed; `failed`: a call that failed and reported no usage (not billed)."""

    input_tokens: Annotated[int, Field(ge=0)] | None = None
    output_tokens: Annotated[int, Field(ge=0)] | None = None
    failed: Annotated[int, Field(ge=0)] | None = None


class Reading(_Log):
    """One reader's answer: the rule that found it (`none` when none did) and the answer (None then)."""

    reader: str  # "tiger-lab-mmlu-pro", "gpqa-baselines", "matharena-aime" or "proctor" (the robust reader)
    rule: str
    answer: str | None = None
    score: float | None = None  # the credit this reading earns (None: not scored by rule)
    level: int | None = None  # the level of the authors' fallback chain that read it (TIGER-Lab: 1, 2, 3); None: none


class Readings(_Log):
    """Both readings of one answer: the benchmark's reference rule and proctor's robust reader."""

    reference: Reading
    robust: Reading
    scored_by: Literal["reference", "robust"] = "reference"  # --extract


class InstructionCheck(_Log):
    """One IFEval instruction of a prompt: its id and whether the reply followed it, strictly and loosely."""

    id: str
    strict: bool
    loose: bool
    # proctor's reading beside lm-eval's (`proctor.scoring.ifeval.COUNTED_READING`), only where they read the
    # instruction differently: a letter-frequency check asking for a non-letter (`#`), which lm-eval swaps for a
    # drawn letter, counted as the character asked for
    counted_strict: bool | None = None
    counted_loose: bool | None = None


class SecondAskRecord(_Log):
    """The second ask of a sample (`proctor.scoring.second_ask`): the request as sent and the reply it got; the
    sample's verdict is this reply's, its prompt and raw output the first exchange's."""

    rule: str  # the second ask's name (`matharena-last-chance`)
    prompt: list[dict[str, str]]  # the whole conversation sent: the first prompt, the reply, the message
    raw_output: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None


class GenerationDetails(Overlap):
    """An answer extracted from generated text and matched against the references (prose: with its overlap)."""

    kind: Literal["generation"] = "generation"
    readings: Readings | None = None  # when the benchmark declares a reference rule
    accepted: list[str] | None = None
    letters: str | None = None
    compare: str | None = None  # "numeric" | "normalized"
    matched_credit: float | None = None
    rejected: str | None = None  # what the extractor saw and refused
    judge_check: JudgeCheck | None = None  # the judge's verdict on an exact-answer item (agreement)
    p_correct: float | None = None  # a stated probability that the answer is correct (binary calibration)
    instructions: list[InstructionCheck] | None = None  # IFEval: each instruction followed, strict and loose
    second_ask: SecondAskRecord | None = None  # the second request and reply, where the runner asked once more


class JudgeDetails(Overlap):
    """A prose answer graded by an LLM judge (with its lexical overlap)."""

    kind: Literal["judge"] = "judge"
    judge_model: str | None = None
    judge_version: str | None = None
    judge_grade: str | None = None
    judge_reasoning: str | None = None
    judge_thinking: str | None = None
    judge_raw: str | None = None
    judge_error: str | None = None
    judge_usage: JudgeUsage | None = None  # what the judge call billed, when it was asked
    judge_answer: str | None = None  # the final answer a benchmark's judge read from the reply (HLE)
    p_correct: float | None = None  # the reply's stated confidence, 0-1, as the benchmark's judge read it (HLE)


class JudgeCheck(_Log):
    """The judge's verdict on an exact-answer item, beside exact match's (`--judge-agreement`)."""

    outcome: Outcome
    score: float | None = None
    details: JudgeDetails


class ChoiceDetails(_Details):
    """Each option's log-likelihood after the question: acc (sum) and acc_norm (per character)."""

    kind: Literal["choice"] = "choice"
    gold: str | None = None
    letters: list[str] | None = None
    logprobs: dict[str, float] | None = None
    logprobs_norm: dict[str, float] | None = None
    n_tokens: dict[str, int] | None = None
    is_greedy: dict[str, bool] | None = None
    distribution: dict[str, float] | None = None
    predicted_norm: str | None = None
    tie: bool | None = None
    tie_norm: bool | None = None
    acc_norm_correct: bool | None = None
    error: str | None = None  # the first option's error, when an option could not be scored


class SuiteRow(_Log):
    """One query of a probsem context, as probsem's CSV/JSONL rows show it."""

    query: str
    logprob: float | None = None
    n_tokens: int | None = None
    n_chars: int | None = None
    n_bytes: int | None = None
    is_greedy: bool | None = None
    unconditional_logprob: float | None = None
    norms: dict[str, float | None] = Field(default_factory=dict)
    error: str | None = None
    score: float | None = None
    probability: float | None = None


class SuiteDetails(_Details):
    """One probsem context: every query's log-prob, the normalised scores and the distribution."""

    kind: Literal["suite"] = "suite"
    queries: list[str] = Field(default_factory=list)
    expected: int = -1  # the right query's index; -1: none (an unscored context)
    context: str = ""  # the context's own text
    text: str = ""  # probsem's `text`: pretext, context and posttext
    index: Annotated[int, Field(ge=0)] = 0
    logprobs: dict[str, float | None] = Field(default_factory=dict)
    scores: list[float | None] = Field(default_factory=list)
    ties: Annotated[int, Field(ge=0)] = 0
    tie_indexes: list[int] = Field(default_factory=list)
    rows: list[SuiteRow] = Field(default_factory=list)  # probsem's per-query rows (CSV/JSONL)
    norm: Literal["sum", "token", "char", "byte", "pmi"] | None = None  # proctor.scoring.logprob.Norm
    temperature: Annotated[float, Field(gt=0)] | None = None
    join: str | None = None
    distribution: list[float] | None = None

    @field_validator("expected", "tie_indexes")
    @classmethod
    def _a_query(cls, value: int | list[int], info: ValidationInfo) -> int | list[int]:
        """`expected` (or -1) and each tie index name one of the queries (when they are listed)."""
        n = len(info.data.get("queries") or [])
        for i in ([value] if isinstance(value, int) else value) if n else []:
            if not (0 <= i < n or (i == -1 and info.field_name == "expected")):
                raise ValueError(f"{i} is not the index of one of the {n} queries")
        return value


ExecLimit = Literal["wall_time", "cpu_time", "memory", "processes", "file_size", "disk"]  # the limit that stopped an execution


class TestResult(_Log):
    """One test of a program run: its name and whether it passed (with the failure's message)."""

    name: str
    passed: bool
    message: str | None = None


class ExecutionDetails(_Details):
    """Model code executed against the benchmark's tests (`proctor.scoring.execute`): which tests passed, how
    the execution ended, the limit that stopped it, and where it ran."""

    kind: Literal["execution"] = "execution"
    verdict: Literal["passed", "failed", "limit", "no_code", "error"] = "failed"
    tests: list[TestResult] = Field(default_factory=list)
    tests_passed: Annotated[int, Field(ge=0)] = 0
    tests_total: Annotated[int, Field(ge=0)] = 0
    limit: ExecLimit | None = None
    exit_code: int | None = None
    stderr_tail: str | None = None
    wall_s: float | None = None
    sandbox: str | None = None  # "bubblewrap", or "unsafe" (--unsafe-exec: no sandbox)
    code_from: str | None = None  # how the code was taken from the reply: "fenced", "function", "body", "completion"
    exec_limits: str | None = None  # whose limits it ran under: "authors" (the default) or "proctor" (--exec-limits)
    # True: under the authors' limits, a limit of the sandbox's containment stopped it, which their harness does not set
    beyond_authors: bool | None = None


def _details_kind(value: Any) -> str:
    """The discriminator; proctor 0.1 samples (no `kind`) are recognised by their keys."""
    if not isinstance(value, dict):
        return str(getattr(value, "kind", "generation"))
    if "kind" in value:
        return str(value["kind"])
    if "queries" in value:
        return "suite"
    if any(k in value for k in ("judge_grade", "judge_error", "judge_model")):
        return "judge"
    return "choice" if "logprobs" in value or "gold" in value else "generation"


SampleDetails = Annotated[
    Annotated[GenerationDetails, Tag("generation")]
    | Annotated[JudgeDetails, Tag("judge")]
    | Annotated[ChoiceDetails, Tag("choice")]
    | Annotated[SuiteDetails, Tag("suite")]
    | Annotated[ExecutionDetails, Tag("execution")],
    Discriminator(_details_kind),
]


def _shared_prompt(prompt: list[dict[str, str]] | str) -> list[dict[str, str]] | str:
    """The prompt with its texts interned: every epoch of an item (and every run of a report) asks the same
    prompt, and 100k samples held 100k copies of it (a few KB each); now equal texts are one string."""
    if isinstance(prompt, str):
        return sys.intern(prompt)
    for message in prompt:
        for key, value in message.items():
            if isinstance(value, str):
                message[key] = sys.intern(value)
    return prompt


class FirstAttempt(_Log):
    """A retried sample's first attempt (`run --retry-truncated`): what it scored and the budget it was asked with."""

    outcome: Outcome
    score: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    output_tokens: Annotated[int, Field(ge=0)] | None = None
    max_tokens: int | None = None


class Sample(_Log):
    """One item answered once (one epoch) by one model."""

    sample_id: str  # f"{item_id}#{epoch}"
    item_id: str
    epoch: int = 0
    dataset: str = ""
    category: str | None = None
    subcategory: str | None = None
    modality: str | None = None
    difficulty: float | None = None
    mode: str = "generate"  # "generate" | "logprob"
    prompt: Annotated[list[dict[str, str]] | str, AfterValidator(_shared_prompt)] = ""  # chat messages, or the context
    # on disk only: the key of the head (prompts.jsonl) that `prompt`, there the rest alone, follows (log.prompts);
    # a sample read back holds its whole prompt and None here
    prompt_prefix: str | None = Field(default=None, exclude=True)
    reference: Any = None  # the gold answer(s)
    raw_output: str | None = None
    extracted: str | None = None
    extraction_rule: str | None = None  # which rule found the answer ("none" when none did)
    ambiguous: bool | None = None  # the reference rule and proctor's reader disagree (None: only one read it)
    score: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] | None = None  # None when unscored or errored
    outcome: Outcome
    error: str | None = None
    input_tokens: Annotated[int, Field(ge=0)] | None = None
    output_tokens: Annotated[int, Field(ge=0)] | None = None
    latency_s: float | None = None
    cluster: str | None = None  # the item's value of the run's cluster attribute (Manifest.cluster), when it has one
    finish_reason: str | None = None
    reasoning: str | None = None  # the thought, apart from the answer (reasoning_content or a think block)
    cost: str | None = None  # exact money for this request (a Decimal as text) when prices are known
    judge_cost: str | None = None  # exact money for the judge's calls on this sample, when the judge's price is known
    # how many of this sample's requests the request cache answered (they repeat an earlier run's answers: `proctor
    # agree` says so); None: the cache was not asked (--no-cache), or a run written before it was counted
    cached_requests: Annotated[int, Field(ge=0)] | None = None
    details: SampleDetails = Field(default_factory=GenerationDetails)  # by scorer kind (discriminated on `kind`)
    # --retry-truncated: this sample is the second attempt, asked at the run's larger budget; the first (truncated)
    # attempt's record, as the run it was copied from logged it (also kept, earlier, in samples.jsonl). Absent from
    # every other sample
    first_attempt: FirstAttempt | None = Field(default=None, exclude_if=lambda v: v is None)
    # a budget ladder (`run --budgets`, a retry of a retry): the attempts between the first and this one, in the order
    # asked, each with its budget. Absent from every other sample
    earlier_attempts: list[FirstAttempt] = Field(default_factory=list, exclude_if=lambda v: not v)
    # the budget a retry asked this record with (absent: the run's own, or — a record copied from the run it retries —
    # that run's; a retry written before ladders leaves it out on its second attempts, asked at its own budget)
    asked_at: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # a sample that is a conversation with tools (core.trajectory, docs/agents.md): every turn, call and result.
    # Absent from every other sample
    trajectory: Trajectory | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="after")
    def _score_agrees(self) -> Sample:
        """A score that contradicts the outcome (a hand edit: `correct` at 0, `wrong` at 1) is refused, as an
        export counting outcomes and averaging scores would print two different accuracies."""
        expected = {Outcome.CORRECT: "1", Outcome.WRONG: "0", Outcome.PARTIAL: "strictly between 0 and 1"}
        agrees = {Outcome.CORRECT: lambda v: v == 1.0, Outcome.WRONG: lambda v: v == 0.0,
                  Outcome.PARTIAL: lambda v: 0.0 < v < 1.0}
        if self.score is not None and self.outcome in agrees and not agrees[self.outcome](self.score):
            raise ValueError(f"score {self.score} contradicts outcome {self.outcome.value!r} "
                             f"(its score is {expected[self.outcome]})")
        return self

    @model_validator(mode="after")
    def _suite_verdict_agrees(self) -> Sample:
        """A suite context's outcome is its scores' verdict: right when the expected query alone scores highest.
        A hand edit of `expected` or of the outcome that contradicts a unique top score is refused (probsem's
        export would print the accuracy of one and the calibration of the other)."""
        d = self.details
        if not isinstance(d, SuiteDetails) or d.expected < 0 or self.outcome not in (Outcome.CORRECT, Outcome.WRONG):
            return self
        scores = [x for x in d.scores if x is not None]
        if not scores or len(scores) != len(d.scores) or scores.count(max(scores)) > 1:
            return self  # an error or a tie (rounded scores may tie where the run's did not): nothing to check
        if (scores.index(max(scores)) == d.expected) != (self.outcome is Outcome.CORRECT):
            raise ValueError(f"outcome {self.outcome.value!r} contradicts the scores (query {scores.index(max(scores))} "
                             f"scores highest, expected {d.expected})")
        return self

    @property
    def scored(self) -> bool:
        return self.outcome in SCORED_OUTCOMES

    @property
    def failure(self) -> Failure | None:
        """Why it failed (`proctor.log.failure`: the model's answer, a refusal, a limit, or the infrastructure's
        sandbox, server, timeout or request), read from what it records; None when it is no failure."""
        return failure_of(self)


def _iso_time(value: str) -> str:
    """`value` unchanged if it is an ISO 8601 time (what proctor writes), else a ValueError saying so."""
    from datetime import datetime

    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an ISO 8601 time") from None
    return value


IsoTime = Annotated[str, AfterValidator(_iso_time)]


class RunSettings(BaseModel):
    """The settings of a run no RunSpec describes (an imported run, one written before RunSpec): each kept here
    once. A run with a spec keeps them in the spec alone (`Manifest.spec`)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    mode: str = "generate"
    prompt_kind: str | None = None
    extractor_version: str | None = None
    generation: GenerationSpec | None = None  # generation runs: the settings asked with
    epochs: int = 1
    truncated_as: str = "wrong"  # how results count truncated samples (--truncated-as)
    extract: str | None = None  # generation: which reading scores, "reference" (the benchmark's rule) or "robust"
    answer_rule: str | None = None  # generation: the reference rule that read the answers (None: proctor's reader)
    no_answer: str = "wrong"  # how results count an answer no rule found: "wrong" or "guess" 1/k (--no-answer)
    price: Money | None = None  # the prices cost was computed with
    max_cost: str | None = None  # --max-cost, when given
    judge_price: Money | None = None  # the judge's price, when a judge graded and it is known

    @field_validator("price", "judge_price", mode="before")
    @classmethod
    def _recorded_price(cls, value: Any) -> Any:
        """A price in the shape manifests before the one money record wrote (`input_per_million`…)."""
        return recorded_money(value)

    @field_validator("generation", mode="before")
    @classmethod
    def _unrecorded_temperature(cls, value: Any) -> Any:
        """A temperature the other harness did not record is None (the server's default), never 0."""
        return {"temperature": None, **value} if isinstance(value, dict) else value


#: what manifests before v5 kept beside the spec (top level), now the spec's alone (or `RunSettings`')
_SHADOWS = tuple(RunSettings.model_fields)


def _sandbox_named(data: dict[str, Any]) -> dict[str, Any]:
    """A spec written before the sandbox entered it (#47, main ee87dc3) given the sandbox its scorer recorded, so an
    unsandboxed run reads as one (its label, its identity; its directory keeps its id: `run.runner.older_run_ids`)."""
    spec, scorer = data.get("spec"), data.get("scorer")
    if not (isinstance(spec, dict) and isinstance(scorer, dict)) or "sandbox" in spec:
        return data
    if scorer.get("sandbox") not in ("bubblewrap", "unsafe"):
        return data
    return {**data, "spec": {**spec, "sandbox": scorer["sandbox"], "scorer": _limits_named(spec)}}


def _limits_named(spec: dict[str, Any]) -> Any:
    """A code run's scorer from before the authors' limits (#49): it ran under proctor's, MBPP's with its test
    imports (`run.runner.older_run_ids` keeps its id)."""
    scorer = spec.get("scorer")
    if not isinstance(scorer, dict) or "exec_limits" in scorer:
        return scorer
    dataset = spec.get("dataset")
    mbpp = isinstance(dataset, dict) and dataset.get("name") == "mbpp"
    return {**scorer, "exec_limits": "proctor", **({"test_imports": True} if mbpp else {})}


def _v5(data: dict[str, Any]) -> dict[str, Any]:
    """A v2-v4 manifest in the v5 shape: the settings kept beside the spec (at the top level and in the scorer
    record) dropped where a spec holds them, gathered into `settings` where none does."""
    out = dict(data)
    flat = {k: out.pop(k) for k in _SHADOWS if k in out}
    scorer = out.get("scorer")
    shadowed: dict[str, Any] = {}
    if isinstance(scorer, dict):
        shadowed = {k: scorer[k] for k in SCORER_SETTINGS if k in scorer}
        out["scorer"] = {k: v for k, v in scorer.items() if k not in SCORER_SETTINGS}
    if out.get("spec") is None and (flat or shadowed):
        out["settings"] = {**{k: v for k, v in shadowed.items() if v is not None},
                           **{k: v for k, v in flat.items() if v is not None or k not in shadowed},
                           **(out.get("settings") or {})}
    out["runlog_version"] = RUNLOG_VERSION
    return out


class Manifest(BaseModel):
    """What produced the run (v5: every setting once). A run made from a RunSpec keeps its settings in `spec`
    alone; a run no spec describes (imported, or written before RunSpec) in `settings`. The properties below
    (`mode`, `prompt_kind`, `no_answer`…) read them from whichever holds them: read-only, never stored twice.

    A manifest written before v5 is migrated on read (`proctor.log.provenance.migrate_manifest` for v2, `_v5`)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # every typed float finite

    runlog_version: int = RUNLOG_VERSION
    run_id: str
    spec: RunSpec | None = None  # the resolved RunSpec the run id hashes: every setting of the run, once
    settings: RunSettings | None = None  # a run without a spec: its settings (imported, or before RunSpec)
    provenance: Provenance  # proctor's version and commit, the host, numeric packages, the resolved backend
    dataset: DatasetInfo  # name, source, revision, content_hash, n_items…
    model: BackendInfo  # the backend's describe(): spec and settings
    scorer: ScorerInfo = Field(default_factory=ScorerInfo)  # the Scorer's kind and reader
    prompt_template_hash: str | None = None
    choice_order_seed: int | None = None
    judge: BackendInfo | None = None
    command: list[str] | None = None
    started_at: IsoTime
    finished_at: IsoTime | None = None
    elapsed_s: float | None = None  # wall time spent running, summed over every session (a resumed run too)
    cluster: str | None = None  # the item attribute accuracy intervals are clustered by (--cluster; Task.cluster)
    shard: str | None = None  # "K/N" when this directory is one shard of the run (proctor.run.shard)
    merged_from: list[str] | None = None  # the shard directories `proctor merge` combined into this run
    imported_from: ImportOrigin | None = None  # `proctor import`: the other harness, its files, task and metric
    sequential: SequentialRecord | None = None  # `run --stop-when-decided`: how its confidence sequence ended
    claim: ClaimRecord | None = None  # `run --claim`: the claim registered before the run began (proctor.run.claim)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """A manifest before v4 (no `provenance`) is reshaped into v4 (`migrate_manifest`), one before v5 into v5."""
        if not isinstance(data, dict):
            return data
        if int(data.get("runlog_version") or 1) < 4 and "provenance" not in data:
            data = migrate_manifest(data)
        data = _sandbox_named(data)
        return _v5(data) if any(k in data for k in _SHADOWS) or isinstance(data.get("scorer"), dict) and any(
            k in data["scorer"] for k in SCORER_SETTINGS) else data

    @model_validator(mode="after")
    def _one_home(self) -> Manifest:
        if self.spec is not None and self.settings is not None:
            raise ValueError("settings: a run with a spec keeps its settings in the spec alone")
        return self

    @property
    def partial(self) -> Partial | None:
        """How far a run `--stop-when-decided` stopped early got (None: a complete run): not the complete run."""
        return self.sequential.partial if self.sequential is not None else None

    # ---- the run's settings, read from the spec (or `settings`): derived, read-only

    @property
    def _own(self) -> RunSettings:
        return self.settings or RunSettings()

    @property
    def mode(self) -> str:
        return (self.spec.scorer.mode or "generate") if self.spec is not None else self._own.mode

    @property
    def prompt_kind(self) -> str | None:
        if self.spec is None:
            return self._own.prompt_kind
        return "probsem-suite" if self.scorer.scorer == "suite" else self.spec.scorer.prompt_kind

    @property
    def extract(self) -> str | None:
        """generation: which reading scores ("reference" or "robust"); None for log-likelihood runs."""
        if self.spec is None:
            return self._own.extract
        return self.spec.scorer.extract if self._generates else None

    @property
    def answer_rule(self) -> str | None:
        """generation: the reference rule that read this prompt kind's answers (None: proctor's reader alone)."""
        if self.spec is None:
            return self._own.answer_rule
        return self.spec.scorer.answer_rule if self._generates else None

    @property
    def no_answer(self) -> str:
        return (self.spec.scorer.no_answer or "wrong") if self.spec is not None else self._own.no_answer

    @property
    def truncated_as(self) -> str:
        return self.spec.scorer.truncated_as if self.spec is not None else self._own.truncated_as

    @property
    def extractor_version(self) -> str | None:
        if self.spec is None:
            return self._own.extractor_version
        s = self.scorer
        return s.extractor or (f"argmax-{s.norm}" if s.norm else None)

    @property
    def generation(self) -> GenerationSpec | None:
        """generation runs: the settings asked with (None for log-likelihood runs)."""
        if self.spec is None:
            return self._own.generation
        return self.spec.generation if self._generates else None

    @property
    def epochs(self) -> int:
        return self.spec.epochs if self.spec is not None else self._own.epochs

    @property
    def price(self) -> Money | None:
        if self.spec is None:
            return self._own.price
        return self.spec.price

    @property
    def max_cost(self) -> str | None:
        if self.spec is None:
            return self._own.max_cost
        return str(self.spec.budget.max_cost) if self.spec.budget is not None else None

    @property
    def judge_price(self) -> Money | None:
        """The judge's price, when a judge graded and it is known."""
        if self.spec is None:
            return self._own.judge_price
        return self.spec.judge.price if self.spec.judge is not None and self.judge else None

    @property
    def _generates(self) -> bool:
        return self.mode == "generate" and self.scorer.scorer in (None, "generation", "judge")

    @property
    def proctor_version(self) -> str:
        return self.provenance.proctor_version

    @property
    def git_sha(self) -> str | None:
        return self.provenance.git_sha

    @property
    def model_identity(self) -> BackendIdentity:
        """The resolved backend (`Model.identity()`): the dtype that ran, weights, engine."""
        return self.provenance.backend


def check_generation(settings: Any, path: str | Path, what: str = "bad manifest: generation") -> None:
    """Refuse sampling settings with a wrong-typed value (`temperature: "hot"`, `max_tokens: -5`) at `path`,
    as the manifest's `GenerationSpec` would (a key proctor has no name for goes to its `extra_body`)."""
    try:
        GenerationSpec.recorded(settings) if isinstance(settings, dict) else GenerationSpec.model_validate(settings)
    except ValueError as e:
        raise InputError.at(path, f"{what}.{brief(e)}") from None


def error_counts(samples: Sequence[Sample]) -> dict[str, int]:
    """Each distinct error message with how many samples it hit, most frequent first."""
    counts: dict[str, int] = {}
    for s in samples:
        if s.outcome is Outcome.ERROR:
            key = s.error or "unknown error"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class SamplesOnDisk(list[Sample]):
    """The `samples` of a run left on disk (`read_run(d, samples=False)`, a run just made): each use reads them
    from samples.jsonl, one at a time, in `order` (sample ids) when one is given, else as `read_run` gives them.
    Never an empty list by mistake, never all held: iterating holds one sample and an index; `len` reads the
    index; indexing reads up to the sample asked for (a test's `log.samples[0]`; a loop uses iteration)."""

    def __init__(self, run_dir: Path, order: Sequence[str] | None = None) -> None:
        super().__init__()
        self.run_dir, self.order = run_dir, order

    def stream(self, by_item: bool = False) -> Iterator[Sample]:
        return iter_run_samples(self.run_dir, by_item=by_item, order=None if by_item else self.order)

    def __iter__(self) -> Iterator[Sample]:
        return self.stream()

    def __len__(self) -> int:
        index = sample_index(self.run_dir / SAMPLES)
        return len(index) if self.order is None else sum(sid in index for sid in self.order)

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int) and index >= 0:
            found = next(islice(self, index, None), None)
            if found is None:
                raise IndexError("sample index out of range")
            return found
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        return list(self) == other

    def __repr__(self) -> str:
        return f"SamplesOnDisk({str(self.run_dir)!r})"


class EpochMajor(Sequence[str]):
    """The sample ids of `item_ids` × `epochs` in plan order (every item of epoch 0, then of epoch 1, …), computed
    as asked: the order a run's results are summarized in, whatever order its samples finished in."""

    def __init__(self, item_ids: Sequence[str], epochs: int) -> None:
        self.item_ids, self.epochs = list(item_ids), epochs

    def __len__(self) -> int:
        return len(self.item_ids) * self.epochs

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if not -len(self) <= k < len(self):
            raise IndexError("sample index out of range")
        k %= len(self)
        return f"{self.item_ids[k % len(self.item_ids)]}#{k // len(self.item_ids)}"

    def __iter__(self) -> Iterator[str]:
        return (f"{item}#{epoch}" for epoch in range(self.epochs) for item in self.item_ids)


class CacheUse(BaseModel):
    """What the request cache answered in the session that just ran: the model's requests and the judge's grades
    (the cache key holds no URL, so a judge pointed elsewhere is still served from it: the summary says so). Not
    written anywhere: it belongs to one session, not to the run."""

    hits: int = 0
    asked: int = 0
    judge_hits: int = 0
    judge_asked: int = 0

    def text(self) -> str | None:
        """`7 of 7 requests from the cache, judge 3 of 3`; None when the cache answered nothing."""
        if not self.hits and not self.judge_hits:
            return None
        judge = f", judge {self.judge_hits} of {self.judge_asked}" if self.judge_asked else ""
        return f"{self.hits} of {self.asked} requests from the cache{judge}"


class RunLog(BaseModel):
    """A run read back from its directory."""

    path: Path
    manifest: Manifest
    samples: list[Sample] = Field(repr=False)  # a repr of 12k samples costs seconds (asyncio.run prints it)
    results: Results | None = Field(default=None, repr=False)
    streamed: bool = Field(default=False, repr=False)  # read without its samples: `iter_samples` reads them from disk
    cache: CacheUse | None = Field(default=None, repr=False, exclude=True)  # this session's (a run just made)

    def iter_samples(self, by_item: bool = False) -> Iterator[Sample]:
        """The samples, from memory or (a run read with `read_run(d, samples=False)`, or just made) one at a time
        from disk; `by_item`: in (item id, epoch) order."""
        if isinstance(self.samples, SamplesOnDisk):
            yield from self.samples.stream(by_item)
        elif self.streamed:
            yield from iter_run_samples(self.path, by_item=by_item)
        else:
            yield from sorted(self.samples, key=lambda s: (s.item_id, s.epoch)) if by_item else self.samples


def append_samples(path: Path, samples: Sequence[Sample]) -> None:
    """Append finished samples durably as whole, newline-framed records (one write, flush + fsync).

    A write that fails (a full disk, a read-only directory) is undone, so the log never ends in a
    partial record, and reported as one line with the path; a kill mid-write leaves a torn tail that
    `repair_torn_tail` cuts off before the next append.
    """
    if not samples:
        return
    heads = writer_for(path.parent)
    texts = [(s.item_id, *prompt_text(s.prompt)) for s in samples]  # each prompt turned into text once
    heads.learn(texts)  # heads the batch shares serve its own first prompts too
    data = b"".join(_sample_line(s, heads.split(*t)) for s, t in zip(samples, texts, strict=True))
    heads.flush()  # a new head is on disk before any sample that refers to it
    try:
        with open(path, "ab") as f:
            start = os.fstat(f.fileno()).st_size
            try:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            except OSError:
                f.truncate(start)
                raise
    except OSError as e:
        raise ProctorError(f"{path}: cannot write: {e.strerror or e}") from None


_PROMPT_KEY = b',"prompt":'


def _sample_line(s: Sample, split: tuple[str, str] | None) -> bytes:
    """A sample's line: its prompt, when it starts with a head the run stores once (`split`: the head's key and
    the rest, `proctor.log.prompts`), as the head's key and the rest."""
    if split is None:
        return (s.model_dump_json() + "\n").encode("utf-8")
    key, rest = split
    line = s.model_copy(update={"prompt": rest}).model_dump_json().encode("utf-8")
    at = line.index(_PROMPT_KEY)  # the first: the fields before it are plain values, and a quote in a string is \"
    return line[:at] + b',"prompt_prefix":' + json.dumps(key).encode() + line[at:] + b"\n"


def repair_torn_tail(path: Path) -> int:
    """Cut off a last line with no newline (a write interrupted by a kill); return the bytes removed.

    Only whole, newline-ended records are ever built upon; what was cut is reported on stderr.
    """
    refuse_special(path)  # a FIFO or a device: one line, before the open
    try:
        with open(path, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return 0
            keep = _last_newline_end(f, size)
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
    except FileNotFoundError:
        return 0
    except OSError as e:
        raise ProctorError(f"{path}: cannot repair: {e.strerror or e}") from None
    log.warning("%s: dropped a torn last record (%d bytes) left by an interrupted run; it will be redone",
                path, size - keep)
    return size - keep


def _last_newline_end(f: BinaryIO, size: int) -> int:
    """The offset just past the last newline of the open file (0 when there is none)."""
    pos = size
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        f.seek(pos)
        block = f.read(step)
        at = block.rfind(b"\n")
        if at >= 0:
            return pos + at + 1
    return 0


def iter_samples(path: Path) -> Iterator[Sample]:
    """Read samples back, one line at a time (never the whole file); a torn last line (no newline: a kill
    mid-write) is skipped, any other bad line is an error."""
    if not path.exists():
        return
    heads = HeadReader(path.parent)
    for lineno, _, line in _sample_lines(path):
        yield _parse_sample(path, lineno, line, heads)


def _sample_lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, bytes) of each whole, non-blank line of a samples file, streamed."""
    longest = max_line_bytes()
    with open_checked(path) as f:
        offset = 0
        for lineno, line in enumerate(iter(lambda: f.readline(longest + 1), b""), start=1):
            if len(line) > longest:  # never held past the limit: a sparse file is one "line" of gigabytes
                raise InputError.at(path, f"line longer than {longest:,} bytes (raise PROCTOR_MAX_LINE_BYTES to "
                                          "read it)", lineno)
            if not line.endswith(b"\n"):
                if line.strip():
                    log.warning("%s: ignoring a torn last record (%d bytes) left by an interrupted run", path, len(line))
                return
            if line.strip():
                yield lineno, offset, line
            offset += len(line)


def _parse_sample(path: Path, lineno: int, line: bytes, heads: HeadReader) -> Sample:
    try:
        s = Sample.model_validate_json(line)
    except ValueError as e:  # pydantic's ValidationError (bad JSON, bad UTF-8 included) is a ValueError
        raise InputError.at(path, f"bad sample: {brief(e)}", lineno) from None
    return s if s.prompt_prefix is None else _whole_prompt(s, path, lineno, heads)


def _whole_prompt(s: Sample, path: Path, lineno: int, heads: HeadReader) -> Sample:
    """The sample with its whole prompt: the stored head its `prompt_prefix` names, joined to the rest."""
    assert s.prompt_prefix is not None
    if not isinstance(s.prompt, str):
        raise InputError.at(path, "bad sample: a prompt stored after a head (prompt_prefix) is a text", lineno)
    try:
        whole = heads.whole(s.prompt_prefix, s.prompt)
    except KeyError:
        raise InputError.at(path, f"bad sample: its prompt's head {s.prompt_prefix} is not in {PROMPTS}",
                            lineno) from None
    except (ValueError, TypeError) as e:
        raise InputError.at(path, f"bad sample: its prompt does not join its head ({str(e)[:200]})", lineno) from None
    return s.model_copy(update={"prompt": _shared_prompt(whole), "prompt_prefix": None})


_ID_PREFIX = b'{"sample_id":"'


def _sample_key(line: bytes, lineno: int) -> str:
    """A record's sample_id, read without validating the record (proctor writes it first); a line whose id
    cannot be read gets a key of its own, so that reading it later reports what is wrong with it."""
    if line.startswith(_ID_PREFIX):
        end = line.find(b'"', len(_ID_PREFIX))
        raw = line[len(_ID_PREFIX):end]
        if end > 0 and b"\\" not in raw:
            return raw.decode("utf-8", "replace")
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    sample_id = value.get("sample_id") if isinstance(value, dict) else None
    return sample_id if isinstance(sample_id, str) else f"\x00line {lineno}"


def sample_index(path: Path) -> SampleIndex:
    """Where the last record of each sample id is (line number, byte offset), in columns of a few bytes a record
    (`proctor.log.sampleindex`): an index of the samples, not the samples."""
    if not path.exists():
        return SampleIndex(())
    return SampleIndex((lineno, offset, _sample_key(line, lineno)) for lineno, offset, line in _sample_lines(path))


def _ids_at(f: IO[bytes], records: Iterable[tuple[int, int]]) -> Iterator[str]:
    """The sample id of each record (line number, offset) of the open samples file, read again."""
    for lineno, offset in records:
        f.seek(offset)
        yield _sample_key(f.readline(), lineno)


def iter_run_samples(run_dir: str | Path, by_item: bool = False, order: Iterable[str] | None = None
                     ) -> Iterator[Sample]:
    """The run's samples as `read_run` gives them (each sample_id's last record), read one at a time from
    samples.jsonl: memory holds one sample and an index, whatever the run's size. `by_item`: in (item, epoch)
    order; `order`: the ids of `order` the run holds, in that order; else in the order the ids first appear."""
    path = Path(run_dir) / SAMPLES
    index = sample_index(path)
    if not len(index):
        return
    heads = HeadReader(path.parent)
    if order is None and not by_item and not index.repeats:  # each id once: the file's order is the order asked
        for lineno, _, line in _sample_lines(path):
            yield _parse_sample(path, lineno, line, heads)
        return
    with open_checked(path) as f:
        if order is not None:
            entries: Iterable[tuple[int, int]] = (at for sid in order if (at := index.get(sid)) is not None)
        else:
            entries = index.by_item(_ids_at(f, index.in_order())) if by_item else index.in_order()
        for lineno, offset in entries:
            f.seek(offset)
            yield _parse_sample(path, lineno, f.readline(), heads)


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Write the manifest; every string in it is redacted first (a key in a URL or a command line never lands)."""
    write_json_atomic(run_dir / MANIFEST, redact(manifest.model_dump(mode="json")))


def write_results(run_dir: Path, results: Results) -> None:
    """Write results.json from the one `Results` model."""
    write_json_atomic(run_dir / RESULTS, results.as_dict())


def read_results(run_dir: str | Path) -> Results | None:
    """results.json as `Results`; None when absent. A 0.1 file (no schema_version) is refused clearly."""
    path = Path(run_dir) / RESULTS
    if not path.exists():
        return None
    text = read_record_text(path)
    check_json_depth(text, path)  # before the parser recurses
    try:
        data = json.loads(text)
    except ValueError as e:  # bad JSON, an integer of too many digits
        raise InputError.at(path, f"bad results: {brief(e)}") from None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise InputError.at(path, "written by proctor 0.1; re-run the same command to rewrite it")
    try:
        return Results.model_validate(data)
    except ValueError as e:
        raise InputError.at(path, f"bad results: {brief(e)}") from None


def expand_run_dirs(paths: Sequence[str | Path]) -> list[Path]:
    """Each path as given when it is a run directory; a folder of run directories (such as `score -o OUT`
    or `runs/`) as the run directories directly inside it, sorted (hidden ones, such as the staging folder a
    killed import left, are not runs). Anything else stays, for the reader's error."""
    found: list[Path] = []
    for given in map(Path, paths):
        inside = sorted(p.parent for p in given.glob(f"*/{MANIFEST}")
                        if not p.parent.name.startswith(".")) if given.is_dir() else []  # not a staging folder
        found += inside if inside and not (given / MANIFEST).exists() else [given]
    return found


def read_manifest(run_dir: str | Path) -> Manifest:
    d = Path(run_dir)
    mpath = d / MANIFEST
    if not mpath.exists():
        raise InputError.at(d, f"not a run directory (no {MANIFEST})")
    text = read_record_text(mpath)
    check_json_depth(text, mpath)  # before the parser recurses
    try:
        manifest = Manifest.model_validate(json.loads(text))
    except ValueError as e:  # bad JSON (a JSONDecodeError), a wrong field
        raise InputError.at(mpath, f"bad manifest: {brief(e)}") from None
    return manifest
