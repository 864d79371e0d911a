"""LLM-as-judge for short-prose and long-prose items, and a check of the judge against exact match.

The judge sees the question, the reference response(s), the item's support and the candidate answer,
reasons, then ends with one line `GRADE: CORRECT | PARTIALLY_CORRECT | INCORRECT` (rubric below and
in docs/scoring-rules.md). The grade parser is strict: a reply without a well-formed final grade is a
judge **error** (not scored, retried by a re-run), never a wrong answer. The judge's reasoning is kept.

A benchmark may declare its own judge (`BenchmarkJudge`: its authors' judge prompt and verdict parser, e.g.
simple-evals' SimpleQA grader, HLE's judge) through its answer rule (`judged_rule`); the generic judge above
stays the default for every other benchmark. The rule's name is the run's `answer_rule` and the prompt builder
declares the judge template's hash, so both are in the run id.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.model import GenerateRequest, Generation, GenerationSpec, Message, Model
from ..core.results import JudgeAgreement
from ..data.records import Item
from ..log.runlog import SCORED_OUTCOMES as SCORED
from ..log.runlog import JudgeCheck, JudgeDetails, JudgeUsage, Outcome
from ..util.errors import CostLimitReached
from .base import JUDGE_PENDING, Answered, Scored
from .budget import GaveUp, within_budget
from .extract import NONE, AnswerRule, Extraction, split_reasoning
from .scorers import GenerationScorer

if TYPE_CHECKING:
    from ..data.tasks import Task
from .text_metrics import overlap_metrics

JUDGE_VERSION = "proctor-judge/1"
GRADES = {"CORRECT": 1.0, "PARTIALLY_CORRECT": 0.5, "INCORRECT": 0.0}
JUDGE_SETTINGS = GenerationSpec(temperature=0.0, max_tokens=1024)

JUDGE_SYSTEM = "You are a careful, impartial grader of answers to exam questions."

RUBRIC = """\
Grade the candidate answer against the reference answer.

- CORRECT: the candidate states the same essential facts as the reference (wording may differ; extra
  detail is fine if it is accurate and does not contradict the reference).
- PARTIALLY_CORRECT: the candidate gets part of the essential content right but omits a required
  element or adds an error that does not reverse its main claim.
- INCORRECT: the candidate contradicts the reference, misses its essential content, is off-topic, or
  refuses or hedges without committing to an answer.

Judge only substance, not style, length or confidence. Use the support, when given, to resolve doubt
about what the reference means; do not reward content that is in the support but not asked for.
"""

JUDGE_TEMPLATE = """\
{rubric}
## Question
{question}

## Reference answer
{reference}
{support}
## Candidate answer
{candidate}

First explain your reasoning in a few sentences. Then, on the last line, write exactly one of:
GRADE: CORRECT
GRADE: PARTIALLY_CORRECT
GRADE: INCORRECT
"""

# possessive runs and a grade ending in a letter: no two parts can trade characters, so a line of 20,000 underscores
# is read in linear time (the lazy group and the runs around it backtracked cubically, in C, past the grader budget)
_GRADE_RE = re.compile(
    r"^[ \t>*_#`]*+GRADE[ \t*_`]*+:[ \t*_`]*+([A-Za-z_ ]*[A-Za-z])[ \t*_`.]*+$", re.MULTILINE | re.IGNORECASE
)
# a candidate's line that reads like a verdict (`GRADE: CORRECT`, `correct: yes`, `"correct": "yes"`): the judge's
# reply may quote it, and the verdict is the judge's, never the candidate's
_VERDICT_LIKE = re.compile(r"\b(grade|correct)\W{0,8}[:=]", re.IGNORECASE)


def judge_own_text(judge_text: str, candidate: str) -> str:
    """The judge's reply with every verbatim quote of a verdict-like line of the candidate's answer blanked, so
    that a parser reads the verdict from the judge's own words only (an answer ending `correct: yes`, quoted by a
    judge that says `correct: no`, is read as no). A judge line identical to the candidate's is blanked too: the
    reply is then left whole when blanking would leave it no verdict-like line at all: a judge whose only verdict
    is word for word the candidate's line is read (the same verdict either way, unless the judge wrote none of its
    own and only quoted — the one case this cannot tell apart)."""
    quoted = {line.strip() for line in candidate.splitlines() if _VERDICT_LIKE.search(line)}
    own = judge_text
    for line in sorted((q for q in quoted if q), key=len, reverse=True):
        own = own.replace(line, " ")
    said = {v for q in quoted for v in _verdicts(q)}  # requoted in another case, spacing or layout: blanked too
    if said:
        own = "\n".join(" " if said & _verdicts(line) else line for line in own.split("\n"))
    return own if _VERDICT_LIKE.search(own) or not quoted else judge_text


_QUOTE_NOISE = re.compile(r"[\s>*_`\"'|]+")
_VERDICT_SAID = re.compile(r"(?:grade|correct)[:=][a-z0-9]+")


def _verdicts(line: str) -> set[str]:
    """The verdicts a line states, squeezed (`**Correct :** YES` and `{"correct": "yes"}` both `correct:yes`)."""
    return set(_VERDICT_SAID.findall(_QUOTE_NOISE.sub("", line).lower())) if _VERDICT_LIKE.search(line) else set()




@dataclass(frozen=True)
class JudgeReading:
    """What a benchmark's judge parser read from one judge reply."""

    outcome: Outcome  # CORRECT, WRONG or PARTIAL
    score: float
    grade: str  # the verdict as the benchmark names it (SimpleQA: A/B/C; HLE: yes/no)
    reasoning: str | None = None
    answer: str | None = None  # the final answer the judge read from the reply (HLE's extracted_final_answer)
    p_correct: float | None = None  # the reply's own stated confidence, 0-1 (HLE)


@dataclass(frozen=True)
class BenchmarkJudge:
    """A benchmark's own judge: the user message it sends (`prompt`, from `template`) and how it reads the
    verdict (`parse`: None when the reply holds no verdict, a judge error). Every reply is judged, an empty one
    too, as the authors' scripts do."""

    name: str  # recorded as the verdicts' judge_version
    source: str  # the upstream file (and commit) whose prompt and parser these are
    template: str  # the judge prompt template, verbatim (hashed into the run id)
    prompt: Callable[[Item, str], str]  # (item, the reply's final answer) -> the judge's user message
    parse: Callable[[str], JudgeReading | None]
    system: str | None = None
    settings: GenerationSpec | None = None  # the authors' judge sampling (None: proctor's, JUDGE_SETTINGS)

    def identity(self) -> dict[str, str]:
        """What the run id must change with: the judge's name and its template's bytes."""
        return {"judge": self.name, "judge_template": "sha256:" + hashlib.sha256(self.template.encode()).hexdigest()}


def _pending(item: Item, text: str) -> Scored:
    """A judged rule's first verdict: UNSCORED until the benchmark's judge grades the reply."""
    return Scored(Outcome.UNSCORED, JudgeDetails(), extracted=text.strip() or None, extraction_rule=JUDGE_PENDING)


def _nothing_read(text: str) -> Extraction:
    return Extraction(None, NONE)


@dataclass(frozen=True)
class JudgedRule(AnswerRule):
    """An answer rule whose verdict is its benchmark's judge's (`judge`): the reply goes to the judge whole."""

    judge: BenchmarkJudge | None = None


def judged_rule(judge: BenchmarkJudge) -> JudgedRule:
    """The answer rule a benchmark declares for a prompt kind its own judge grades (named after the judge)."""
    return JudgedRule(judge.name, "grader", judge.source, read=_nothing_read, score_whole=_pending, judge=judge)


def benchmark_judge(rule: AnswerRule | None) -> BenchmarkJudge | None:
    """The benchmark judge a prompt kind's rule declares (None: the generic judge)."""
    return rule.judge if isinstance(rule, JudgedRule) else None


def _reference_text(item: Item) -> str:
    accepted = item.accepted
    if len(accepted) == 1:
        return accepted[0].answer
    return "\n".join(f"- {g.answer} (credit {g.credit:g})" for g in sorted(accepted, key=lambda g: -g.credit))


def _support_text(item: Item) -> str:
    if not item.support:
        return ""
    support = item.support if isinstance(item.support, str) else "\n".join(f"- {s}" for s in item.support)
    return f"\n## Support for the reference\n{support}\n"


def judge_prompt(item: Item, answer: str) -> str:
    """The user message the judge sees for one candidate answer."""
    return JUDGE_TEMPLATE.format(
        rubric=RUBRIC,
        question=item.prompt.strip(),
        reference=_reference_text(item),
        support=_support_text(item),
        candidate=answer.strip() or "(empty answer)",
    )


def judge_request(item: Item, answer: str, settings: GenerationSpec = JUDGE_SETTINGS,
                  bench: BenchmarkJudge | None = None) -> GenerateRequest:
    if bench is not None:
        user = Message("user", bench.prompt(item, answer))
        system = (Message("system", bench.system),) if bench.system is not None else ()
        return GenerateRequest(messages=(*system, user), settings=settings)
    return GenerateRequest(
        messages=(Message("system", JUDGE_SYSTEM), Message("user", judge_prompt(item, answer))),
        settings=settings,
    )


def parse_grade(text: str) -> str | None:
    """The grade on the judge's final `GRADE:` line, or None when missing, unknown or conflicting.

    Strict: the last `GRADE:` line decides and must name one of the three grades exactly (case and
    markdown emphasis tolerated); nothing but whitespace may follow it.
    """
    matches = list(_GRADE_RE.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    if text[last.end() :].strip():
        return None
    grade = last.group(1).strip().upper().replace(" ", "_")
    return grade if grade in GRADES else None


def _reasoning(text: str) -> str:
    matches = list(_GRADE_RE.finditer(text))
    return (text[: matches[-1].start()] if matches else text).strip()


def grade_to_score(
    item: Item, answer: str, judge_text: str | None, error: str | None, judge_name: str,
    bench: BenchmarkJudge | None = None,
) -> Scored:
    """Turn one judge reply into a verdict (errors and unparseable replies are ERROR, not wrong)."""
    refs = [g.answer for g in item.accepted if g.credit > 0]
    details: dict[str, Any] = {"judge_model": judge_name,
                               "judge_version": bench.name if bench is not None else JUDGE_VERSION}
    details.update(overlap_metrics(answer, refs))
    extracted = answer.strip() or None
    if bench is not None:
        return _bench_verdict(bench, extracted, judge_text, error, judge_name, details)
    if extracted is None:
        return _judge_verdict(Outcome.NO_ANSWER, 0.0, None, "none", details)
    if error is not None:  # judge_error becomes the sample's error: say that it was the judge that failed
        return _judge_failed(extracted, details, f"judge {judge_name} could not grade the answer: {error}")
    details["judge_raw"] = judge_text or ""
    own = judge_own_text(judge_text or "", answer)
    try:
        grade = within_budget("judge GRADE parser", parse_grade, own, text=own)
    except GaveUp as e:
        return _judge_failed(extracted, details, f"judge {judge_name}'s reply could not be read ({e.why})")
    if grade is None:
        return _judge_failed(extracted, details, f"judge {judge_name} replied without a parseable GRADE line")
    credit = GRADES[grade]
    details |= {"judge_grade": grade, "judge_reasoning": _reasoning(own)}
    outcome = Outcome.CORRECT if credit == 1.0 else Outcome.PARTIAL if credit > 0 else Outcome.WRONG
    return _judge_verdict(outcome, credit, extracted, "judge", details)


def _bench_verdict(bench: BenchmarkJudge, extracted: str | None, judge_text: str | None, error: str | None,
                   judge_name: str, details: dict[str, Any]) -> Scored:
    """A benchmark judge's verdict: its parser's reading of the reply (an ERROR when it reads none)."""
    shown = extracted or ""
    if error is not None:
        return _judge_failed(shown, details, f"judge {judge_name} could not grade the answer: {error}")
    details["judge_raw"] = judge_text or ""
    own = judge_own_text(judge_text or "", shown)
    try:
        reading = within_budget(bench.name, bench.parse, own, text=own)
    except GaveUp as e:
        return _judge_failed(shown, details, f"judge {judge_name}'s reply could not be read ({e.why})")
    if reading is None:
        return _judge_failed(shown, details, f"judge {judge_name} replied without a verdict {bench.name} can read")
    details |= {"judge_grade": reading.grade, "judge_reasoning": reading.reasoning, "judge_answer": reading.answer,
                "p_correct": reading.p_correct}
    return _judge_verdict(reading.outcome, reading.score, extracted, "judge", details)


def _judge_verdict(outcome: Outcome, credit: float | None, extracted: str | None, rule: str,
                   details: dict[str, Any], error: str | None = None) -> Scored:
    return Scored(outcome, JudgeDetails.model_validate(details), score=credit, extracted=extracted,
                  extraction_rule=rule, error=error)


def _judge_failed(extracted: str | None, details: dict[str, Any], message: str) -> Scored:
    """The judge could not grade: an ERROR (retried by a re-run) whose error says the judge failed."""
    return _judge_verdict(Outcome.ERROR, None, extracted, "judge", details | {"judge_error": message}, message)


async def judge_items(
    judge_model: Model,
    pairs: Sequence[tuple[Item, str]],
    settings: GenerationSpec = JUDGE_SETTINGS,
    bench: BenchmarkJudge | None = None,
) -> list[Scored]:
    """Grade every (item, answer text) pair with one batched `generate` call on the judge model.

    Empty answers are NO_ANSWER without asking the generic judge; a benchmark's own judge grades every answer.
    """
    todo = [i for i, (_, answer) in enumerate(pairs) if answer.strip() or bench is not None]
    gens = (
        await judge_model.generate([judge_request(pairs[i][0], pairs[i][1], settings, bench) for i in todo])
        if todo
        else []
    )
    if len(gens) != len(todo):
        raise RuntimeError(
            f"judge {judge_model.name} returned {len(gens)} generations for {len(todo)} requests"
        )
    by_index = dict(zip(todo, gens))
    out: list[Scored] = []
    for i, (item, answer) in enumerate(pairs):
        gen = by_index.get(i)
        text, error = (gen.text, gen.error) if gen is not None else (None, None)
        verdict = grade_to_score(item, answer, text, error, judge_model.name, bench)
        if gen is not None:  # the judge was asked: what it billed goes on the run's bill
            verdict = replace(verdict, details=verdict.details.model_copy(update=_judge_call(gen)))
        out.append(verdict)
    return out


def _judge_call(gen: Generation) -> dict[str, Any]:
    """What one judge call billed (`judge_usage`) and thought (`judge_thinking`), for the verdict's details."""
    unbilled = gen.error is not None and gen.input_tokens is None and gen.output_tokens is None
    usage = JudgeUsage(input_tokens=gen.input_tokens, output_tokens=gen.output_tokens,
                       failed=1 if unbilled else None)  # a failed call that reported no usage was not billed
    return {"judge_usage": usage} | ({"judge_thinking": gen.reasoning} if gen.reasoning else {})


# ---------------------------------------------------------------- the Scorer (proctor.run.runner)


@dataclass(frozen=True)
class JudgeScorer(GenerationScorer):
    """Generation scoring where prose answers are graded by `judge` (one batched call per batch).

    Exact-answer items named in `agreement_ids` are judged too (epoch 0), and the verdict is kept in
    `details["judge_check"]` for the judge/exact-match agreement in results.json. A judge failure makes
    the sample an ERROR with `error` set (retried by a re-run), never a wrong answer."""

    judge: Model | None = None
    agreement_ids: frozenset[str] = frozenset()
    kind: str = "judge"
    judge_settings: GenerationSpec = JUDGE_SETTINGS  # the judge's own (--judge-temperature, --judge-max-tokens)

    def identity(self) -> dict[str, Any]:
        judge = self.judge.name if self.judge is not None else None
        own = {"judge_settings": self.judge_settings.as_dict()} if self.judge_settings != JUDGE_SETTINGS else {}
        return {**super().identity(), "judge": judge, "judge_version": JUDGE_VERSION,
                "judge_agreement": len(self.agreement_ids), **own}

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        verdicts = await super().score(task, batch)
        to_judge = [i for i, v in enumerate(verdicts) if v.needs_judge]
        to_check = [
            i for i, (a, v) in enumerate(zip(batch, verdicts, strict=True))
            if a.item.identifier in self.agreement_ids and a.epoch == 0 and v.outcome in SCORED
            and v.outcome is not Outcome.TRUNCATED
            and v.raw_output is not None
        ]
        if not (to_judge or to_check) or self.judge is None:
            return verdicts
        pairs = [(batch[i].item, split_reasoning(verdicts[i].raw_output or "").answer) for i in to_judge + to_check]
        bench = benchmark_judge(task.answer_rule(self.prompt_kind))
        try:
            if bench is None:
                graded = await judge_items(self.judge, pairs, self.judge_settings)
            else:  # the benchmark's judge grades its answers; an agreement check is the generic judge's
                graded = [*await judge_items(self.judge, pairs[: len(to_judge)], self.judge_settings, bench),
                          *await judge_items(self.judge, pairs[len(to_judge) :], self.judge_settings)]
        except CostLimitReached:  # the answers are paid for and kept (errors: a re-run judges them); the run stops
            return [_not_judged(v, self.judge.name) if i in to_judge else v for i, v in enumerate(verdicts)]
        for i, g in zip(to_judge, graded[: len(to_judge)], strict=True):
            verdicts[i] = replace(verdicts[i], outcome=g.outcome, score=g.score, extracted=g.extracted,
                                  extraction_rule=g.extraction_rule, details=g.details, error=g.error)
        for i, g in zip(to_check, graded[len(to_judge) :], strict=True):
            check = JudgeCheck(outcome=g.outcome, score=g.score, details=JudgeDetails.model_validate(g.details.as_dict()))
            verdicts[i] = replace(verdicts[i], details=verdicts[i].details.model_copy(update={"judge_check": check}))
        return verdicts


def judge_usages(details: Any) -> list[tuple[int | None, int | None]]:
    """(input_tokens, output_tokens) of each judge call recorded in a sample's details (the grade, and the
    agreement check on an exact-answer item); failed calls that reported no usage were not billed."""
    found: list[JudgeUsage | None] = [details.get("judge_usage")]
    check = details.get("judge_check")
    if isinstance(check, JudgeCheck):
        found.append(check.details.judge_usage)
    return [(u.input_tokens, u.output_tokens) for u in found if u is not None and not u.failed]


def _not_judged(verdict: Scored, judge_name: str) -> Scored:
    """An answer the judge was not asked to grade because `--max-cost` was reached: an error, retried on resume."""
    message = f"judge {judge_name} not asked: --max-cost reached"
    kept = {k: v for k, v in verdict.details.model_dump().items() if k in JudgeDetails.model_fields}  # the overlap
    details = kept | {"kind": "judge", "judge_model": judge_name, "judge_error": message}
    return replace(verdict, outcome=Outcome.ERROR, score=None, extraction_rule="judge",
                   details=JudgeDetails.model_validate(details), error=message)


# ---------------------------------------------------------------- judge agreement

_Verdict = Scored | Outcome | bool


def _label(v: _Verdict) -> str | None:
    """correct / partial / wrong, or None when the verdict is not a grade (error, unscored)."""
    if isinstance(v, bool):
        return "correct" if v else "wrong"
    outcome = v.outcome if isinstance(v, Scored) else v
    if outcome is Outcome.CORRECT:
        return "correct"
    if outcome is Outcome.PARTIAL:
        return "partial"
    if outcome in (Outcome.WRONG, Outcome.NO_ANSWER):
        return "wrong"
    return None


def cohens_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels; None when undefined (no items, or chance agreement is 1)."""
    n = len(a)
    if n == 0 or n != len(b):
        return None
    p_obs = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_exp = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_exp >= 1.0:
        return None
    return (p_obs - p_exp) / (1.0 - p_exp)


def judge_agreement(pairs: Iterable[tuple[_Verdict, _Verdict]]) -> JudgeAgreement:
    """How often the judge agrees with exact-match scoring on items that have exact answers.

    `pairs` holds (judge verdict, exact-match verdict) as `Scored`s, Outcomes or booleans (True =
    correct). Pairs where either side is an error or unscored are skipped and counted.
    """
    judge: list[str] = []
    exact: list[str] = []
    skipped = 0
    for j, e in pairs:
        lj, le = _label(j), _label(e)
        if lj is None or le is None:
            skipped += 1
            continue
        judge.append(lj)
        exact.append(le)
    n = len(judge)
    agree = sum(x == y for x, y in zip(judge, exact))
    confusion: dict[str, int] = Counter(f"{x}/{y}" for x, y in zip(judge, exact))
    return JudgeAgreement(n=n, n_skipped=skipped, agreement=agree / n if n else None,
                          kappa=cohens_kappa(judge, exact), confusion=dict(sorted(confusion.items())))
