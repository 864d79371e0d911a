"""Score probsem test suites: every context × query pair, in one batched log-likelihood call.

The text of a sample (default `join="newline"`, exactly as probsem built it): the non-empty parts among
prompt text, pretext, context text and posttext joined by "\\n", then "\\n" and the query on its own line.
The prompt text is used as read (a prompt file ending in a newline therefore leaves a blank line, as in
probsem). The model scores the query as the continuation of everything before it. With `join="space"`
the query follows the posttext after one space instead (the space belongs to the scored continuation).
PMI subtracts the query's log-prob after the posttext alone (same join; an empty posttext means the
query is scored after the BOS token only).

Each context is one item (`proctor.data.formats.convert.suite_to_items`) scored by `SuiteScorer` through
the one run path (`proctor.run.pipeline.run`, whose engine is `proctor.run.runner.evaluate_async`): `proctor score` and `proctor run --mode logprob` on the
same suites score the same text and log the same samples. `suite_results` turns a run's samples back
into probsem's per-suite results (`proctor.metrics.suites`), which `proctor.interop.probsem_export` writes as CSV +
JSONL + summary.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..core.model import Capability, Loglikelihood, LoglikelihoodRequest
from ..data.records import ContextCase, Item, Prompt, TestSuite
from ..data.tasks import Task, text_hash
from ..log.runlog import Outcome, SuiteDetails
from ..util.errors import ProctorError
from .base import Answered, Request, Scored, usage_of
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


# ---------------------------------------------------------------- the Scorer (proctor.run.runner)
_META = "suite."


#: a suite's contexts share its pretext, posttext and queries: their errors are clustered by suite (the item's
#: subcategory, `proctor.data.formats.convert.suite_to_items`)
SUITE_CLUSTER = "subcategory"


def is_suite_item(item: Item) -> bool:
    """An item made from a suite context by `proctor.data.formats.convert.suite_to_items`."""
    return _META + "prompt" in item.metadata and _META + "index" in item.metadata


def suite_of(item: Item) -> tuple[str, str]:
    """The names of the prompt and the suite a context item came from."""
    return str(item.metadata[_META + "prompt"]), str(item.metadata.get(_META + "name", ""))


def suite_parts(item: Item) -> tuple[Prompt, TestSuite, ContextCase]:
    """The prompt, suite (with this one context) and context case a suite item was made from."""
    m = item.metadata
    case = ContextCase(text=item.prompt, expected=int(m.get(_META + "expected", -1)))
    suite = TestSuite(
        name=str(m.get(_META + "name", "")), pretext=str(m.get(_META + "pretext", "")), context=[case],
        posttext=str(m.get(_META + "posttext", "")), queries=list((item.choices or {}).values()),
    )
    return Prompt(name=str(m[_META + "prompt"]), text=item.task_prompt or ""), suite, case


@dataclass(frozen=True)
class SuiteScorer:
    """probsem scoring of one context per item: every query's log-prob (and its unconditional log-prob,
    for PMI), normalised, tempered and softmaxed into a distribution over the queries."""

    options: ScoreOptions = ScoreOptions()
    kind: str = "suite"
    mode: str = "logprob"
    capability: Capability = Capability.LOGLIKELIHOOD

    def check(self, task: Task) -> None:
        bad = [it.identifier for it in task.items if not is_suite_item(it)]
        if bad:
            raise ProctorError(f"{task.name}: {len(bad)} items are not suite contexts (e.g. {bad[0]})")
        apply_temperature([0.0], self.options.temperature)  # validates the temperature

    def identity(self) -> dict[str, Any]:
        o = self.options
        return {"scorer": self.kind, "norm": o.norm.value, "temperature": o.temperature, "join": o.join}

    def template_hash(self, task: Task) -> str:
        return join_template_hash(self.options.join)

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        prompt, suite, case = suite_parts(item)
        join = self.options.join
        return [*[split_sample(prompt, suite, case, q, join) for q in suite.queries], *[_unconditional(suite, q, join) for q in suite.queries]]

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        return [self._score_one(a) for a in batch]

    def _score_one(self, answered: Answered) -> Scored:
        prompt, suite, case = suite_parts(answered.item)
        n = len(suite.queries)
        res = [a for a in answered.answers if isinstance(a, Loglikelihood)]
        ctx = _score_context(int(answered.item.metadata[_META + "index"]), suite, case, res[:n], res[n:], self.options)
        ctx.prefix = split_sample(prompt, suite, case, suite.queries[0], self.options.join).context
        ctx.case_text = case.text
        return replace(_scored(ctx, suite.queries, self.options), usage=usage_of(answered.answers))  # PMI's too


def verdict(c: ContextResult) -> tuple[Outcome, float | None]:
    """A context's outcome and score: an error, unscored (no expected answer), else right (1) or wrong (0)."""
    if c.error is not None:
        return Outcome.ERROR, None
    if c.correct is None:
        return Outcome.UNSCORED, None
    return (Outcome.CORRECT, 1.0) if c.correct else (Outcome.WRONG, 0.0)


def _scored(c: ContextResult, queries: list[str], options: ScoreOptions) -> Scored:
    """One context's verdict as the runner records it (the probsem rows are kept for the CSV/JSONL)."""
    outcome, score = verdict(c)
    details: dict[str, Any] = {
        "queries": queries, "expected": c.expected, "context": c.case_text, "text": c.text,
        "index": c.index, "logprobs": {q["query"]: q["logprob"] for q in c.queries},
        "scores": [q.get("score") for q in c.queries],
        "ties": (len(c.ties) or 1) if c.predicted is not None else 0, "tie_indexes": c.ties,
        "rows": c.queries, "norm": options.norm.value, "temperature": options.temperature, "join": options.join,
    }
    if c.error is None:
        details["distribution"] = c.probabilities
    return Scored(
        outcome=outcome, details=SuiteDetails.model_validate(details), score=score,
        extracted=queries[c.predicted] if c.predicted is not None else None,
        extraction_rule=f"argmax-{options.norm.value}", error=c.error, prompt=c.prefix,
    )


def join_template_hash(join: Join) -> str:
    """The prompt template hash of a suite run: it identifies the join rule (see module doc)."""
    return text_hash("probsem-suite", f"join={join}")
