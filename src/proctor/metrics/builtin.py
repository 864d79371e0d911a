"""The built-in metrics, in the order summarize runs them (and results.json lists them)."""

from __future__ import annotations

from .acc_norm import AccNorm
from .accuracy import Accuracy, Breakdown
from .answer_reading import AnswerReadingMetric
from .base import Metric
from .budget import METRICS as BUDGET_METRICS
from .calibration import CalibrationMetric
from .cost import CostMetric
from .epochs import Epochs
from .first_attempt import METRICS as FIRST_ATTEMPT_METRICS
from .hle import METRICS as HLE_METRICS
from .ifeval import METRICS as IFEVAL_METRICS
from .judge_agreement import JudgeAgreementMetric
from .judge_corrected import JudgeCorrectedMetric
from .macro_accuracy import MacroAccuracy
from .simpleqa import METRICS as SIMPLEQA_METRICS
from .text_overlap import MEASURES, TextOverlap

BUILTIN: list[Metric] = [
    Accuracy(), Breakdown("category"), Breakdown("subcategory"), Breakdown("modality"), Breakdown("difficulty"),
    MacroAccuracy(), Epochs(), CalibrationMetric(), AccNorm(), JudgeAgreementMetric(), JudgeCorrectedMetric(), CostMetric(),
    AnswerReadingMetric(),
    *(TextOverlap(m) for m in MEASURES), *IFEVAL_METRICS, *SIMPLEQA_METRICS, *HLE_METRICS,
    *FIRST_ATTEMPT_METRICS, *BUDGET_METRICS,
]
