"""Readers and writers for proctor's formats; everything converts through the common `Item` record.

Suites (probsem layout) live in `proctor.data.formats.suites` and are imported lazily where needed.
"""

from __future__ import annotations

from .commoneval import read_commoneval, write_commoneval
from .convert import (
    dataset_to_itemset,
    item_to_question,
    items_to_suite,
    items_to_suites,
    itemset_to_dataset,
    question_to_item,
    suite_to_items,
)
from .detect import Format, detect_format, load_itemset, validate_path
from .items import read_items, write_items
from .questions import read_questions, write_questions

__all__ = [
    "Format",
    "dataset_to_itemset",
    "detect_format",
    "item_to_question",
    "items_to_suite",
    "items_to_suites",
    "itemset_to_dataset",
    "load_itemset",
    "question_to_item",
    "read_commoneval",
    "read_items",
    "read_questions",
    "suite_to_items",
    "validate_path",
    "write_commoneval",
    "write_items",
    "write_questions",
]
