"""RunSpec: one evaluation, as one frozen typed record, whatever door it came through.

The CLI (`run`, `score`, `run --config`), the Python API (`proctor.eval`) and the llm-wc importer all
build a `RunSpec`; `proctor.run.pipeline.resolve` fills in a benchmark's defaults once (token budget,
prompt-kind stops, answer rule, no-answer policy, data content hash); the run id is `run_id()` of that
resolved spec, so the same evaluation has the same id from every door.

What is in the run id (`identity()`): everything that can change a score — the data (its content hash),
the model spec and the backend options that change answers (dtype, context length…), the scorer (mode,
prompt kind, format, shots, answer rule, extract, no-answer, truncated-as, normalisation), the
generation settings, the epochs, the judge (its model, settings and version), and the sandbox a code benchmark's
programs ran in when it is not bubblewrap (`sandbox`: a reply that opens a socket fails in bubblewrap and passes
unsandboxed). What is not: where the
data file lies, how requests travel (base URL, concurrency, timeouts, retries, batch API), prices and
the budget, the shard (it is in the run directory's name), and the attribute accuracy intervals are
clustered by (`cluster`: a reporting choice, recorded in the manifest and results.json), and the human labels
that correct a judge's accuracy (`human_labels`: they change the estimate, never a request or a verdict).
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .model import GenerationSpec  # the one record of the generation settings (re-exported)
from .money import Money  # the one record of a price (re-exported)

SPEC_VERSION = 1  # in the hashed identity: bump when the identity's meaning changes
DEFAULT_MAX_TOKENS = 1024  # when neither the spec, the prompt kind nor the benchmark gives a budget (resolve)

NO_CLUSTER = "none"  # RunSpec.cluster: every item its own cluster, whatever the benchmark's default
Mode = Literal["generate", "logprob"]
ExecLimits = Literal["authors", "proctor"]  # code benchmarks: the authors' harness's limits, or proctor's stricter ones
Sandbox = Literal["bubblewrap", "unsafe"]  # what runs a code benchmark's programs (scoring/execute/sandbox.py)
DEFAULT_SANDBOX: Sandbox = "bubblewrap"  # not in the run id: the ids of runs before the sandbox entered it
JsonScalar = str | int | float | bool | None
OptionValue = JsonScalar | list[str]

# backend options that say how requests travel or how fast, never what a model answers: not in the run id
OPERATIONAL_OPTIONS = frozenset({
    "base_url", "api_key", "concurrency", "timeout", "max_retries", "backoff_base", "seed", "batch",
    "batch_poll_interval", "device", "batch_size", "share_prefixes", "pack_siblings", "max_batch_tokens",
    "threads", "vllm_python", "startup_timeout", "gpu_memory_utilization", "tensor_parallel", "data_parallel",
})

CLUSTER_ATTRIBUTES = ("category", "subcategory", "metadata.KEY")


def check_cluster(attribute: str) -> str:
    """`attribute` when it names an item attribute to cluster by (`CLUSTER_ATTRIBUTES`), else a ValueError."""
    key = attribute.removeprefix("metadata.")
    if attribute in ("category", "subcategory") or (attribute.startswith("metadata.") and key.strip()):
        return attribute
    raise ValueError(f"cannot cluster by {attribute!r}: one of category, subcategory, metadata.KEY")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every float finite


class DatasetRef(_Record):
    """Which data: a built-in benchmark name or a path, and how it is selected."""

    name: str = Field(min_length=1)  # built-in name (`proctor datasets`) or a file/directory path
    data_file: str | None = None  # a built-in read from this local copy in its upstream schema
    files: tuple[str, ...] = ()  # more input files read with `name` (probsem: the suite files after the prompt file)
    revision: str | None = None  # the Hub revision, when known
    content_hash: str | None = None  # sha256 of the items evaluated; filled by resolve
    seed: int = 0  # choice-order seed where a benchmark shuffles (GPQA)
    limit: int | None = Field(default=None, ge=1)
    limit_per_category: int | None = Field(default=None, ge=1)
    subjects: tuple[str, ...] | int | None = None  # only these categories (names), or the first N
    prompt_options: dict[str, str] = Field(default_factory=dict)  # AIME `instruction`, GPQA `cot_examples`
    hf_token_env: str | None = None  # a variable standing in for HF_TOKEN while the data loads
    fewshot_from: str | None = None  # item data: the file few-shot examples come from (None: the data itself)
    # a hash of every prompt template and the few-shot pool (spec benchmarks, few-shot item data; filled by
    # resolve from Task.prompt_identity): the content hash covers the items, not what is asked around them
    prompt_hash: str | None = None
    # sha256 of the few-shot examples the run shows, item by item, as rendered (filled by resolve from the prompt
    # builder's `fewshot_texts`; data.fewshot.fewshot_hash): None when no example is shown (zero-shot ids unchanged)
    fewshot_hash: str | None = None


class ModelSpec(_Record):
    """Which model, and the options its backend takes (validated against the backend when it loads)."""

    spec: str = Field(min_length=1)  # hf:PATH, openai:MODEL, anthropic:MODEL, vllm:PATH, scripted:RULE
    options: dict[str, OptionValue] = Field(default_factory=dict)  # the backend's options (dtype, base_url…)
    api_key_env: str | None = None  # the environment variable holding its key (a key itself is never recorded)
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)  # a key given as such: never written

    @field_validator("options")
    @classmethod
    def _no_key(cls, options: dict[str, OptionValue]) -> dict[str, OptionValue]:
        if "api_key" in options:
            raise ValueError("api_key is never recorded: give api_key_env, the variable that holds it")
        return options

    @field_validator("options")
    @classmethod
    def _no_auto_dtype(cls, options: dict[str, OptionValue]) -> dict[str, OptionValue]:
        """`dtype: auto` is the default, left out: the dtype policy (models/dtype.py) resolves it where the model
        loads, and the manifest's provenance records the dtype that ran (a spec never says `auto`)."""
        return {k: v for k, v in options.items() if not (k == "dtype" and v == "auto")}

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec,
                "options": {k: v for k, v in sorted(self.options.items()) if k not in OPERATIONAL_OPTIONS}}


class ScorerSpec(_Record):
    """How answers are asked for and read."""

    mode: Mode | None = None  # None: the benchmark's own (a spec's `scoring`), else generate (resolved)
    prompt_kind: str | None = None  # None: the dataset's first kind (resolved)
    format: Literal["chat", "completion"] | None = None  # how the prompt is sent (None: the benchmark's)
    shots: int | None = Field(default=None, ge=0)  # worked examples before the question (None: the kind's)
    answer_rule: str | None = None  # the reference rule reading the answers (resolved from the prompt kind)
    extract: Literal["reference", "robust"] = "reference"
    no_answer: Literal["wrong", "guess"] | None = None  # None: the answer rule's policy (resolved)
    truncated_as: Literal["wrong", "excluded"] = "wrong"
    norm: str | None = None  # log-probability normalisation of probsem suites (sum, token, char, byte, pmi)
    softmax_temperature: float | None = Field(default=None, gt=0)  # suites: divides scores before the softmax
    join: Literal["newline", "space"] | None = None  # suites: how a context and its query are joined
    extractor_version: str | None = None  # proctor's reader version (resolved)
    judge_agreement: int = Field(default=0, ge=0)  # also judge the first N exact-answer items
    # ask once more when the authors' runner reads no answer (MathArena's); None: the rule's default (resolved:
    # True where the answer rule has a second ask, else None), False: never
    second_ask: bool | None = None
    # code benchmarks (resolved to "authors"; None elsewhere, and then left out of the run id): whose limits
    # executions run under (`proctor.scoring.execute.scorer.ExecProfile`); test_imports: MBPP's, run before its asserts
    exec_limits: ExecLimits | None = None
    test_imports: bool | None = None


class JudgeSpec(_Record):
    """The model that grades prose answers: its own endpoint, key and settings, never the candidate's."""

    model: str = Field(min_length=1)
    base_url: tuple[str, ...] = ()  # () : the backend's default (its environment variable, else the vendor)
    api_key_env: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)  # a key given as such: never written
    options: dict[str, OptionValue] = Field(default_factory=dict)  # the judge backend's other options
    settings: GenerationSpec | None = None  # None: the judge's defaults (greedy)
    price: Money | None = None
    version: str | None = None  # proctor's judge prompt version (resolved)

    @field_validator("options")
    @classmethod
    def _no_url_or_key(cls, options: dict[str, OptionValue]) -> dict[str, OptionValue]:
        for name, instead in (("api_key", "api_key_env"), ("base_url", "base_url")):
            if name in options:
                raise ValueError(f"{name} goes in the judge's own field {instead}, not in options")
        return options

    def identity(self) -> dict[str, Any]:
        return {"model": self.model, "version": self.version,
                "options": {k: v for k, v in sorted(self.options.items()) if k not in OPERATIONAL_OPTIONS},
                "settings": self.settings.model_dump(mode="json") if self.settings is not None else None}


class ShardSpec(_Record):
    """Shard `index` (1-based) of `count`."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _within(self) -> ShardSpec:
        if self.index > self.count:
            raise ValueError("shard index must be between 1 and count")
        return self


class Budget(_Record):
    """Stop before a request could cross `max_cost` (in the model's price currency)."""

    max_cost: Decimal = Field(ge=0)


class StopRule(_Record):
    """`run --stop-when-decided`: ask the items in a seeded random order and stop once an anytime-valid confidence
    sequence for candidate − baseline (`proctor.stats.sequential`) decides the gate at `max_drop`."""

    baseline: str = Field(min_length=1)  # the baseline run: its directory or recorded run id
    max_drop: float = Field(ge=0, lt=1)  # the largest drop allowed, a proportion (the CLI's points / 100)
    alpha: float = Field(default=0.05, gt=0, lt=1)  # error allowed, both sides together (each side alpha/2)
    look_every: int = Field(default=10, ge=1)  # items asked between two looks
    order_seed: int = 0  # the seed of the order the items are asked in


class RetryOf(_Record):
    """`run --retry-truncated`: this run is `run_id`'s samples, its truncated ones asked again at this spec's larger
    budget (`proctor.run.retry`); the first attempts stay in the log. `run` may be a retry itself (a budget ladder,
    `run --budgets`): then `budgets` holds every budget of the ladder before it, the first run's first."""

    run: str = Field(min_length=1)  # the run asked again (the first run, or the ladder's step before this one)
    run_id: str = Field(min_length=1)
    max_tokens: int | None = None  # that run's budget
    # the budgets before `max_tokens` (a ladder's earlier steps; empty: `run` is the first run). Not in the run id:
    # `run_id` already names the run, whose own spec names its ladder
    budgets: tuple[int, ...] = ()

    @property
    def first_budget(self) -> int | None:
        """The first run's budget (the ladder's first step)."""
        return self.budgets[0] if self.budgets else self.max_tokens

    @property
    def ladder(self) -> tuple[int | None, ...]:
        """Every budget asked before this run's, the first run's first."""
        return (*self.budgets, self.max_tokens)


class AgentLimits(_Record):
    """What stops a sample that is a conversation with tools (`proctor.scoring.agent`; docs/agents.md): each limit
    a named end of its trajectory (`core.trajectory.AgentStop`). In the run id when set: a limit decides which
    samples end without an answer, and a tool's time limit or cut decides what the model reads."""

    max_turns: int = Field(default=20, ge=1)  # model turns (requests) in one trajectory
    max_tool_calls: int = Field(default=100, ge=1)  # calls run over the trajectory; a reply past it runs what fits
    max_tokens: int | None = Field(default=None, ge=1)  # input + output tokens over every turn (None: no limit)
    wall_time_s: float | None = Field(default=600.0, gt=0)  # seconds for the trajectory, tools included
    tool_timeout_s: float = Field(default=30.0, gt=0)  # seconds one call may run before it is stopped
    max_result_bytes: int = Field(default=65536, ge=1)  # a result longer than this (UTF-8) is cut, and says so


class HumanLabels(_Record):
    """`--human-labels FILE`: human verdicts on some of the run's samples, by item id (or sample id `ITEM#EPOCH`),
    read by `proctor.metrics.human_labels`. Not in the run id: they change no request and no verdict, only the
    estimate results.json reports beside the judge's (`Results.judge_corrected`)."""

    path: str  # the file as given
    sha256: str  # its content's hash
    labels: dict[str, bool]  # id -> the human's verdict (True: correct)


class RunSpec(_Record):
    """One evaluation: data, model, scorer, generation, epochs, shard, judge, prices and budget."""

    dataset: DatasetRef
    model: ModelSpec
    scorer: ScorerSpec = Field(default_factory=ScorerSpec)
    generation: GenerationSpec = Field(default_factory=GenerationSpec)
    epochs: int = Field(default=1, ge=1)
    shard: ShardSpec | None = None
    judge: JudgeSpec | None = None
    price: Money | None = None  # the model's
    budget: Budget | None = None
    # the item attribute accuracy intervals are clustered by (category, subcategory, metadata.KEY), "none": items
    # alone; None: the benchmark's own (resolved, e.g. MMLU-Pro's metadata.src). Not in the run id
    cluster: str | None = None
    # run model code without a sandbox when none is available (--unsafe-exec; code benchmarks). Not in the run id
    # itself: what it changes is `sandbox`, the one the programs ran in
    unsafe_exec: bool = False
    # what runs the programs of a run that executes code (code benchmarks), resolved: bubblewrap where it works, else
    # unsafe under --unsafe-exec; None for a run that executes nothing. In the run id when not bubblewrap: verdicts
    # differ (a program that opens a socket fails in bubblewrap, passes unsandboxed)
    sandbox: Sandbox | None = None
    # stop once the comparison with a baseline is decided (`--stop-when-decided`); not in the run id: the items asked
    # are scored as in a full run, and the same command without it asks the rest. A run it stopped is recorded as
    # partial (its manifest's `sequential`): the history keeps the complete run apart, and never ranks a partial one
    stop_when: StopRule | None = None
    # another run's samples, its truncated ones asked again (`--retry-truncated`); in the run id when set (its run id
    # and budget, not its directory): the retry's samples are not those of a fresh run at the larger budget
    retry_of: RetryOf | None = None
    # the limits of a benchmark whose samples are conversations with tools (docs/agents.md); in the run id when set
    agent: AgentLimits | None = None
    # human verdicts on some samples (`--human-labels`): the judge-corrected estimate; not in the run id
    human_labels: HumanLabels | None = None
    resolved: bool = False  # set by proctor.run.pipeline.resolve: defaults applied, content hash known

    @field_validator("cluster")
    @classmethod
    def _cluster(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() == NO_CLUSTER:
            return None if value is None else NO_CLUSTER
        try:
            return check_cluster(value.strip())
        except ValueError as e:
            raise PydanticCustomError("cluster", "{reason}", {"reason": str(e)}) from None

    @property
    def clustered_by(self) -> str | None:
        """The attribute the intervals are clustered by (None: items alone, or not yet resolved)."""
        return None if self.cluster in (None, NO_CLUSTER) else self.cluster

    def identity(self) -> dict[str, Any]:
        """What the run id hashes: everything that can change a score (see the module docstring)."""
        data = self.dataset
        dataset: dict[str, Any] = (
            {"content_hash": data.content_hash} if data.content_hash is not None
            else data.model_dump(mode="json", exclude={"content_hash", "hf_token_env"}))
        for optional in ("fewshot_from", "prompt_hash", "fewshot_hash"):  # in the id only when set: runs before them keep theirs
            value = getattr(data, optional)
            dataset.pop(optional, None)
            if value is not None:
                dataset[optional] = value
        dataset["prompt_options"] = dict(sorted(data.prompt_options.items()))
        scorer = self.scorer.model_dump(mode="json")
        if scorer.get("second_ask") is None:  # in the id only when set: every other run keeps its id
            scorer.pop("second_ask", None)
        for optional in ("exec_limits", "test_imports"):  # in the id only when set: runs that execute no code keep theirs
            if scorer[optional] is None:
                del scorer[optional]
        generation = self.generation.model_dump(mode="json") if self.scorer.mode != "logprob" else None
        identity = {"spec_version": SPEC_VERSION, "dataset": dataset, "model": self.model.identity(),
                    "scorer": scorer, "generation": generation, "epochs": self.epochs,
                    "judge": self.judge.identity() if self.judge is not None else None}
        if self.sandbox not in (None, DEFAULT_SANDBOX):  # unsandboxed: other verdicts; every other run keeps its id
            identity["sandbox"] = self.sandbox
        if self.retry_of is not None:  # in the id only when set: every other run keeps its id
            identity["retry_of"] = {"run_id": self.retry_of.run_id, "max_tokens": self.retry_of.max_tokens}
        if self.agent is not None:  # likewise: a run without tools keeps its id
            identity["agent"] = self.agent.model_dump(mode="json")
        return identity

    def run_id(self) -> str:
        """A stable 12-hex-digit hash of `identity()` (canonical JSON); call it on the resolved spec."""
        return hashlib.sha256(canonical_json(self.identity()).encode()).hexdigest()[:12]

    def without_fewshot_hash(self) -> RunSpec:
        """This spec as proctor before #41 item 2 resolved it: the few-shot examples' hash left out."""
        return self.model_copy(update={"dataset": self.dataset.model_copy(update={"fewshot_hash": None})})

    def legacy_run_id(self) -> str | None:
        """The id this run had before the few-shot examples' hash entered the id (main dc99ff5); None when it
        shows no example (its id never changed). `run.runner.locate_run` still finds and resumes such runs."""
        return self.without_fewshot_hash().run_id() if self.dataset.fewshot_hash is not None else None


def canonical_json(data: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text: the same data, the same string."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


__all__ = ["AgentLimits", "Budget", "DatasetRef", "GenerationSpec", "HumanLabels", "JudgeSpec", "ModelSpec", "Money", "RetryOf", "RunSpec",
           "ScorerSpec", "ShardSpec", "StopRule", "canonical_json"]
