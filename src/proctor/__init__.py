"""proctor — evaluate language models on benchmarks, with honest error bars.

The public API re-exports the records, the model seam and the entry points; heavy backends
(torch, transformers, datasets) are imported only when a model or hub dataset needs them.
"""

from __future__ import annotations

from .errors import CapabilityError, InputError, ProctorError
from .metrics import Metric
from .models.base import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    Model,
)
from .models.registry import get_model
from .records import (
    ContextCase,
    Dataset,
    GradedAnswer,
    Item,
    ItemSet,
    Modality,
    Prompt,
    Question,
    TestSuite,
)
from .runlog import Manifest, Outcome, RunLog, Sample, read_run

__version__ = "0.1.0"

__all__ = [
    "Capability",
    "CapabilityError",
    "ContextCase",
    "Dataset",
    "GenerateRequest",
    "Generation",
    "GenerationSettings",
    "GradedAnswer",
    "InputError",
    "Item",
    "ItemSet",
    "Loglikelihood",
    "LoglikelihoodRequest",
    "Manifest",
    "Message",
    "Metric",
    "Modality",
    "Model",
    "Outcome",
    "ProctorError",
    "Prompt",
    "Question",
    "RunLog",
    "Sample",
    "TestSuite",
    "__version__",
    "get_model",
    "read_run",
]
