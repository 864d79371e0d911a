"""Score probsem test suites: every context × query pair, in one batched log-likelihood call.

The text of a sample (default `join="newline"`, exactly as probsem built it): the non-empty parts among
prompt text, pretext, context text and posttext joined by "\\n", then "\\n" and the query on its own line.
The prompt text is used as read (a prompt file ending in a newline therefore leaves a blank line, as in
probsem). The model scores the query as the continuation of everything before it. With `join="space"`
the query follows the posttext after one space instead (the space belongs to the scored continuation).
PMI subtracts the query's log-prob after the posttext alone (same join; an empty posttext means the
query is scored after the BOS token only).

Besides the probsem outputs, `write_run_log` writes a proctor run log (docs/runlog.md): one `Sample` per
context, results from `proctor.stats.summarize`, and a `Manifest`, so reports, history and comparisons
work on suite runs. The metrics (Wilson interval, Brier, ECE, log-loss) are `proctor.stats`'s.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import platform
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..models.base import Capability, Loglikelihood, LoglikelihoodRequest, Model
from ..models.registry import require
from ..records import ContextCase, Prompt, TestSuite
from ..runlog import MANIFEST, RESULTS, SAMPLES, Manifest, Outcome, RunLog, Sample, read_run
from ..stats import calibration, wilson_interval
from ..textio import dumps_jsonl, write_json_atomic, write_text_atomic
from .logprob import Norm, all_norms, apply_temperature, argmax_ties, softmax

Join = Literal["newline", "space"]


@dataclass(frozen=True)
class ScoreOptions:
    norm: Norm = Norm.SUM
    temperature: float = 1.0
    join: Join = "newline"

    def __post_init__(self) -> None:
        object.__setattr__(self, "norm", Norm(self.norm))
        if self.join not in ("newline", "space"):
            raise ValueError(f"join must be newline or space, got {self.join!r}")


@dataclass
class ContextResult:
    """One context of a suite with the scores of every query."""

    index: int
    text: str  # probsem's `text`: pretext, context text and posttext (non-empty, newline-joined)
    expected: int
    queries: list[dict[str, Any]]  # per query: query, logprob, n_tokens, n_chars, n_bytes, norms, score, probability
    predicted: int | None = None
    ties: list[int] = field(default_factory=list)  # indexes at the maximum when more than one
    correct: bool | None = None  # None: not scored (expected -1, or an error)
    error: str | None = None
    prefix: str = ""  # everything before the query, as the model saw it (run log `prompt`; not in the JSONL)
    case_text: str = ""  # the context's own text (run log details["context"]; not in the JSONL)

    @property
    def probabilities(self) -> list[float]:
        return [q["probability"] for q in self.queries]

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "text": self.text, "expected": self.expected, "predicted": self.predicted,
            "correct": self.correct, "tie": len(self.ties) > 1, "ties": self.ties,
            "distribution": self.probabilities if self.error is None else None,
            "queries": self.queries, "error": self.error,
        }


@dataclass
class SuiteResult:
    prompt: str
    suite: str
    contexts: list[ContextResult]
    summary: dict[str, Any]


def split_sample(prompt: Prompt, suite: TestSuite, case: ContextCase, query: str, join: Join = "newline") -> LoglikelihoodRequest:
    """The (context, continuation) pair whose log-likelihood scores `query` for `case` (see module doc)."""
    head = "\n".join(p for p in (prompt.text, suite.pretext, case.text, suite.posttext) if p != "")
    return LoglikelihoodRequest(head + "\n", query) if join == "newline" else LoglikelihoodRequest(head, " " + query)


def full_text(prompt: Prompt, suite: TestSuite, case: ContextCase, query: str, join: Join = "newline") -> str:
    req = split_sample(prompt, suite, case, query, join)
    return req.context + req.continuation


def _unconditional(suite: TestSuite, query: str, join: Join) -> LoglikelihoodRequest:
    if join == "newline":
        return LoglikelihoodRequest(suite.posttext + "\n" if suite.posttext else "", query)
    return LoglikelihoodRequest(suite.posttext, " " + query)


async def score_suites(
    model: Model, prompt: Prompt, suites: list[TestSuite], options: ScoreOptions = ScoreOptions()
) -> list[SuiteResult]:
    """Score every context × query pair of every suite with one `model.loglikelihood` call."""
    require(model, Capability.LOGLIKELIHOOD, "scoring test suites needs log-probabilities")
    apply_temperature([0.0], options.temperature)  # validate early
    requests: list[LoglikelihoodRequest] = []
    for s in suites:
        for c in s.context:
            requests.extend(split_sample(prompt, s, c, q, options.join) for q in s.queries)
        requests.extend(_unconditional(s, q, options.join) for q in s.queries)
    results = await model.loglikelihood(requests)
    out, k = [], 0
    for s in suites:
        n_pairs = len(s.context) * len(s.queries)
        pairs, uncond = results[k : k + n_pairs], results[k + n_pairs : k + n_pairs + len(s.queries)]
        k += n_pairs + len(s.queries)
        contexts = [
            _score_context(i, s, c, pairs[i * len(s.queries) : (i + 1) * len(s.queries)], uncond, options)
            for i, c in enumerate(s.context)
        ]
        for ctx, case in zip(contexts, s.context):
            ctx.prefix = split_sample(prompt, s, case, s.queries[0], options.join).context
            ctx.case_text = case.text
        out.append(SuiteResult(prompt.name, s.name, contexts, summarize(contexts)))
    return out


def _score_context(
    index: int, suite: TestSuite, case: ContextCase, res: list[Loglikelihood], uncond: list[Loglikelihood],
    options: ScoreOptions,
) -> ContextResult:
    text = "\n".join(p for p in (suite.pretext, case.text, suite.posttext) if p != "")
    queries: list[dict[str, Any]] = []
    errors = [r.error for r in res if r.error] + (
        [u.error for u in uncond if u.error] if options.norm is Norm.PMI else []
    )
    for q, r, u in zip(suite.queries, res, uncond):
        unc = u.logprob if u.error is None else None
        norms = all_norms(r.logprob, n_tokens=r.n_tokens, text=q, unconditional=unc) if r.error is None else {}
        queries.append({
            "query": q, "logprob": r.logprob if r.error is None else None, "n_tokens": r.n_tokens,
            "n_chars": len(q), "n_bytes": len(q.encode("utf-8")), "is_greedy": r.is_greedy,
            "unconditional_logprob": unc, "norms": norms, "error": r.error,
        })
    result = ContextResult(index, text, case.expected, queries)
    if errors:
        result.error = errors[0]
        for row in queries:
            row["score"] = row["probability"] = None
        return result
    scores = apply_temperature([row["norms"][options.norm.value] for row in queries], options.temperature)
    probs = softmax(scores)
    for row, sc, pr in zip(queries, scores, probs):
        row["score"], row["probability"] = sc, pr
    top = argmax_ties(scores)
    result.predicted = top[0]
    result.ties = top if len(top) > 1 else []
    if case.expected >= 0:
        result.correct = top == [case.expected]  # a tie at the maximum is never counted correct
    return result


# ---------------------------------------------------------------- summary.json metrics
def summarize(contexts: list[ContextResult]) -> dict[str, Any]:
    """Accuracy (95% Wilson CI), ties, Brier, ECE and mean log-loss over contexts with expected >= 0.

    Brier, ECE and log-loss are `proctor.stats.calibration`'s (the numbers results.json reports).
    """
    scored = [c for c in contexts if c.correct is not None]
    n_correct = sum(bool(c.correct) for c in scored)
    lo, hi = wilson_interval(n_correct, len(scored)) if scored else (None, None)
    out: dict[str, Any] = {
        "n_contexts": len(contexts), "n_scored": len(scored),
        "n_unscored": sum(1 for c in contexts if c.expected < 0 and c.error is None),
        "n_errors": sum(1 for c in contexts if c.error is not None),
        "n_correct": n_correct, "n_ties": sum(1 for c in contexts if c.ties),
        "accuracy": n_correct / len(scored) if scored else None,
        "ci_low": lo, "ci_high": hi, "ci_method": "wilson",
        "brier": None, "ece": None, "log_loss": None,
    }
    if scored:
        cal = calibration([c.probabilities for c in scored], [c.expected for c in scored])
        out.update(brier=cal["brier"], ece=cal["ece"], log_loss=cal["log_loss"])
    return out


# ---------------------------------------------------------------- outputs
def csv_text(result: SuiteResult) -> str:
    """probsem-compatible table: text, query, logp (the normalized, tempered score), score (probability)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["text", "query", "logp", "score"])
    for c in result.contexts:
        for q in c.queries:
            w.writerow([c.text, q["query"], _num(q["score"]), _num(q["probability"])])
    return buf.getvalue()


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def write_outputs(out_dir: str | Path, result: SuiteResult, options: ScoreOptions,
                  model: str | None = None) -> dict[str, Path]:
    """Write `<P>_<T>_<model>_results.csv` and `.jsonl` atomically (probsem's naming, so several models
    accumulate in one directory; `proctor.formats.suites.results_stem`); return their paths."""
    from ..formats.suites import results_stem

    d = Path(out_dir)
    stem = results_stem(result.prompt, result.suite, model)
    csv_path, jsonl_path = d / f"{stem}.csv", d / f"{stem}.jsonl"
    write_text_atomic(csv_path, csv_text(result))
    rows = [
        {"prompt": result.prompt, "suite": result.suite, "norm": options.norm.value,
         "temperature": options.temperature, "join": options.join, **c.as_dict()}
        for c in result.contexts
    ]
    write_text_atomic(jsonl_path, dumps_jsonl(rows))
    return {"csv": csv_path, "jsonl": jsonl_path}


def write_summary(out_dir: str | Path, results: list[SuiteResult]) -> Path:
    """`summary.json`: each suite's summary and the pooled one."""
    path = Path(out_dir) / "summary.json"
    pooled = summarize([c for r in results for c in r.contexts])
    write_json_atomic(path, {
        "suites": {f"{r.prompt}_{r.suite}": r.summary for r in results}, "overall": pooled,
    })
    return path


# ---------------------------------------------------------------- run log (docs/runlog.md)
def suite_labels(results: Sequence[SuiteResult]) -> list[str]:
    """Each result's category: the suite name, or `<P>_<T>` when suite names repeat across prompts."""
    names = [r.suite for r in results]
    unique = len(set(names)) == len(names)
    return [r.suite if unique else f"{r.prompt}_{r.suite}" for r in results]


def _sample(label: str, dataset: str, c: ContextResult, queries: list[str], options: ScoreOptions) -> Sample:
    """One context as a run-log sample: predicted query, outcome, and the distribution for calibration."""
    if c.error is not None:
        outcome, score = Outcome.ERROR, None
    elif c.correct is None:
        outcome, score = Outcome.UNSCORED, None
    else:
        outcome, score = (Outcome.CORRECT, 1.0) if c.correct else (Outcome.WRONG, 0.0)
    details: dict[str, Any] = {
        "queries": queries, "expected": c.expected, "context": c.case_text, "text": c.text,
        "logprobs": {q["query"]: q["logprob"] for q in c.queries},
        "scores": [q.get("score") for q in c.queries],
        "ties": (len(c.ties) or 1) if c.predicted is not None else 0,
    }
    if c.error is None:
        details["distribution"] = c.probabilities
    return Sample(
        sample_id=f"{label}.{c.index}#0", item_id=f"{label}.{c.index}", dataset=dataset, category=label,
        modality=f"choiceof{len(queries)}", mode="logprob", prompt=c.prefix, reference=c.expected,
        extracted=queries[c.predicted] if c.predicted is not None else None,
        extraction_rule=f"argmax-{options.norm.value}", score=score, outcome=outcome, error=c.error,
        input_tokens=sum(q["n_tokens"] or 0 for q in c.queries) or None, details=details,
    )


def run_samples(results: Sequence[SuiteResult], options: ScoreOptions, dataset: str) -> list[Sample]:
    """One `Sample` per context of every suite, in order."""
    return [
        _sample(label, dataset, c, [q["query"] for q in c.queries], options)
        for label, r in zip(suite_labels(results), results)
        for c in r.contexts
    ]


def content_hash(files: Sequence[Path]) -> str:
    """sha256 over the input files' bytes, in order (prompt, then suites)."""
    h = hashlib.sha256()
    for f in files:
        h.update(hashlib.sha256(Path(f).read_bytes()).digest())
    return "sha256:" + h.hexdigest()


def join_template_hash(join: Join) -> str:
    """The prompt template hash of a suite run: it identifies the join rule (see module doc)."""
    from ..tasks import text_hash

    return text_hash("probsem-suite", f"join={join}")


def run_manifest(
    results: Sequence[SuiteResult], options: ScoreOptions, *, model: Model, files: Sequence[Path],
    started_at: str, finished_at: str | None = None, command: list[str] | None = None, **extra: Any,
) -> Manifest:
    """The provenance of a suite run; run_id is a function of the inputs, the model and the options."""
    from .. import __version__
    from ..provenance import git_sha as _git_sha

    prompts = list(dict.fromkeys(r.prompt for r in results))
    name = prompts[0] if len(prompts) == 1 else "+".join(prompts)
    chash = content_hash(files)
    identity = {"dataset": chash, "model": model.name, "norm": options.norm.value,
                "temperature": options.temperature, "join": options.join}
    run_id = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
    return Manifest.model_validate({
        "run_id": run_id, "proctor_version": __version__, "git_sha": _git_sha(),
        "dataset": {"name": name, "source": [str(f) for f in files], "content_hash": chash,
                    "n_items": sum(len(r.contexts) for r in results)},
        "model": model.describe(), "mode": "logprob", "prompt_kind": "probsem-suite",
        "prompt_template_hash": join_template_hash(options.join), "extractor_version": f"argmax-{options.norm.value}",
        "generation": {}, "command": command,
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(),
                 "python": platform.python_version(), "cpus": os.cpu_count()},
        "started_at": started_at, "finished_at": finished_at,
        "norm": options.norm.value, "temperature": options.temperature, "join": options.join, **extra,
    })


def write_run_log(out_dir: str | Path, manifest: Manifest, results: Sequence[SuiteResult],
                  options: ScoreOptions) -> RunLog:
    """Write samples.jsonl, results.json (`proctor.stats.summarize`) and manifest.json, each atomically."""
    from ..stats import summarize as summarize_samples

    d = Path(out_dir)
    samples = run_samples(results, options, str(manifest.dataset["name"]))
    write_text_atomic(d / SAMPLES, "".join(s.model_dump_json(exclude_none=False) + "\n" for s in samples))
    write_json_atomic(d / RESULTS, summarize_samples(samples))
    write_json_atomic(d / MANIFEST, manifest.model_dump(mode="json"))
    return read_run(d)
