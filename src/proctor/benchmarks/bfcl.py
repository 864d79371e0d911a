"""BFCL v4's AST categories (gorilla-llm's Berkeley Function Calling Leaderboard), asked as bfcl-eval asks a
prompting model and scored by its AST checker as `proctor.scoring.bfcl_ast` reproduces it.

The data is BFCL's files as bfcl-eval's wheel ships them (`bfcl_eval/data/BFCL_v4_<category>.json`, JSON Lines:
`id`, `question` — turns, each a list of `{role, content}` messages —, `function` — the JSON-schema-like
function docs), with the possible answers beside them (`possible_answer/BFCL_v4_<category>.json`: `id`,
`ground_truth` — `[{function: {param: [allowed values, "" when optional]}}]`), aligned by line as bfcl-eval
aligns them. `--data-file PATH` reads a category's file where it is; without it, the installed bfcl-eval's own
copy is read (`pip install --no-deps bfcl-eval==2026.3.23`: its data, nothing downloaded); irrelevance and
live_relevance have no possible answers.

The prompt (kind `prompting`) is bfcl-eval's for a prompting model (`model_handler/utils.py`
`system_prompt_pre_processing_chat_model` with `DEFAULT_SYSTEM_PROMPT_FORMAT`, and `utils.py`
`add_language_specific_hint_to_function_doc`): the function docs, each description ending with the language's
note (Java and JavaScript parameters given as strings), written out as indented JSON in its system prompt,
which comes first or, where the item opens with a system message, before that message's text; then the item's
first-turn messages as they are. bfcl-eval sends an OpenAI-compatible model no token limit, at its
`--temperature` (0.001 by default; proctor's default is 0).

The kind `function-calling` is bfcl-eval's function-calling ("FC") mode as its OpenAI handler runs it
(`model_handler/api_inference/openai_completion.py` `_compile_tools`, `model_handler/utils.py` `convert_to_tool`
with `GORILLA_TO_OPENAPI`): the same hinted function docs offered as tools — each name's `.` made `_` (OpenAI's
rule), the parameters typed `object`, each property's type mapped to OpenAPI's (a `float` one also given `format:
float` and " This is a float type value." after its description) —, no system prompt, the first turn's messages
as they are, no token limit (as its `_query_FC`; `--max-tokens` sends one), one turn (the agent loop,
`scoring.agent_scorer`, its calls the answer: nothing runs). The reply's
calls are decoded as bfcl-eval's FC decoder reads them (`[{name: json.loads(arguments)}]`; a reply without calls
is its text, which does not decode) and judged by the same AST checker, names compared with `.` as `_`
(`underscore_to_dot`, as for OpenAI's FC models); irrelevance: no call. A function doc's keys other than `name`,
`description` and `parameters` (a `response` schema) are not sent (bfcl-eval sends them inside `function`).
"""

from __future__ import annotations

import copy
import importlib.util
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeGuard

from ..core.model import Message
from ..core.tools import ToolDef
from ..data.prompts import KindDefaults, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.agent_scorer import AgentTask
from ..scoring.bfcl_ast import (
    BFCL_FC_RULE,
    BFCL_RULE,
    BFCL_VERSION,
    JAVA,
    JAVASCRIPT,
    language_of,
    require_tree_sitter,
)
from ..util.errors import InputError, ProctorError
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, file_sha256, load_file

PROMPTING = "prompting"
FUNCTION_CALLING = "function-calling"
SOURCE = HubSource("gorilla-llm/Berkeley-Function-Calling-Leaderboard", split="v4")
VERSION_PREFIX = "BFCL_v4"
INSTALL_DATA = f"pip install --no-deps bfcl-eval=={BFCL_VERSION}"
COLUMNS = ("id", "question", "function")
# proctor's name → (BFCL's category, items in bfcl-eval 2026.3.23)
CATEGORIES: dict[str, tuple[str, int]] = {
    "bfcl-simple": ("simple_python", 400), "bfcl-multiple": ("multiple", 200), "bfcl-parallel": ("parallel", 200),
    "bfcl-parallel-multiple": ("parallel_multiple", 200), "bfcl-simple-java": ("simple_java", 100),
    "bfcl-simple-javascript": ("simple_javascript", 50), "bfcl-live-simple": ("live_simple", 258),
    "bfcl-live-multiple": ("live_multiple", 1053), "bfcl-live-parallel": ("live_parallel", 16),
    "bfcl-live-parallel-multiple": ("live_parallel_multiple", 24), "bfcl-irrelevance": ("irrelevance", 240),
    "bfcl-live-irrelevance": ("live_irrelevance", 884), "bfcl-live-relevance": ("live_relevance", 16),
}

# constants/default_prompts.py: the `classic` style, `plaintext` template, python return format, json docs
PERSONA = "You are an expert in composing functions."
TASK = ("You are given a question and a set of possible functions. Based on the question, you will need to make one "
        "or more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If "
        "the given question lacks the parameters required by the function, also point it out.")
OUTPUT_FORMAT = "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"
TOOL_CALL_FORMAT = ("You should only return the function calls in your response.\n\nIf you decide to invoke any of "
                    f"the function(s), you MUST put it in the format of {OUTPUT_FORMAT}.  You SHOULD NOT include any "
                    "other text in the response.")
MULTITURN = ("At each turn, you should try your best to complete the tasks requested by the user within the current "
             "turn. Continue to output functions to call until you have fulfilled the user's request to the best of "
             "your ability. Once you have no more functions to call, the system will consider the current turn "
             "complete and proceed to the next turn or task.")
AVAILABLE_TOOLS = "Here is a list of functions in json format that you can invoke.\n{functions}\n"
SYSTEM_TEMPLATE = f"{PERSONA}{TASK}\n\n{TOOL_CALL_FORMAT}\n\n{MULTITURN}\n\n{AVAILABLE_TOOLS}"
HINTS = {"python": " Note that the provided function is in Python 3 syntax.",
         JAVA: " Note that the provided function is in Java 8 SDK syntax.",
         JAVASCRIPT: " Note that the provided function is in JavaScript syntax."}
LANGUAGE_NAMES = {JAVA: "Java", JAVASCRIPT: "JavaScript"}


def category_of(entry_id: str) -> str:
    """`extract_test_category_from_id`: `live_simple_19-3-15` → `live_simple`."""
    return entry_id.split(":")[0].rsplit("_", 1)[0]


def hinted_functions(functions: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    """`_func_doc_language_specific_pre_processing` on a copy: the language's note after each description; Java
    and JavaScript parameters described as their type in string representation and typed `string`."""
    docs = copy.deepcopy(functions)
    language = language_of(category)
    for doc in docs:
        doc["description"] = doc["description"] + HINTS[language]
        if language in LANGUAGE_NAMES:
            for value in doc["parameters"]["properties"].values():
                _hint_parameter(value, language)
    return docs


def _hint_parameter(value: dict[str, Any], language: str) -> None:
    name = LANGUAGE_NAMES[language]
    if value["type"] == "any":
        value["description"] += f" This parameter can be of any type of {name} object in string representation."
    else:
        value["description"] += f" This is {name} {value['type']} type parameter in string representation."
    if value["type"] in (("ArrayList", "Array") if language == JAVA else ("array",)):
        value["description"] += (f" The list elements are of type {value['items']['type']}; they are not in string "
                                 "representation.")
        del value["items"]
    if language == JAVASCRIPT and value["type"] == "dict" and "properties" in value:
        value["description"] += (" The dictionary entries have the following schema; they are not in string "
                                 f"representation. {json.dumps(value['properties'])}")
        del value["properties"]
    value["type"] = "string"


def system_prompt(functions: list[dict[str, Any]]) -> str:
    """`formulate_system_prompt(DEFAULT_SYSTEM_PROMPT_FORMAT, functions)`."""
    return SYSTEM_TEMPLATE.format(functions=json.dumps(functions, indent=4))


def first_turn(item: Item) -> list[dict[str, str]]:
    """`system_prompt_pre_processing_chat_model` on the item's first turn: the system prompt first, or before the
    text of the system message the turn opens with."""
    meta = item.metadata
    turn = [dict(m) for m in meta["question"][0]]
    prompt = system_prompt(hinted_functions(meta["function"], str(meta["bfcl_category"])))
    if turn and turn[0]["role"] == "system":
        turn[0]["content"] = prompt + "\n\n" + turn[0]["content"]
    else:
        turn.insert(0, {"role": "system", "content": prompt})
    return turn


# constants/type_mappings.py GORILLA_TO_OPENAPI: a function doc's types as OpenAI's tools take them
GORILLA_TO_OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
    "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
    "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer"}
FLOAT_NOTE = " This is a float type value."
FC_VERSION = "convert_to_tool/OPENAI_COMPLETIONS/1"  # what the template hash of the kind changes with


def openai_tools(functions: list[dict[str, Any]], category: str) -> tuple[ToolDef, ...]:
    """`convert_to_tool(hinted docs, GORILLA_TO_OPENAPI, OPENAI_COMPLETIONS)`: each doc as an OpenAI tool."""
    out = []
    for doc in hinted_functions(functions, category):
        parameters = doc["parameters"]
        parameters["type"] = "object"
        parameters["properties"] = _cast_to_openai_type(parameters["properties"])
        out.append(ToolDef(doc["name"].replace(".", "_"), doc["description"], parameters))
    return tuple(out)


def _cast_to_openai_type(properties: dict[str, Any]) -> dict[str, Any]:
    """`_cast_to_openai_type` with GORILLA_TO_OPENAPI, in place (its nesting: lists of lists, lists of dicts)."""
    for value in properties.values():
        kind = value.get("type")
        if kind is None:
            value["type"] = "string"
        else:
            if kind == "float":
                value["format"] = "float"
                value["description"] += FLOAT_NOTE
            value["type"] = GORILLA_TO_OPENAPI.get(kind, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_to_openai_type(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = GORILLA_TO_OPENAPI[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = GORILLA_TO_OPENAPI[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast_to_openai_type(items["properties"])
    return properties


@dataclass
class BFCLPrompts:
    """bfcl-eval's messages for an item: prompting mode (`prompting`: the functions in the system prompt) and
    function-calling mode (`function-calling`: the functions as tools, an agent kind)."""

    benchmark: str
    kinds: tuple[str, ...] = (PROMPTING, FUNCTION_CALLING)
    agent_kinds: tuple[str, ...] = (FUNCTION_CALLING,)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        check_kind(kind, self.kinds, self.benchmark)
        if kind == FUNCTION_CALLING:
            return tuple(Message(m["role"], m["content"]) for m in item.metadata["question"][0])
        return tuple(Message(m["role"], m["content"]) for m in first_turn(item))

    def agent_task(self, item: Item, kind: str) -> AgentTask:
        """The function-calling kind's one turn: the first turn's messages, the item's functions as tools
        (declared: the reply's calls are the answer)."""
        check_kind(kind, self.agent_kinds, self.benchmark)
        meta = item.metadata
        return AgentTask(self.messages(item, kind), declared=openai_tools(meta["function"], str(meta["bfcl_category"])),
                         calls_answer=True)

    def request_defaults(self, kind: str) -> KindDefaults:
        """No token limit, as bfcl-eval's OpenAI handler sends none (`_query_prompting`, `_query_FC`;
        `--max-tokens` wins)."""
        return KindDefaults(sends_max_tokens=False)

    def logprob_context(self, item: Item) -> str:
        return item.prompt

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, self.benchmark)
        if kind == FUNCTION_CALLING:
            return text_hash(self.benchmark, kind, FC_VERSION, FLOAT_NOTE, *HINTS.values(), BFCL_FC_RULE.source)
        return text_hash(self.benchmark, kind, SYSTEM_TEMPLATE, *HINTS.values(), BFCL_RULE.source)


def installed_data() -> Path | None:
    """The data folder of the installed bfcl-eval (found, not imported), or None."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if folder.is_dir() else None


def data_path(name: str, category: str, data_file: str | Path | None) -> Path:
    """The category's question file: the one given, else the installed bfcl-eval's."""
    if data_file is not None:
        return Path(data_file)
    folder = installed_data()
    if folder is None:
        raise ProctorError(f"{name}: pass --data-file PATH/{VERSION_PREFIX}_{category}.json (BFCL's file, with "
                           f"possible_answer/ beside it), or install bfcl-eval's data: {INSTALL_DATA}")
    return folder / f"{VERSION_PREFIX}_{category}.json"


def load(name: str, data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """One category's items, each with its functions and possible answers; refused in one line when its
    answers are not beside it or (Java, JavaScript) tree-sitter is not installed."""
    category = CATEGORIES[name][0]
    if language_of(category) != "python":
        require_tree_sitter(language_of(category))
    path = data_path(name, category, data_file)
    rows = load_file(path, SOURCE)
    answers = None if "relevance" in category else _answers(path, rows)
    questions = convert_rows(rows, COLUMNS, partial(_question, category))
    for i, question in enumerate(questions):
        question.metadata["ground_truth"] = None if answers is None else answers[i]
    provenance = {**rows.provenance, "category": category}
    if answers is not None:
        answer_path = _answer_path(path)
        provenance |= {"possible_answer": str(answer_path.resolve()), "possible_answer_sha256": file_sha256(answer_path)}
    dataset = Dataset(name=name, description=f"BFCL v4 {category} (bfcl-eval {BFCL_VERSION})", questions=questions,
                      prompts={PROMPTING: SYSTEM_TEMPLATE},
                      metadata={"source": SOURCE.repo, "category": category})
    return Loaded(dataset=dataset, prompts=BFCLPrompts(name), provenance=provenance)


def _answer_path(path: Path) -> Path:
    return path.parent / "possible_answer" / path.name


def _answers(path: Path, questions: Rows) -> list[list[dict[str, Any]]]:
    """The possible answers beside the question file, one per question line, ids matching."""
    answer_path = _answer_path(path)
    if not answer_path.is_file():
        raise InputError.at(path, f"no possible answers beside it: expected {answer_path} (BFCL's layout)")
    rows = load_file(answer_path, SOURCE)
    if len(rows.rows) != len(questions.rows):
        raise InputError.at(answer_path, f"{len(rows.rows)} possible answers for {len(questions.rows)} questions "
                                         f"in {path.name}")
    out: list[list[dict[str, Any]]] = []
    for i, (answer, question) in enumerate(zip(rows.rows, questions.rows, strict=True)):
        truth = answer.get("ground_truth")
        if answer.get("id") != question.get("id") or not _is_ground_truth(truth):
            raise InputError([rows.error(i, f"expected the possible answer of {question.get('id')!r} "
                                            "(`id`, `ground_truth`: a list of {function: {param: [values]}})")])
        out.append(truth)
    return out


def _is_ground_truth(truth: Any) -> TypeGuard[list[dict[str, Any]]]:
    return isinstance(truth, list) and bool(truth) and all(
        isinstance(call, dict) and len(call) == 1 and all(
            isinstance(params, dict) and all(isinstance(v, list) for v in params.values())
            for params in call.values()) for call in truth)


def _question(category: str, row: dict[str, Any]) -> Question:
    entry_id, turns, functions = row["id"], row["question"], row["function"]
    if not isinstance(entry_id, str) or category_of(entry_id) != category:
        raise ValueError(f"id: {entry_id!r} is not a {category} entry")
    if not isinstance(turns, list) or not turns or not _is_turn(turns[0]):
        raise ValueError("question: expected turns, the first a list of {role, content} messages")
    if not isinstance(functions, list) or not all(_is_function(f) for f in functions):
        raise ValueError("function: expected function docs ({name, description, parameters: {properties}})")
    text = "\n\n".join(m["content"] for m in turns[0] if m["role"] != "system") or entry_id
    return Question(id=entry_id, original_id=entry_id, question=text, choices={}, answer=_answer_text(category),
                    category=category, metadata={"bfcl_category": category, "question": turns,
                                                 "function": functions})


def _is_turn(turn: Any) -> bool:
    return isinstance(turn, list) and bool(turn) and all(
        isinstance(m, dict) and m.get("role") in ("system", "user", "assistant") and isinstance(m.get("content"), str)
        for m in turn)


def _is_function(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("name"), str) and isinstance(doc.get("description"), str) \
        and isinstance(doc.get("parameters"), dict) and isinstance(doc["parameters"].get("properties"), dict)


def _answer_text(category: str) -> str:
    if category.endswith("irrelevance"):
        return "no function call"
    return "a function call" if "relevance" in category else "the possible answers (metadata.ground_truth)"


def _builtin(name: str, category: str, size: int) -> Builtin:
    return Builtin(name, partial(load, name), SOURCE, size,
                   f"BFCL v4 {category}: function calls scored by bfcl-eval's AST checker (prompting mode; "
                   f"--prompt {FUNCTION_CALLING}: tool calls, its FC mode)",
                   answer_rules={PROMPTING: BFCL_RULE, FUNCTION_CALLING: BFCL_FC_RULE})


BENCHMARKS = tuple(_builtin(name, category, size) for name, (category, size) in CATEGORIES.items())
