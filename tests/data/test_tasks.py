"""A Task: its items' content hash (the run's identity), its provenance and its answer rules."""

from __future__ import annotations

from proctor.core.model import Message
from proctor.data.records import Item
from proctor.data.tasks import Task, text_hash
from proctor.scoring.extract import ANSWER_RULES


class _Prompts:
    kinds = ("zero_shot",)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("user", item.prompt),)

    def logprob_context(self, item: Item) -> str:
        return item.prompt

    def template_hash(self, kind: str) -> str:
        return text_hash("plain", kind)


def _items(*prompts: str) -> list[Item]:
    return [Item(identifier=f"q{i}", modality="single-value", prompt=p, response="x") for i, p in enumerate(prompts)]


def test_the_content_hash_follows_the_items_and_their_order() -> None:
    a = Task("t", _items("one", "two"), _Prompts())
    assert a.content_hash == Task("other name", _items("one", "two"), _Prompts()).content_hash
    assert a.content_hash.startswith("sha256:") and len(a.content_hash) == len("sha256:") + 64
    assert a.content_hash != Task("t", _items("one", "two!"), _Prompts()).content_hash
    assert a.content_hash != Task("t", _items("two", "one"), _Prompts()).content_hash


def test_provenance_and_answer_rules() -> None:
    rule = next(iter(ANSWER_RULES.values()))
    task = Task("t", _items("one"), _Prompts(), source={"split": "test"}, answer_rules={"zero_shot": rule})
    assert task.provenance() == {"name": "t", "split": "test", "n_items": 1, "content_hash": task.content_hash}
    assert task.answer_rule("zero_shot") is rule and task.answer_rule("five_shot") is None


def test_text_hash_is_short_stable_and_separates_parts() -> None:
    assert text_hash("a", "b") == text_hash("a", "b") and len(text_hash("a")) == len("sha256:") + 16
    assert text_hash("a", "b") != text_hash("ab") != text_hash("a b")
