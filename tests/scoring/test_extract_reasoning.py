"""`split_reasoning`: the thought kept apart, answers extracted from the final answer only."""

from __future__ import annotations

from proctor.scoring.extract import extract_choice, extract_number, split_reasoning

LONG_THOUGHT = "\n\n".join(
    f"Step {i}: consider option ({'ABCD'[i % 4]}). If x = {i}, then $x^2 = {i * i}$, so **not** {i}. "
    "Wait, let me re-check: \\(\\frac{a}{b}\\) ... the answer is (" + "ABCD"[i % 4] + ")?"
    for i in range(400)
)


def test_closed_think_block_is_reasoning_and_the_rest_is_the_answer() -> None:
    reply = f"<think>\n{LONG_THOUGHT}\n</think>\n\n**Final answer:** The answer is (C)."
    reasoning, answer, unclosed = split_reasoning(reply)
    assert not unclosed
    assert reasoning == LONG_THOUGHT
    assert answer == "**Final answer:** The answer is (C)."
    # the thought names every letter; only the final answer's counts
    assert extract_choice(answer, "ABCD").answer == "C"
    assert len(LONG_THOUGHT) > 40_000


def test_template_opened_block_ends_at_the_closing_tag() -> None:
    """Qwen3 / DeepSeek-R1 templates put <think> in the prompt: the reply starts mid-thought."""
    reply = "Let me compute 6*7 = 42. Hmm, or 41?\n</think>\n\nThe result is $\\boxed{42}$."
    split = split_reasoning(reply)
    assert split.reasoning == "Let me compute 6*7 = 42. Hmm, or 41?"
    assert split.answer == "The result is $\\boxed{42}$."
    assert not split.unclosed
    assert extract_number(split.answer).answer == "42"


def test_truncated_thought_is_unclosed_and_leaves_no_answer() -> None:
    reply = "<think>\n" + LONG_THOUGHT[:5000] + " so the answer is (B"
    reasoning, answer, unclosed = split_reasoning(reply)
    assert unclosed and answer == ""
    assert reasoning is not None and reasoning.endswith("so the answer is (B")
    assert extract_choice(answer, "ABCD").answer is None  # nothing is taken from the middle of a thought


def test_no_tags_is_all_answer_unchanged() -> None:
    reply = "## Solution\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n$$\\int_0^1 x\\,dx = \\tfrac12$$\n\nAnswer: 1/2"
    assert split_reasoning(reply) == (None, reply, False)
    assert split_reasoning("") == (None, "", False)
    assert split_reasoning("a < b and c > d") == (None, "a < b and c > d", False)


def test_several_blocks_and_thinking_tags_and_case() -> None:
    reply = "<THINK>first</THINK>Partial. <thinking>second</thinking> The answer is (D)"
    reasoning, answer, unclosed = split_reasoning(reply)
    assert (reasoning, answer, unclosed) == ("first\n\nsecond", "Partial.  The answer is (D)", False)


def test_block_reopened_after_an_answer_and_cut_off_is_unclosed() -> None:
    reasoning, answer, unclosed = split_reasoning("<think>a</think>Answer: 3\n<think>actually")
    assert unclosed and reasoning == "a\n\nactually" and answer == "Answer: 3"


def test_empty_think_block_like_qwen3_non_thinking_mode() -> None:
    assert split_reasoning("<think>\n\n</think>\n\nThe answer is 7") == (None, "The answer is 7", False)


def test_gpt_oss_harmony_channels() -> None:
    raw = ("<|channel|>analysis<|message|>We need 2+2. It's 4.<|end|><|start|>assistant"
           "<|channel|>final<|message|>**4**<|return|>")
    assert split_reasoning(raw) == ("We need 2+2. It's 4.", "**4**", False)
    cut = "<|channel|>analysis<|message|>We need 2+2. Let me think about"
    assert split_reasoning(cut) == ("We need 2+2. Let me think about", "", True)
