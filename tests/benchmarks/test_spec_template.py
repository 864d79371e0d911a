"""Spec templates substitute only their own fields: a row's text is sent as it is, whatever it holds (`{{…}}`,
`{x}`, `%s`), as lm-eval's Jinja sends it. A property test over random texts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from proctor.benchmarks.spec_prompts import item_fields
from proctor.benchmarks.spec_template import render
from proctor.data.formats.convert import question_to_item
from proctor.data.records import Question

HOSTILE = st.sampled_from(["{{target}}", "{{ input }}", "{{…}}", "{x}", "{question}", "{choices}", "%s", "%(x)s",
                           "{0}", "{", "}", "{{", "}}", "{letter}", "{{answer}}", "$x", "\\n"])
TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=12)), max_size=8).map("".join)


@given(TEXT, TEXT)
def test_a_field_value_is_inserted_as_it_is(question: str, answer: str) -> None:
    assert render("Q: {question}\nA: {answer}", {"question": question, "answer": answer}) == \
        f"Q: {question}\nA: {answer}"


@given(TEXT, TEXT, TEXT)
def test_an_item_and_its_choices_are_sent_as_they_are(stem: str, first: str, second: str) -> None:
    item = question_to_item(Question(id=1, original_id="1", question=stem or "q", choices={"A": first or "a", "B": second or "b"},
                                     answer="A"), "synthetic")
    fields = item_fields(item, "{letter}. {text}", ())
    assert render("{question}\n{choices}\nAnswer:", fields) == \
        f"{item.prompt}\nA. {item.choices['A']}\nB. {item.choices['B']}\nAnswer:"
