"""Code taken from replies: a completion continues the prompt; a chat reply's fenced block is a full function
(after the prompt's imports) or a body."""

from __future__ import annotations

from proctor.scoring.execute.extract import fenced_blocks, from_chat, from_completion

PROMPT = "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    \"\"\"Sum.\"\"\"\n"


def test_completion_is_appended_to_the_prompt() -> None:
    assert from_completion(PROMPT, "    return sum(xs)\n").text == PROMPT + "    return sum(xs)\n"


def test_fenced_full_function_keeps_the_prompts_imports() -> None:
    code = from_chat("Sure.\n```python\ndef total(xs):\n    return sum(xs)\n```\nDone.", PROMPT, "total")
    assert code.source == "fenced" and code.text == "from typing import List\n\n\ndef total(xs):\n    return sum(xs)\n"


def test_the_block_defining_the_entry_point_wins() -> None:
    reply = "```python\ndef total(xs):\n    return sum(xs)\n```\nExample:\n```python\nprint(total([1]))\n```"
    assert "return sum(xs)" in from_chat(reply, PROMPT, "total").text


def test_a_body_continues_the_prompt_indented() -> None:
    code = from_chat("```python\nreturn sum(xs)\n```", PROMPT, "total")
    assert code.source == "body" and code.text == PROMPT + "    return sum(xs)\n"


def test_an_unfenced_reply_is_the_function_and_an_empty_one_no_code() -> None:
    assert from_chat("def total(xs):\n    return 0\n", PROMPT, "total").source == "function"
    assert from_chat("```python\n```", PROMPT, "total").source == "none"
    assert fenced_blocks("```js\nx\n```\n```py\ny\n```") == ["y\n"]
