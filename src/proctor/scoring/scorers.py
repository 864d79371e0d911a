"""A scorer for every Item modality: model text in, `Scored` out (outcome, credit, extraction audit).

* boolean / ternary / choiceofN — the extracted closed answer must equal an accepted response.
* cloze / single-value — normalized match against ANY accepted response; when every accepted
  response is a number (AIME) the comparison is numeric (`\\boxed{011}` equals 11).
* Graded responses (`list[GradedAnswer]`) earn the best credit among the matching answers;
  0 < credit < 1 is PARTIAL.
* short-prose / long-prose — cannot be scored by rule: the verdict is UNSCORED with
  `needs_judge` true and lexical overlap in `details`; `proctor.scoring.judge` grades them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.model import Capability, GenerateRequest, Generation, GenerationSpec, Message, request_prompt
from ..data.records import GradedAnswer, Item, Modality
from ..log.runlog import GenerationDetails, Outcome, Reading, Readings, SecondAskRecord
from ..util.errors import ProctorError
from .base import JUDGE_PENDING, Answered, Request, Scored, Usage, usage_of
from .budget import GAVE_UP, GaveUp, within_budget
from .extract import (
    EXTRACTOR_VERSION,
    REFERENCE,
    ROBUST,
    AnswerRule,
    Extraction,
    extract_boolean,
    extract_choice,
    extract_number,
    extract_short,
    extract_ternary,
    normalize_answer,
    parse_number,
    split_reasoning,
)
from .reasoning import answer_text
from .text_metrics import overlap_metrics

if TYPE_CHECKING:
    from ..data.tasks import Task


def outcome_for(credit: float) -> Outcome:
    """CORRECT at full credit, PARTIAL strictly between 0 and 1, else WRONG."""
    if credit >= 1.0:
        return Outcome.CORRECT
    return Outcome.PARTIAL if credit > 0.0 else Outcome.WRONG


def _graded(
    ex: Extraction, accepted: list[GradedAnswer], matches: Callable[[str, str], bool], **details: Any
) -> Scored:
    info: dict[str, Any] = {"accepted": [g.answer for g in accepted], **details}
    if ex.rejected is not None:
        info["rejected"] = ex.rejected
    if ex.answer is None:
        return _rule_verdict(Outcome.NO_ANSWER, 0.0, None, ex.rule, info)
    credits = [g.credit for g in accepted if matches(ex.answer, g.answer)]
    credit = max(credits, default=0.0)
    if credits:
        info["matched_credit"] = credit
    return _rule_verdict(outcome_for(credit), credit, ex.answer, ex.rule, info)


def _rule_verdict(outcome: Outcome, credit: float | None, extracted: str | None, rule: str,
                  details: dict[str, Any]) -> Scored:
    return Scored(outcome, GenerationDetails.model_validate(details), score=credit, extracted=extracted,
                  extraction_rule=rule)


def _same_letter(got: str, ref: str) -> bool:
    return got.upper() == ref.strip().upper()


def _same_closed(got: str, ref: str) -> bool:
    return got.lower() == ref.strip().lower()


def _same_text(got: str, ref: str) -> bool:
    return normalize_answer(got) == normalize_answer(ref)


def _same_number(got: str, ref: str) -> bool:
    a, b = parse_number(got), parse_number(ref)
    return a is not None and a == b


def is_numeric_item(item: Item) -> bool:
    """Every accepted response of a cloze/single-value item is a number (AIME-style)."""
    return all(parse_number(g.answer) is not None for g in item.accepted)


def score_choice(item: Item, text: str) -> Scored:
    letters = item.modality.letters
    return _graded(extract_choice(text, letters), item.accepted, _same_letter, letters=letters)


def score_boolean(item: Item, text: str) -> Scored:
    return _graded(extract_boolean(text), item.accepted, _same_closed)


def score_ternary(item: Item, text: str) -> Scored:
    return _graded(extract_ternary(text), item.accepted, _same_closed)


def score_short(item: Item, text: str) -> Scored:
    """cloze / single-value: numeric when the references are numbers, else normalized text."""
    if is_numeric_item(item):
        return _graded(extract_number(text), item.accepted, _same_number, compare="numeric")
    return _graded(extract_short(text), item.accepted, _same_text, compare="normalized")


def score_prose(item: Item, text: str) -> Scored:
    """short-prose / long-prose: marked for the judge, with lexical overlap against the references."""
    refs = [g.answer for g in item.accepted if g.credit > 0]
    answer = text.strip()
    details: dict[str, Any] = {"accepted": refs, **overlap_metrics(answer, refs)}
    if not answer:
        return _rule_verdict(Outcome.NO_ANSWER, 0.0, None, "none", details)
    return _rule_verdict(Outcome.UNSCORED, None, answer, JUDGE_PENDING, details)


def score_item(item: Item, text: str, rule: AnswerRule | None = None, extract: str = REFERENCE) -> Scored:
    """Score the model's raw text for one item, by the item's modality.

    With the benchmark's reference `rule`, both readers run: the verdict keeps both readings, is `ambiguous`
    where they disagree (another answer, or the same one scored otherwise), and is the reference rule's
    verdict unless `extract` is "robust"."""
    if rule is not None and rule.score_whole is not None:  # the reference scores the whole reply itself
        return _budgeted(rule, rule.score_whole, item, text)
    robust = score_robust(item, text)
    if rule is None or not _applies(rule, item):
        return robust
    reference = _budgeted(rule, _score_reference, item, text, rule)
    readings = Readings(
        reference=Reading(reader=rule.name, rule=reference.extraction_rule or "none", answer=reference.extracted,
                          score=reference.score, level=rule.level(reference.extraction_rule)),
        robust=Reading(reader="proctor", rule=robust.extraction_rule or "none", answer=robust.extracted,
                       score=robust.score),
        scored_by="robust" if extract == ROBUST else "reference",
    )
    chosen = robust if extract == ROBUST else reference
    disagree = reference.score != robust.score or not _same_reading(reference.extracted, robust.extracted)
    return replace(chosen, details=chosen.details.model_copy(update={"readings": readings}), ambiguous=disagree)


def _budgeted(rule: AnswerRule, grade: Callable[..., Scored], item: Item, text: str, *more: Any) -> Scored:
    """`grade(item, text, *more)`, the reference rule's verdict, within the graders' time and size budget
    (`proctor.scoring.budget`); a grader that gives up is the sample's `gave_up` verdict, never a crash or a hang."""
    try:
        # graders that compute (math-verify, MathArena: sympy's big integers) run in the grader process
        verdict: Scored = within_budget(rule.name, grade, item, text, *more, text=text, isolate=rule.grade is not None)
    except GaveUp as e:
        return gave_up(rule, item, e.why)
    return verdict


def gave_up(rule: AnswerRule, item: Item, why: str) -> Scored:
    """The verdict on a reply the grader gave up on: no answer, score 0, rule "grader-gave-up", `why` kept in
    `details.rejected` (the rule's own `gave_up` where it keeps more: IFEval's instructions, each not followed)."""
    if rule.gave_up is not None:
        own: Scored = rule.gave_up(item, why)
        return own
    return _rule_verdict(Outcome.NO_ANSWER, 0.0, None, GAVE_UP,
                         {"accepted": [g.answer for g in item.accepted], "rejected": why})


def _applies(rule: AnswerRule, item: Item) -> bool:
    """A choice rule reads multiple-choice items; a number rule open items with numeric answers; an expression
    rule any open item."""
    if rule.kind == "choice":
        return item.modality.is_choice
    if rule.kind == "expression":
        return item.modality in (Modality.CLOZE, Modality.SINGLE_VALUE)
    return item.modality in (Modality.CLOZE, Modality.SINGLE_VALUE) and is_numeric_item(item)


def _score_reference(item: Item, text: str, rule: AnswerRule) -> Scored:
    ex = rule.read(text)
    if rule.grade is not None:  # the grader reads the reply itself: its verdict against each accepted answer
        grade = rule.grade
        return _graded(ex, item.accepted, lambda _read, gold: grade(text, gold), compare=rule.name)
    if rule.upstream_letters and ex.answer is not None:
        ex = _item_letter(item, ex)
    if item.modality.is_choice:
        letters = item.modality.letters
        return _graded(ex, item.accepted, rule.same or _same_letter, letters=letters)
    return _graded(ex, item.accepted, rule.same or _same_number, compare="numeric")


def _item_letter(item: Item, ex: Extraction) -> Extraction:
    """A letter naming an option as upstream stores them (`metadata.options_raw`, "N/A" padding included) turned
    into the item's letter for that option; a letter naming a padding "N/A" stays a letter the item lacks
    (wrong). Items without padding are unchanged."""
    raw = item.metadata.get("options_raw")
    if not isinstance(raw, list) or ex.answer is None or len(ex.answer) != 1:
        return ex
    index = ord(ex.answer.upper()) - ord("A")
    if not 0 <= index < len(raw) or str(raw[index]).strip() == "N/A":
        return replace(ex, answer="N/A") if 0 <= index < len(raw) else ex
    kept = sum(1 for o in raw[:index] if str(o).strip() != "N/A")
    return replace(ex, answer=chr(ord("A") + kept))


def _same_reading(a: str | None, b: str | None) -> bool:
    """Two readings agree: both found nothing, or the same letter or number."""
    if a is None or b is None:
        return a is b
    if a.upper() == b.upper():
        return True
    x, y = parse_number(a), parse_number(b)
    return x is not None and x == y


def score_robust(item: Item, text: str) -> Scored:
    """proctor's own reader (`proctor.scoring.extract`), by the item's modality."""
    m = item.modality
    if m.is_choice:
        return score_choice(item, text)
    if m is Modality.BOOLEAN:
        return score_boolean(item, text)
    if m is Modality.TERNARY:
        return score_ternary(item, text)
    if m in (Modality.CLOZE, Modality.SINGLE_VALUE):
        return score_short(item, text)
    return score_prose(item, text)


def reference_of(item: Item) -> Any:
    """The gold answer(s) as recorded in a Sample: a string, or [{answer, credit}, …]."""
    if isinstance(item.response, list):
        return [g.model_dump() for g in item.response]
    return item.response


# ---------------------------------------------------------------- the Scorer (proctor.run.runner)


def settings_for_epoch(settings: GenerationSpec, epoch: int, epochs: int) -> GenerationSpec:
    """Sampled epochs differ by seed, so each is its own (cacheable, reproducible) request."""
    if epochs > 1 and settings.temperature != 0:  # None: the server's default, which may sample
        return settings.model_copy(update={"seed": (settings.seed or 0) + epoch})
    return settings


def generation_verdict(
    item: Item, answered: Answered, rule: AnswerRule | None = None, extract: str = REFERENCE,
    grade_truncated: bool = False,
) -> Scored:
    """Rule-based verdict on one generated answer (prose items are left UNSCORED for a judge); `grade_truncated`:
    a reply stopped at the token limit is graded on the text received (its answer part), as lm-eval's IFEval."""
    request, answer = answered.requests[0], answered.answers[0]
    assert isinstance(request, GenerateRequest) and isinstance(answer, Generation)
    common: dict[str, Any] = {
        "prompt": [{"role": m.role, "content": m.content} for m in request.messages],
        "usage": usage_of(answered.answers),
    }
    if answer.error is not None:
        return Scored(Outcome.ERROR, GenerationDetails(), error=answer.error, **common)
    common["raw_output"] = answer.text  # the raw text, thought included, is kept
    if answer.reasoning is None:
        common["usage"] = replace(common["usage"], reasoning=split_reasoning(answer.text).reasoning)
    if not item.is_scored:
        return Scored(Outcome.UNSCORED, GenerationDetails(), extraction_rule="unscored", **common)
    final = answer_text(answer)
    if final is None and grade_truncated:
        final = split_reasoning(answer.text).answer
    if final is None:  # cut off: nothing is extracted from the middle of a thought
        return Scored(Outcome.TRUNCATED, GenerationDetails(), score=0.0, extraction_rule="truncated", **common)
    return replace(score_item(item, final, rule, extract), **common)


@dataclass(frozen=True)
class GenerationScorer:
    """Ask for an answer in the task's prompt `prompt_kind`; extract and score it by rule (`score_item`)."""

    prompt_kind: str
    settings: GenerationSpec = field(default_factory=GenerationSpec)
    epochs: int = 1
    kind: str = "generation"
    mode: str = "generate"
    capability: Capability = Capability.GENERATE
    extract: str = REFERENCE  # which reading scores where the benchmark declares a reference rule (--extract)
    answer_rule: str | None = None  # the name of the prompt kind's reference rule (None: proctor's reader alone)
    no_answer: str = "wrong"  # how results count a reply no rule read (--no-answer, else the rule's default)
    # a truncated reply graded on its text (the rule's `grades_truncated`, unless --truncated-as excluded: both in
    # the spec, so not repeated in the identity)
    grade_truncated: bool = False
    second_ask: bool = False  # ask once more where the rule's runner would (the resolved spec's `second_ask`)

    def check(self, task: Task) -> None:
        if self.prompt_kind not in task.prompts.kinds:
            raise ProctorError(
                f"{task.name} has no prompt {self.prompt_kind!r}; it offers: {', '.join(task.prompts.kinds)}"
            )
        judged = getattr(task.answer_rule(self.prompt_kind), "judge", None) is not None  # a benchmark's own judge
        prose = [it for it in task.items if it.modality.needs_judge or judged]
        if prose and self.kind != "judge":
            raise ProctorError(
                f"{len(prose)} items ({prose[0].modality.value}, e.g. {prose[0].identifier}) are graded by an"
                " LLM judge: pass --judge MODEL"
            )

    def identity(self) -> dict[str, Any]:
        return {"scorer": self.kind, "prompt_kind": self.prompt_kind, "generation": self.settings.as_dict(),
                "extractor": EXTRACTOR_VERSION, "extract": self.extract, "answer_rule": self.answer_rule,
                "no_answer": self.no_answer}

    def template_hash(self, task: Task) -> str:
        return task.prompts.template_hash(self.prompt_kind)

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        settings = settings_for_epoch(self.settings, epoch, self.epochs)
        return [GenerateRequest(task.prompts.messages(item, self.prompt_kind), settings,
                                completion=task.sends_text(self.prompt_kind))]

    def second_request(self, task: Task, answered: Answered) -> GenerateRequest | None:
        """The second ask `answered` needs (the rule's, when on: MathArena's when its strict parser reads no
        boxed answer in the reply as returned), or None. `run.chunk` sends it; `score` grades its reply."""
        ask = getattr(task.answer_rule(self.prompt_kind), "second_ask", None)
        if not self.second_ask or ask is None or answered.error is not None or not answered.item.is_scored:
            return None
        request, answer = answered.requests[0], answered.answers[0]
        if not isinstance(request, GenerateRequest) or not isinstance(answer, Generation) or request.completion:
            return None
        if not ask.needed(answer.text):
            return None
        messages = (*request.messages, Message("assistant", answer.text), Message("user", ask.message))
        return GenerateRequest(messages, request.settings)

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        rule = task.answer_rule(self.prompt_kind)
        return [self._verdict(a, rule) for a in batch]

    def _verdict(self, a: Answered, rule: AnswerRule | None) -> Scored:
        """The verdict on the last reply; with a second ask, the first exchange kept as the sample's prompt and
        output, the second in `details.second_ask`, the tokens of both counted."""
        first = generation_verdict(a.item, Answered(a.item, a.epoch, a.requests[:1], a.answers[:1]), rule,
                                   self.extract, self.grade_truncated)
        if len(a.answers) < 2:
            return first
        request, answer = a.requests[1], a.answers[1]
        assert isinstance(request, GenerateRequest) and isinstance(answer, Generation)
        last = generation_verdict(a.item, Answered(a.item, a.epoch, [request], [answer]), rule, self.extract,
                                  self.grade_truncated)
        ask = getattr(rule, "second_ask", None)
        prompt = request_prompt(request)
        record = SecondAskRecord(rule=ask.name if ask is not None else "second-ask",
                                 prompt=prompt if isinstance(prompt, list) else [], raw_output=answer.text,
                                 finish_reason=answer.finish_reason, input_tokens=answer.input_tokens,
                                 output_tokens=answer.output_tokens, error=answer.error)
        u, v = first.usage, last.usage
        usage = Usage(input_tokens=_total(u.input_tokens, v.input_tokens),
                      output_tokens=_total(u.output_tokens, v.output_tokens),
                      latency_s=_total(u.latency_s, v.latency_s), finish_reason=v.finish_reason, reasoning=u.reasoning)
        return replace(last, details=last.details.model_copy(update={"second_ask": record}), prompt=first.prompt,
                       raw_output=first.raw_output, usage=usage)


def _total(a: float | None, b: float | None) -> Any:
    """Two counts added (None when either is unknown)."""
    return None if a is None or b is None else a + b
