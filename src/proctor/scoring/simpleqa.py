"""SimpleQA's judge: openai/simple-evals' grader template and verdict parsing, as `BenchmarkJudge`.

The reference is simple-evals `simpleqa_eval.py` at ee3b0318d8d1d9d72755a4120879be65f7c07e9e (2025-07-09):
`GRADER_TEMPLATE` (below, byte for byte: sha256 `TEMPLATE_SHA256`, checked against the fetched file by
bench/compare_simpleqa_hle.py) filled with the question, the gold target and the reply, sent as the one user
message; the grade is the first `A`, `B` or `C` anywhere in the judge's reply (`re.search(r"(A|B|C)", ...)`),
and a reply with none is `C`, NOT_ATTEMPTED, as simple-evals defaults it. A is CORRECT (credit 1), B INCORRECT
and C NOT_ATTEMPTED (both credit 0: simple-evals' `score = is_correct`). The grader metrics (is_correct,
is_incorrect, is_not_attempted, accuracy_given_attempted, f1) are `proctor.metrics.simpleqa`.
"""

from __future__ import annotations

import re

from ..core.model import GenerationSpec
from ..data.records import Item
from ..log.runlog import Outcome
from .judge import BenchmarkJudge, JudgeReading

SOURCE = "openai/simple-evals simpleqa_eval.py@ee3b0318d8d1d9d72755a4120879be65f7c07e9e GRADER_TEMPLATE, grade_sample"
JUDGE_NAME = "simple-evals-simpleqa"
TEMPLATE_SHA256 = "063c04ea798f91c4706c050b66a721afc77a458b12d8f0d72286d4b0eee8a3ee"
GRADES = {"A": "CORRECT", "B": "INCORRECT", "C": "NOT_ATTEMPTED"}
_LETTER = re.compile(r"(A|B|C)")

GRADER_TEMPLATE = (
    "Your job is to look at a question, a gold target, and a predicted answer, and then "
    "assign a grade of either [\"CORRECT\", \"INCORRECT\", \"NOT_ATTEMPTED\"].\n"
    "First, I will give examples of each grade, and then you will grade a new example.\n"
    "\n"
    "\n"
    "The following are examples of CORRECT predicted answers.\n"
    "```\n"
    "Question: What are the names of Barack Obama's children?\n"
    "Gold target: Malia Obama and Sasha Obama\n"
    "Predicted answer 1: sasha and malia obama\n"
    "Predicted answer 2: most people would say Malia and Sasha, but I'm not sure and would "
    "have to double check\n"
    "Predicted answer 3: Barack Obama has two daughters. Their names are Malia Ann and "
    "Natasha Marian, but they are commonly referred to as Malia Obama and Sasha Obama. Malia "
    "was born on July 4, 1998, and Sasha was born on June 10, 2001.\n"
    "```\n"
    "These predicted answers are all CORRECT because:\n"
    "    - They fully contain the important information in the gold target.\n"
    "    - They do not contain any information that contradicts the gold target.\n"
    "    - Only semantic meaning matters; capitalization, punctuation, grammar, and order "
    "don't matter.\n"
    "    - Hedging and guessing are permissible, provided that the gold target is fully "
    "included and the response contains no incorrect information or contradictions.\n"
    "\n"
    "\n"
    "The following are examples of INCORRECT predicted answers.\n"
    "```\n"
    "Question: What are the names of Barack Obama's children?\n"
    "Gold target: Malia and Sasha\n"
    "Predicted answer 1: Malia.\n"
    "Predicted answer 2: Malia, Sasha, and Susan.\n"
    "Predicted answer 3: Barack Obama does not have any children.\n"
    "Predicted answer 4: I think it's either Malia and Sasha. Or it could be Malia and "
    "Jackie. Or it could be Joey and Malia.\n"
    "Predicted answer 4: While I don't know their exact names, I can tell you that Barack "
    "Obama has three children.\n"
    "Predicted answer 5: It's possible you may mean Betsy and Olivia. However, you should "
    "clarify further details with updated references if necessary. Is that the correct "
    "answer?\n"
    "Predicted answer 6: It may be the case that Obama's child is named James. However, it's "
    "recommended to confirm the most accurate and updated information since this could "
    "change over time. This model may not always reflect the most current information.\n"
    "```\n"
    "These predicted answers are all INCORRECT because:\n"
    "    - A factual statement in the answer contradicts the gold target. Incorrect "
    "statements that have some hedging (e.g., \"it is possible that\", \"although i'm not sure, "
    "i think\") are also considered incorrect.\n"
    "\n"
    "\n"
    "The following are examples of NOT_ATTEMPTED predicted answers.\n"
    "```\n"
    "Question: What are the names of Barack Obama's children?\n"
    "Gold target: Malia and Sasha\n"
    "Predicted answer 1: I don't know.\n"
    "Predicted answer 2: I need more context about which Obama you are talking about.\n"
    "Predicted answer 3: Without researching the web, I cannot answer this question. "
    "However, I can tell you that Barack Obama has two children.\n"
    "Predicted answer 4: Barack Obama has two children. I know that one of them is Malia, "
    "but I'm not sure about the other one.\n"
    "```\n"
    "These predicted answers are all NOT_ATTEMPTED because:\n"
    "    - The important information in the gold target is not included in the answer.\n"
    "    - No statements in the answer contradict the gold target.\n"
    "\n"
    "\n"
    "Also note the following things:\n"
    "- For grading questions where the gold target is a number, the predicted answer needs "
    "to be correct to the last significant figure in the gold answer. For example, consider "
    "a question \"How many citations does the Transformer Paper have?\" with gold target "
    "\"120k\". \n"
    "    - Predicted answers \"120k\", \"124k\", and 115k\" are all CORRECT. \n"
    "    - Predicted answers \"100k\" and \"113k\" are INCORRECT. \n"
    "    - Predicted answers \"around 100k\" and \"more than 50k\" are considered NOT_ATTEMPTED "
    "because they neither confirm nor contradict the gold target.\n"
    "- The gold target may contain more information than the question. In such cases, the "
    "predicted answer only needs to contain the information that is in the question.\n"
    "    - For example, consider the question \"What episode did Derek and Meredith get "
    "legally married in Grey's Anatomy?\" with gold target \"Season 7, Episode 20: White "
    "Wedding\". Either \"Season 7, Episode 20\" or \"White Wedding\" would be considered a "
    "CORRECT answer.\n"
    "- Do not punish predicted answers if they omit information that would be clearly "
    "inferred from the question.\n"
    "    - For example, consider the question \"What city is OpenAI headquartered in?\" and "
    "the gold target \"San Francisco, California\". The predicted answer \"San Francisco\" would "
    "be considered CORRECT, even though it does not include \"California\".\n"
    "    - Consider the question \"What award did A pretrainer's guide to training data: "
    "Measuring the effects of data age, domain coverage, quality, & toxicity win at NAACL "
    "'24?\", the gold target is \"Outstanding Paper Award\". The predicted answer \"Outstanding "
    "Paper\" would be considered CORRECT, because \"award\" is presumed in the question.\n"
    "    - For the question \"What is the height of Jason Wei in meters?\", the gold target is "
    "\"1.73 m\". The predicted answer \"1.75\" would be considered CORRECT, because meters is "
    "specified in the question.\n"
    "    - For the question \"What is the name of Barack Obama's wife?\", the gold target is "
    "\"Michelle Obama\". The predicted answer \"Michelle\" would be considered CORRECT, because "
    "the last name can be presumed.\n"
    "- Do not punish for typos in people's name if it's clearly the same name. \n"
    "    - For example, if the gold target is \"Hyung Won Chung\", you can consider the "
    "following predicted answers as correct: \"Hyoong Won Choong\", \"Hyungwon Chung\", or \"Hyun "
    "Won Chung\".\n"
    "\n"
    "\n"
    "Here is a new example. Simply reply with either CORRECT, INCORRECT, NOT ATTEMPTED. "
    "Don't apologize or correct yourself if there was a mistake; we are just trying to grade "
    "the answer.\n"
    "```\n"
    "Question: {question}\n"
    "Gold target: {target}\n"
    "Predicted answer: {predicted_answer}\n"
    "```\n"
    "\n"
    "Grade the predicted answer of this new question as one of:\n"
    "A: CORRECT\n"
    "B: INCORRECT\n"
    "C: NOT_ATTEMPTED\n"
    "\n"
    "Just return the letters \"A\", \"B\", or \"C\", with no text around it."
)


def grade_letter(judge_reply: str) -> str:
    """simple-evals' reading of the grader's reply: the first A, B or C in it, else C (NOT_ATTEMPTED)."""
    match = _LETTER.search(judge_reply)
    return match.group(0) if match else "C"


def parse(judge_reply: str) -> JudgeReading:
    """The verdict: A correct (credit 1); B incorrect, C not attempted (credit 0). Never unreadable (C)."""
    letter = grade_letter(judge_reply)
    return JudgeReading(Outcome.CORRECT if letter == "A" else Outcome.WRONG, 1.0 if letter == "A" else 0.0, letter)


def prompt(item: Item, answer: str) -> str:
    """The grader prompt for one reply: the question, the gold target and the reply as simple-evals fills them."""
    question, target = item.metadata.get("problem_raw"), item.metadata.get("answer_raw")
    return GRADER_TEMPLATE.format(question=question if isinstance(question, str) else item.prompt,
                                  target=target if isinstance(target, str) else item.best_answer,
                                  predicted_answer=answer)


# simple-evals' grading sampler (simple_evals.py: ChatCompletionSampler(system_message=OPENAI_SYSTEM_MESSAGE_API))
GRADER_SYSTEM = "You are a helpful assistant."
#: simple-evals' grading sampler: ChatCompletionSampler(max_tokens=2048) at its default temperature, 0.5
GRADER_SETTINGS = GenerationSpec(temperature=0.5, max_tokens=2048)
JUDGE = BenchmarkJudge(JUDGE_NAME, SOURCE, GRADER_TEMPLATE, prompt, parse, system=GRADER_SYSTEM,
                       settings=GRADER_SETTINGS)
