"""proctor — evaluate language models on benchmarks, with honest error bars.

The public API re-exports the records, the model seam and the entry points; heavy backends
(torch, transformers, datasets) are imported only when a model or hub dataset needs them. The entry
points of a run (`evaluate`, `RunConfig`, `Task`, `Scorer`) load on first use, so `import proctor` stays
fast: `from proctor import evaluate` imports the runner then.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import CapabilityError, InputError, ProctorError
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

if TYPE_CHECKING:
    from .metrics import Metric
    from .runner import RunConfig, evaluate
    from .scoring.base import Scorer
    from .tasks import Task


# name -> the module that defines it, imported on first access (module __getattr__, PEP 562)
_LAZY = {
    "RunConfig": ".runner",
    "Scorer": ".scoring.base",
    "Task": ".tasks",
    "evaluate": ".runner",
    "Metric": ".metrics",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'proctor' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later reads skip this hook
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
    "RunConfig",
    "RunLog",
    "Sample",
    "Scorer",
    "Task",
    "TestSuite",
    "__version__",
    "evaluate",
    "get_model",
    "read_run",
]
