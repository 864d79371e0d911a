"""The built-in benchmarks (MMLU-Pro, GPQA, AIME 2025): one file per benchmark (loader, prompts, metadata) and a registry that gathers them."""

from .builtin import Builtin
from .hub import Loaded, is_offline
from .registry import BUILTINS, Prompting, is_builtin, load_builtin, load_dataset, load_task, select

__all__ = [
    "BUILTINS",
    "Builtin",
    "Loaded",
    "Prompting",
    "is_builtin",
    "is_offline",
    "load_builtin",
    "load_dataset",
    "load_task",
    "select",
]
