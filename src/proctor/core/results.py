"""results.json's blocks: every number a run's results hold, typed (`Results`, a pure function of the samples:
`proctor.metrics.results.summarize` computes it, `proctor.log.runlog` reads and writes it; see docs/runlog.md).
Plain records, below every package that computes, stores or shows them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

RESULTS_SCHEMA_VERSION = 3  # 2: no `metrics` block (read as 3 by Results._migrate)


class _Block(BaseModel):
    """A results.json block: every key declared (`extra="forbid"`)."""

    model_config = ConfigDict(extra="forbid")


class MetricValue(_Block):
    """One number a metric computed over a group of samples, with its 95% interval and how it was found."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # never a non-JSON NaN in results.json

    value: float | None = None  # None: nothing to compute it from (nothing scored), or the metric failed
    n: int = 0  # the samples (or items) it was computed over
    ci_low: float | None = None
    ci_high: float | None = None
    method: str | None = None  # "wilson", "clustered_wilson", "bootstrap", "cluster_bootstrap", "mean", "median"…
    error: str | None = None  # why the metric could not be computed (it raised, or returned the wrong thing)


MATERIAL_WIDTH_CHANGE = 0.10  # a clustered interval this much wider or narrower than the naive one is shown beside it


class MetricBlock(_Block):
    """results.json's METRICS: accuracy with its interval and the counts behind it, for one group of samples."""

    n: int = 0  # samples
    n_scored: int = 0
    n_items: int | None = None  # distinct items among the scored samples, when items repeat (epochs): the interval's unit
    n_errors: int = 0
    n_unscored: int = 0
    n_no_answer: int = 0
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    no_answer_rate: float | None = None
    n_truncated: int = 0
    truncated_rate: float | None = None  # of the samples answered and scorable (not errors, not unscored)
    # the accuracy's bounds over the truncated samples: every one wrong … every one right (None: none truncated)
    truncated_low: float | None = None
    truncated_high: float | None = None
    # samples that are trajectories (docs/agents.md): how many ended each way (answered, called, max_turns,
    # max_tool_calls, max_tokens, wall_time, model_error) and that share of them; absent where none is
    agent_stops: dict[str, int] = Field(default_factory=dict, exclude_if=lambda v: not v)
    agent_stop_rates: dict[str, float] = Field(default_factory=dict, exclude_if=lambda v: not v)
    n_ambiguous: int = 0  # the reference rule and proctor's reader disagree
    ambiguous_rate: float | None = None  # of the samples both read (None: none)
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s_mean: float | None = None
    # clustered by an item attribute (Results.cluster): the interval above counts clusters; beside it the naive
    # interval (items as independent), the design effect V_CR2 / V_iid and the number of clusters
    n_clusters: int | None = None
    design_effect: float | None = None
    naive_ci_low: float | None = None
    naive_ci_high: float | None = None
    cluster_df: float | None = None  # Bell–McCaffrey's degrees of freedom of the clustered interval's t
    cluster_note: str | None = None  # why the interval is not (or barely) clustered: few clusters, no variance…

    @property
    def cluster_differs(self) -> bool:
        """The clustered interval is materially wider (or narrower) than the naive one: by 10% or more."""
        if None in (self.ci_low, self.ci_high, self.naive_ci_low, self.naive_ci_high):
            return False
        wide = (self.ci_high or 0.0) - (self.ci_low or 0.0)
        naive = (self.naive_ci_high or 0.0) - (self.naive_ci_low or 0.0)
        return abs(wide - naive) > MATERIAL_WIDTH_CHANGE * max(naive, 1e-12)

    @property
    def estimate(self) -> MetricValue:
        """The accuracy as a `MetricValue`."""
        return MetricValue(value=self.accuracy, n=self.n_scored, ci_low=self.ci_low, ci_high=self.ci_high,
                           method=self.ci_method)


class EpochSpread(_Block):
    """mean@k, pass@k and the per-item spread over items answered in k epochs."""

    k: int
    mean_at_k: float | None = None
    pass_at_k: float | None = None
    item_sd_mean: float | None = None  # mean sd of an item's scores over its epochs
    items_by_correct: dict[str, int] = Field(default_factory=dict)  # items fully correct in c of k epochs
    # pass@j for every j ≤ k (Chen et al. 2021's unbiased estimator, averaged over the items answered at least j
    # times), each with a bootstrap interval over items; keys "1", "2", …
    pass_at: dict[str, MetricValue] = Field(default_factory=dict)


class CalibrationBin(_Block):
    """One equal-width confidence bin: its bounds, count, mean confidence and accuracy (None when empty)."""

    lo: float
    hi: float
    n: int
    confidence: float | None = None
    accuracy: float | None = None


class Calibration(_Block):
    """Brier score, expected calibration error and mean log-loss, with the reliability bins."""

    brier: float
    ece: float
    log_loss: float
    n: int = 0
    bins: list[CalibrationBin] = Field(default_factory=list)


class JudgeAgreement(_Block):
    """How often the judge agreed with exact-match scoring on items checked both ways."""

    n: int = 0
    n_skipped: int = 0
    agreement: float | None = None
    kappa: float | None = None
    confusion: dict[str, int] = Field(default_factory=dict)  # "judge/exact": count


class HumanAgreement(_Block):
    """The judge's verdicts held to human labels on the samples both graded: raw agreement, Cohen's κ,
    Krippendorff's α (nominal, two coders) and the confusion counts ("judge/human": count, each side correct or
    wrong; a partial score counts as wrong)."""

    n: int = 0
    agreement: float | None = None
    kappa: float | None = None  # None: undefined (one label everywhere on both sides)
    alpha: float | None = None
    confusion: dict[str, int] = Field(default_factory=dict)


class JudgeCorrected(_Block):
    """`--human-labels`: accuracy corrected for the judge's (or reader's) errors by prediction-powered inference
    (`proctor.stats.ppi`; docs/statistics.md): the run's verdicts on every scored sample are the predictions, the
    human labels the truth on the labelled ones. Beside it the judge's plain accuracy and the humans' own."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    method: str = "ppi++"  # "ppi++" (power-tuned λ), or "labels" when every scored sample is labelled
    source: str | None = None  # the labels file as given
    sha256: str | None = None  # its content's hash
    n: int = 0  # scored samples (the predictions)
    n_labelled: int = 0  # of them, labelled by a human
    n_unmatched: int = 0  # labels whose id is no scored sample of the run (another run's, an error, a typo)
    judge_accuracy: float | None = None  # the plain mean of the verdicts over the n samples
    human_accuracy: float | None = None  # the labels' mean over the labelled samples
    accuracy: float | None = None  # the corrected estimate
    ci_low: float | None = None  # its 95% interval, kept within [0, 1]
    ci_high: float | None = None
    lam: float | None = None  # the λ the estimate used (1: PPI, 0: the labels alone)
    se: float | None = None
    sd_pred: float | None = None  # the verdicts' sd (ddof 0): `proctor plan --label-width` reads it
    sd_resid: float | None = None  # the sd of human − verdict over the labelled samples (ddof 0)
    agreement: HumanAgreement = Field(default_factory=HumanAgreement)
    note: str | None = None  # why there is no estimate (fewer than 2 labels), or how the labels were matched


class Cost(_Block):
    """The run's cost at the manifest's prices (`proctor.metrics.money.run_cost`): exact decimals."""

    total: Decimal
    currency: str = "USD"
    priced_samples: int = 0
    unpriced_samples: int = 0
    correct: int = 0
    per_correct: Decimal | None = None  # None: nothing correct, or some requests could not be priced
    per_sample: Decimal | None = None
    model: Decimal
    judge: Decimal | None = None  # None: no judge
    judge_priced_calls: int | None = None
    judge_unpriced_calls: int | None = None


class BudgetStep(_Block):
    """One budget of a ladder (`run --budgets`): every sample as it stood after the attempts asked at or below
    `max_tokens`, counted as `overall` counts (its interval and its truncation bounds)."""

    max_tokens: int
    asked: int = 0  # samples asked at this budget (the first step: every one; later: those still cut before)
    block: MetricBlock = Field(default_factory=MetricBlock)


class BudgetCurve(_Block):
    """Accuracy by token budget over a ladder of retries, the first run's budget first (`proctor.metrics.budget`).
    `settled_at`: the smallest budget whose interval holds the accuracy of every larger budget asked and, while
    samples are still cut at the largest, their every-one-right bound (beyond it, the estimate stays within its
    interval; None: no budget does); `still_truncated`: samples cut even at the largest budget."""

    steps: list[BudgetStep] = Field(default_factory=list)
    settled_at: int | None = None
    still_truncated: int = 0


class AnswerReading(_Block):
    """How the numbers of a rule with levels (TIGER-Lab's MMLU-Pro chain) were read: the authors' accuracy
    beside the share read only by the last fallback, the share credited as guesses, the strict accuracy
    (levels 1-2, an unread reply wrong) and proctor's robust reader's accuracy, over the samples that count."""

    rule: str  # the reference rule ("tiger-lab-mmlu-pro")
    no_answer: str = "wrong"  # how the authors' accuracy counted an unread reply: "wrong" or "guess" (1/k)
    n: int = 0  # samples counted (scored)
    by_level: dict[str, int] = Field(default_factory=dict)  # "1", "2", "3", "none" → samples read there
    accuracy: float | None = None  # the authors' count: their levels, an unread reply as `no_answer` says
    fallback_share: float | None = None  # read only by the last level (the lone letter)
    guess_share: float | None = None  # unread, credited 1/k as a guess (0 under "wrong")
    strict_accuracy: float | None = None  # levels before the last only; the last level and unread replies wrong
    robust_accuracy: float | None = None  # proctor's robust reader, unread wrong


class Results(_Block):
    """results.json: the metrics, a pure function of the samples (see docs/runlog.md).

    Every block is typed; the built-in metrics fill the named fields and metrics registered beside them
    (`proctor.metrics.register`) land in `metrics`. `errors` counts each distinct error message. A key this
    version does not declare is refused, naming it (results are recomputed from the samples, never edited)."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    overall: MetricBlock = Field(default_factory=MetricBlock)
    by_category: dict[str, MetricBlock] = Field(default_factory=dict)
    by_subcategory: dict[str, MetricBlock] = Field(default_factory=dict)
    by_modality: dict[str, MetricBlock] = Field(default_factory=dict)
    by_difficulty: dict[str, MetricBlock] = Field(default_factory=dict)
    macro_accuracy: float | None = None
    epochs: EpochSpread | None = None
    calibration: Calibration | None = None
    acc_norm: MetricBlock | None = None
    judge_agreement: JudgeAgreement | None = None
    judge_corrected: JudgeCorrected | None = None  # --human-labels: the prediction-powered accuracy
    answer_reading: AnswerReading | None = None  # a reference rule with levels: how each number was read
    metrics: dict[str, MetricValue] = Field(default_factory=dict)  # registered metrics beyond the built-ins
    truncated_as: str | None = None  # how accuracy counted truncated samples: "wrong" or "excluded"
    extract: str | None = None  # which reading scored: "reference" or "robust"
    no_answer: str | None = None  # how accuracy counted unanswered samples: "wrong" or "guess" (1/k)
    cluster: str | None = None  # the item attribute the intervals are clustered by (None: items alone)
    cost: Cost | None = None  # `proctor.metrics.money.run_cost` when prices are known
    budget_curve: BudgetCurve | None = None  # a ladder of retries (run --budgets): accuracy at every budget
    errors: dict[str, int] = Field(default_factory=dict)  # distinct error message -> samples, most first

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Schema 1 and 2 files read as schema 3: an empty optional block (`{}`) is an absent one, and the
        version moves on (a file is rewritten in the new shape; schema 3 added `metrics`)."""
        version = data.get("schema_version") if isinstance(data, dict) else None
        if not isinstance(version, int) or isinstance(version, bool) or version >= 3:
            return data  # not a number (`[1]`, `1e400`): the field's own validation refuses it, on one line
        optional = ("epochs", "calibration", "acc_norm", "judge_agreement", "cost")  # budget_curve: schema 3 on
        return {**{k: v for k, v in data.items() if not (k in optional and v == {})},
                "schema_version": RESULTS_SCHEMA_VERSION}

    @property
    def n_errors(self) -> int:
        return sum(self.errors.values())

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of results.json: an absent block is left out; inside a block a number that could not be
        computed is null (`"accuracy": null`), and a cost without a judge has no judge keys."""
        data = self.model_dump(mode="json")
        data["metrics"] = {k: {f: v for f, v in m.items() if f != "error" or v is not None}
                           for k, m in data["metrics"].items()}  # `error` only on a metric that failed
        if data["cost"] is not None:
            data["cost"] = {k: v for k, v in data["cost"].items() if v is not None or not k.startswith("judge")}
        return {k: v for k, v in data.items() if v is not None}
