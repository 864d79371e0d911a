"""Model backends behind one batch-first protocol; `get_model(spec)` builds one from a spec string."""

from ..core.model import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    GenerationSpec,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    Model,
    ModelBase,
    require,
)
from .registry import get_model

__all__ = [
    "Capability",
    "GenerateRequest",
    "Generation",
    "GenerationSettings",
    "GenerationSpec",
    "Loglikelihood",
    "LoglikelihoodRequest",
    "Message",
    "Model",
    "ModelBase",
    "get_model",
    "require",
]
