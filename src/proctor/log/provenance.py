"""What every run records about where, when and by what it was made (never secrets): the typed records of
a manifest's provenance (`Provenance`, `BackendIdentity`, `BackendInfo`, `HostInfo`) and their collectors."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from .._version import __version__
from ..core.model import GenerationSpec


def git_sha() -> str | None:
    """The commit of proctor's own source, when it runs from a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def host_info() -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


# ---------------------------------------------------------------- the typed records a manifest holds

JsonScalar = str | int | float | bool | None
#: the packages whose versions change a local backend's numbers, recorded when the run has imported them
NUMERIC_PACKAGES = ("torch", "transformers", "tokenizers", "vllm")


class Record(BaseModel):
    """A provenance record: every key is declared (`extra="forbid"`), so a misspelt one is refused, not kept, and
    every typed float is finite (a NaN or `1e999` is refused at the manifest, never exported)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON, unset keys left out."""
        return self.model_dump(mode="json", exclude_none=True)


class OpenRecord(Record):
    """A record whose shared keys are fields and whose one declared catch-all (`REST`) holds what one source alone
    has (a backend's own options, a dataset source's own keys): built from a flat dict with `of`, back with `flat`."""

    REST: ClassVar[str] = "settings"

    @classmethod
    def of(cls, flat: Mapping[str, Any]) -> Self:
        """From a flat dict (a backend's `describe()`/`identity()`, a task's `provenance()`)."""
        return cls.model_validate(_split(cls, flat, cls.REST))

    def flat(self) -> dict[str, Any]:
        """The flat dict again (the cache key's shape, for an identity)."""
        return _flatten(self, self.REST)


class HostInfo(Record):
    """The machine the run was made on."""

    hostname: str | None = None
    platform: str | None = None
    python: str | None = None
    cpus: int | None = None


class BackendIdentity(OpenRecord):
    """What answered, resolved (`Model.identity()`, the cache identity): the dtype that ran, never `auto`.

    The keys every local or served backend shares are fields; the settings one backend alone has that change
    its answers (vLLM's parallelism, an endpoint's `chat`) are in `settings`."""

    spec: str
    model: str | None = None  # the served model name (openai:, anthropic:, vllm:)
    weights: str | None = None  # a local directory's fingerprint, or the hub commit
    dtype: str | None = None  # the dtype that ran (models/dtype.py)
    device: str | None = None
    max_length: int | None = None
    chat_template: str | None = None  # the chat template's hash (tokenizer files are in `weights`)
    engine: str | None = None  # "vllm 0.32.0"
    gpus: list[str] | None = None
    gpu_count: int | None = None
    settings: dict[str, JsonValue] = Field(default_factory=dict)


class BackendInfo(OpenRecord):
    """The backend that answered and how it was set up (`Model.describe()`; never a secret).

    Shared keys are fields; a backend's own options (batch size, concurrency, the engine command…) are in
    `settings`."""

    spec: str
    capabilities: list[str] = Field(default_factory=list)
    model: str | None = None
    path: str | None = None
    base_urls: list[str] | None = None
    base_url: str | None = None  # an imported run's single endpoint
    api_key_env: str | None = None  # the variable the key came from (never the key)
    dtype: str | None = None
    device: str | None = None
    settings: dict[str, JsonValue] = Field(default_factory=dict)


class Provenance(Record):
    """Where, with what and by what the run was made: versions, host, commit, and the resolved backend."""

    proctor_version: str
    git_sha: str | None = None
    host: HostInfo = Field(default_factory=HostInfo)
    packages: dict[str, str] = Field(default_factory=dict)  # torch, transformers, vllm… when the run used them
    backend: BackendIdentity


def _split(cls: type[BaseModel], flat: Mapping[str, Any], rest: str) -> dict[str, Any]:
    known = {k: v for k, v in flat.items() if k in cls.model_fields and k != rest}
    return {**known, rest: {**dict(flat.get(rest) or {}), **{k: v for k, v in flat.items() if k not in cls.model_fields}}}


def _flatten(record: BaseModel, rest: str) -> dict[str, Any]:
    data = record.model_dump(mode="json", exclude_none=True)
    return {**{k: v for k, v in data.items() if k != rest}, **data.get(rest, {})}


def package_versions(backend: BackendIdentity | None = None) -> dict[str, str]:
    """The versions of the numeric packages this process has imported (a backend that ran locally), and the
    vLLM engine's own version when one served the run."""
    found = {}
    for name in NUMERIC_PACKAGES:
        if name in sys.modules:
            try:
                found[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
    if backend is not None and backend.engine and backend.engine.startswith("vllm "):
        found["vllm"] = backend.engine.removeprefix("vllm ")
    return found


def collect_provenance(identity: Mapping[str, Any]) -> Provenance:
    """The provenance of a run now starting with the backend whose `identity()` is given."""
    backend = BackendIdentity.of(identity)
    return Provenance(proctor_version=__version__, git_sha=git_sha(), host=HostInfo(**host_info()),
                      packages=package_versions(backend), backend=backend)


class DatasetInfo(OpenRecord):
    """The data the run asked about: its name, where it came from, and the hash of the items asked.

    Keys every source may have are fields; what one source alone records (a probsem suite's files, MMLU-Pro's
    few-shot split, an imported task's version) is in `details`."""

    name: str
    source: str | None = None  # "file", "probsem", a hub repo, "lm-eval task X"…
    path: str | None = None
    sha256: str | dict[str, str] | None = None  # the file's, or each file's
    config: str | None = None
    split: str | None = None
    revision: str | None = None
    data_file: str | None = None
    data_file_sha256: str | None = None
    n_items: int | None = None
    content_hash: str | None = None
    spec: str | None = None  # a benchmark spec file's path (`proctor run my-bench.yaml`)
    spec_sha256: str | None = None  # and its bytes' hash
    details: dict[str, JsonValue] = Field(default_factory=dict)

    REST: ClassVar[str] = "details"


#: the scoring settings a RunSpec holds (`spec.scorer`): manifests before v5 kept them in the scorer record too
SCORER_SETTINGS = ("prompt_kind", "extract", "answer_rule", "no_answer")


class ScorerInfo(Record):
    """What scored the run beyond its settings: the Scorer's kind, its reader, its judge, an import's harness.
    The scoring settings themselves (prompt kind, extract, answer rule, no-answer) are the spec's alone
    (`Manifest.spec.scorer`; `Manifest.prompt_kind`… read them); the generation settings likewise."""

    scorer: str | None = None  # "generation", "judge", "choice", "suite", "imported"
    extractor: str | None = None
    judge: str | None = None
    judge_version: str | None = None
    judge_agreement: int | None = None
    judge_settings: GenerationSpec | None = None  # the judge's own settings, when not the default
    norm: str | None = None  # suites: the log-prob normalisation
    temperature: float | None = None  # suites: the softmax temperature
    join: str | None = None
    harness: str | None = None  # an imported run's harness and metric
    metric: str | None = None
    sandbox: str | None = None  # executed code: "bubblewrap", or "unsafe" (--unsafe-exec, no sandbox)
    limits: dict[str, float] | None = None  # executed code: the limits of each execution (scoring/execute)
    exec_limits: str | None = None  # executed code: whose limits, "authors" or "proctor" (the spec's --exec-limits)

    @classmethod
    def of(cls, identity: Mapping[str, Any]) -> ScorerInfo:
        """From a `Scorer.identity()`: its kind and reader (the settings it repeats from the spec left out)."""
        return cls.model_validate({k: v for k, v in identity.items() if k != "generation" and k not in SCORER_SETTINGS})


class ImportOrigin(Record):
    """`proctor import`: the other harness, its files (with their hashes), the task and the metric."""

    harness: str
    version: str | None = None
    task: str | None = None
    metric: str | None = None
    filter: str | None = None
    item_id: str | None = None  # the template the item ids were made with
    status: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    n_shot: JsonValue = None


class ClaimRecord(Record):
    """`run --claim`: the claim registered before the run (`proctor.run.claim`), by the hash of what it claims."""

    sha256: str  # of the claim's canonical JSON (`ClaimBody.sha256`): an edited claim no longer matches it
    written_at: str  # when the claim says it was written
    signer: str | None = None  # the claim's signing key's fingerprint, when it is signed


# ---------------------------------------------------------------- manifests written before v4

#: what manifests before v4 kept at the top level, now in `Manifest.provenance`
_MOVED_TO_PROVENANCE = ("proctor_version", "git_sha", "host", "model_identity")


def migrate_manifest(data: dict[str, Any]) -> dict[str, Any]:
    """A manifest written before v4 (open dicts; proctor at main 6639c56 and earlier) in the v4 shape: versions,
    host, commit and the model identity move into `provenance`; the generation settings, which it kept three
    times (`generation`, `scorer.generation`, `identity.generation`), are kept once; `identity` (the epochs and
    the scorer again) is dropped; the flat blocks split into their typed records. Reshaping only: the records
    validate the result."""
    old = dict(data)
    moved = {k: old.pop(k, None) for k in _MOVED_TO_PROVENANCE}
    identity = old.pop("identity", None)
    model: dict[str, Any] = old["model"] if isinstance(old.get("model"), dict) else {}
    backend = moved["model_identity"] if isinstance(moved["model_identity"], dict) else {"spec": model.get("spec")}
    settings = _split(BackendInfo, model, "settings")["settings"]
    packages = {k: str(settings.pop(k)) for k in ("torch", "transformers") if k in settings}
    old["provenance"] = {"proctor_version": moved["proctor_version"] or "unknown", "git_sha": moved["git_sha"],
                         "host": moved["host"] or {}, "packages": packages,
                         "backend": _split(BackendIdentity, backend, "settings")}
    if model:
        old["model"] = {**_split(BackendInfo, model, "settings"), "settings": settings}
    if isinstance(old.get("judge"), dict):
        old["judge"] = _split(BackendInfo, old["judge"], "settings")
    if isinstance(old.get("dataset"), dict):
        old["dataset"] = _split(DatasetInfo, old["dataset"], "details")
    old["scorer"] = _old_scorer(old.get("scorer") or {}, identity)
    generation = old.get("generation")
    old["generation"] = GenerationSpec.fields_of(generation) if isinstance(generation, dict) and generation else None
    return old


def _old_scorer(scorer: Any, identity: Any) -> Any:
    """An old `scorer` block without its copy of the generation settings; an imported run's `kind` is `scorer`."""
    if not isinstance(scorer, dict):
        return scorer
    if not scorer and isinstance(identity, dict):  # proctor 0.1 kept the scorer's settings in `identity` alone
        scorer = {k: v for k, v in identity.items() if k != "epochs"}
    renamed = {("scorer" if k == "kind" else k): v for k, v in scorer.items()}
    return {k: v for k, v in renamed.items() if k != "generation"}
