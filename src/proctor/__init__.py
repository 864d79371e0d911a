"""proctor — evaluate language models on benchmarks, with honest error bars.

    import proctor
    log = proctor.eval("mmlu-pro", "hf:out/tiny", data_file="examples/upstream/mmlu_pro", limit=8)
    print(log.results.overall.accuracy, log.path)          # a run directory, as `proctor run` writes

`proctor.eval(dataset, model, **options)` takes `proctor run`'s options by name (max_tokens=, no_answer=,
judge=, judge_base_url=…) and the backend's (dtype=, base_url=…); it builds the same RunSpec, run id and
run directory as the command line, and works inside a running event loop; `await proctor.eval_async(...)`
too. With a Task or Model object of your own: `proctor.evaluate(task, model, spec, RunOptions(...))`, which builds
the same RunSpec. More: docs/python.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__
from .core.model import Capability as Capability
from .core.model import GenerateRequest as GenerateRequest
from .core.model import Generation as Generation
from .core.model import GenerationSettings as GenerationSettings
from .core.model import Loglikelihood as Loglikelihood
from .core.model import LoglikelihoodRequest as LoglikelihoodRequest
from .core.model import Message as Message
from .core.model import Model as Model
from .data.records import ContextCase as ContextCase
from .data.records import Dataset as Dataset
from .data.records import GradedAnswer as GradedAnswer
from .data.records import Item as Item
from .data.records import ItemSet as ItemSet
from .data.records import Modality as Modality
from .data.records import Prompt as Prompt
from .data.records import Question as Question
from .data.records import TestSuite as TestSuite
from .log.runlog import Manifest as Manifest
from .log.runlog import Outcome as Outcome
from .log.runlog import RunLog as RunLog
from .log.runlog import Sample as Sample
from .models.registry import get_model
from .util.errors import CapabilityError as CapabilityError
from .util.errors import InputError as InputError
from .util.errors import ProctorError as ProctorError

if TYPE_CHECKING:
    from .api import eval, eval_async, eval_config, eval_spec, score
    from .core.spec import RunSpec as RunSpec
    from .data.tasks import Task as Task
    from .metrics import Metric as Metric
    from .metrics.results import read_run
    from .run.pipeline import evaluate
    from .run.runner import RunOptions as RunOptions
    from .scoring.base import Scorer as Scorer


# name -> the module that defines it, imported on first access (module __getattr__, PEP 562)
_LAZY = {
    "RunSpec": ".core.spec",
    "eval": ".api",
    "eval_async": ".api",
    "eval_spec": ".api",
    "eval_config": ".api",
    "score": ".api",
    "RunOptions": ".run.runner",
    "Scorer": ".scoring.base",
    "Task": ".data.tasks",
    "evaluate": ".run.pipeline",
    "Metric": ".metrics",
    "read_run": ".metrics.results",  # it recomputes results: it needs the metrics (and numpy)
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


# what `help(proctor)` shows and `from proctor import *` gives: the entry points. Every name above stays
# importable (`from proctor import Item, Model, RunOptions, RunSpec, Sample, Task…`).
__all__ = [
    "Metric",
    "__version__",
    "eval",
    "eval_async",
    "eval_config",
    "eval_spec",
    "evaluate",
    "get_model",
    "read_run",
    "score",
]
