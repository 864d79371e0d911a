"""BFCL's AST categories, scored as bfcl-eval scores them: the reply read as a call list, then its AST checker.

The reference is bfcl-eval 2026.3.23 (PyPI; gorilla-llm's Berkeley Function Calling Leaderboard v4):
`model_handler/utils.py` `default_decode_ast_prompting` (what a prompting model's reply is read as: the text
stripped of backticks, newlines and spaces, wrapped in `[...]` where it is not, then parsed — Python by `ast`,
Java and JavaScript by tree-sitter's grammars), `utils.py` `is_function_calling_format_output` and
`is_empty_output`, `eval_checker/ast_eval/ast_checker.py` (simple, multiple and unordered parallel checkers,
the type checker, the string / list / dict / list-of-dict value checkers) with its Java and JavaScript type
converters, and `eval_checker/eval_runner.py` `_evaluate_single_ast_entry` / `_evaluate_single_relevance_entry`
(how a reply becomes a verdict). proctor reimplements them; bfcl-eval itself is never imported here (it is the
test oracle: `bench/bfcl_agreement.py` replays replies on every item through both).

Where proctor differs, on purpose:
- bfcl-eval `eval`s an arithmetic argument (`f(a=2*3)`) in its own module's namespace, so a reply can run code
  there; proctor evaluates arithmetic over literals and a few pure builtins (`abs(-2)*3`), within size bounds, and
  a reply whose arithmetic calls anything else (`__import__('os').getpid()+1`) or would be huge (`9**9**9`) is
  unreadable — though one calling a builtin bfcl-eval's `eval` would run still counts as calling a function for
  the relevance categories.
- Where bfcl-eval's checker raises (a value shape it does not expect: its run stops), proctor scores the sample
  wrong and says why.
- A reply of more than `MAX_CALLS` calls is not checked (no item expects so many); it still counts as calling a
  function for the relevance categories, as bfcl-eval counts it.

Java and JavaScript replies are parsed with tree-sitter 0.21.3 and the grammars bfcl-eval pins (`pip install
'proctor-eval[bfcl]'`); the walk over the tree that turns it into calls is proctor's own, equal to bfcl-eval's.
A tool-calling reply (name, JSON arguments) feeds the same checker through `read_tool_calls`.
"""

from __future__ import annotations

import ast
import builtins
import json
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from ..core.trajectory import Trajectory
from ..data.records import Item
from ..log.runlog import GenerationDetails, Outcome
from ..util.errors import ProctorError
from .base import Scored
from .extract import NONE, AnswerRule, Extraction

RULE_NAME = "bfcl-ast"
BFCL_VERSION = "2026.3.23"
SOURCE = (f"bfcl-eval {BFCL_VERSION} (PyPI) model_handler/utils.py default_decode_ast_prompting, "
          "eval_checker/ast_eval/ast_checker.py ast_checker, eval_checker/eval_runner.py")
INSTALL = "pip install 'proctor-eval[bfcl]'"
PYTHON, JAVA, JAVASCRIPT = "python", "java", "javascript"
MAX_CALLS = 64  # the most calls a reply may make and still be checked (BFCL's items expect at most 8)

# ast_checker.py's constants and constants/type_mappings.py's conversions
PYTHON_TYPE_MAPPING: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool,
                                        "array": list, "tuple": list, "dict": dict, "any": str}
PYTHON_NESTED_TYPE_CHECK_LIST = ("array", "tuple")
NESTED_CONVERSION_TYPE_LIST = ("Array", "ArrayList", "array")
JAVA_TYPE_CONVERSION: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int, "boolean": bool,
    "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict, "Hashtable": dict, "Queue": list,
    "Stack": list, "String": str, "any": str}
JS_TYPE_CONVERSION: dict[str, type] = {"String": str, "integer": int, "float": float, "Bigint": int,
                                       "Boolean": bool, "dict": dict, "array": list, "any": str}


class Unreadable(Exception):
    """A reply that is not a call list as bfcl-eval's decoder reads it (it raises there)."""


class RunsCode(Unreadable):
    """A call list whose arithmetic calls a builtin bfcl-eval's `eval` would run (`__import__(...)`, `open`):
    proctor does not run it, so the value is unknown, but the reply does call (for the relevance categories)."""


class CheckerFailure(Exception):
    """A reply bfcl-eval's checker raises on (a value shape it does not expect)."""


def language_of(category: str) -> str:
    """bfcl-eval's `is_java` / `is_js` on a category name."""
    if "javascript" in category:
        return JAVASCRIPT
    return JAVA if "java" in category else PYTHON


def is_relevance(category: str) -> bool:
    """bfcl-eval's `is_relevance_or_irrelevance`: scored by whether the reply calls a function at all."""
    return "relevance" in category or "irrelevance" in category


# --------------------------------------------------------------------------- reading a reply


@dataclass(frozen=True)
class Reading:
    """A reply as bfcl-eval's decoder reads it: the decoded calls (its shape, `[{name: {param: value}}]`, or
    whatever the Java/JavaScript walk returned), or why it could not be read."""

    calls: Any = None
    problem: str | None = None
    runs_code: bool = False  # unreadable only because proctor would not run its code (`RunsCode`)

    @property
    def readable(self) -> bool:
        return self.problem is None


def read_reply(text: str, language: str) -> Reading:
    """`default_decode_ast_prompting`: never raises; an unreadable reply is a Reading with its problem."""
    wrapped = text.strip("`\n ")
    if not wrapped.startswith("["):
        wrapped = "[" + wrapped
    if not wrapped.endswith("]"):
        wrapped = wrapped + "]"
    try:
        if language == PYTHON:
            return Reading(decode_python(wrapped))
        inner = wrapped[1:-1]  # bfcl-eval drops the first and last character (legacy, its note says)
        return Reading(decode_java(inner) if language == JAVA else decode_javascript(inner))
    except Unreadable as e:
        return Reading(problem=str(e), runs_code=isinstance(e, RunsCode))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, ArithmeticError) as e:
        return Reading(problem=f"{type(e).__name__}: {e}"[:300])


def read_tool_calls(calls: Sequence[tuple[str, str]]) -> Reading:
    """A tool-calling reply — (name, arguments as JSON text) per call — in the decoder's shape, as bfcl-eval's
    function-calling handlers read it (`json.loads` of each call's arguments)."""
    out: list[dict[str, Any]] = []
    for name, arguments in calls:
        try:
            out.append({name: json.loads(arguments)})
        except (json.JSONDecodeError, TypeError, RecursionError) as e:
            return Reading(problem=f"the arguments of {name!r} are not JSON: {e}"[:300])
    return Reading(out)


def is_call_list(decoded: Any) -> bool:
    """`is_function_calling_format_output`: a list of one-key dicts, each key's value a dict ([] included)."""
    return isinstance(decoded, list) and all(
        type(c) is dict and len(c) == 1 and type(next(iter(c.values()))) is dict for c in decoded)


def is_empty(decoded: Any) -> bool:
    """`is_empty_output`: no call (not a call list, [], or [{}])."""
    return not is_call_list(decoded) or len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)


# ----------------------------------------------------------------- Python: `ast_parse` and `resolve_ast_*`


def decode_python(wrapped: str) -> list[dict[Any, Any]]:
    """`ast_parse` (Python): the text as one expression, a call or a list of calls."""
    body = ast.parse(wrapped.strip().strip("'"), mode="eval").body
    if isinstance(body, ast.Call):
        return [_call(body)]
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        raise Unreadable(f"not a list of calls: {type(body).__name__}")
    out = []
    for elem in body.elts:
        if not isinstance(elem, ast.Call):
            raise Unreadable(f"not a call: {ast.unparse(elem)[:80]}")
        out.append(_call(elem))
    return out


def _call(node: ast.Call) -> dict[Any, Any]:
    """`resolve_ast_call`: {dotted name: {keyword: value}} (positional arguments are not kept)."""
    parts = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return {".".join(reversed(parts)): {kw.arg: _value(kw.value) for kw in node.keywords}}


def _value(node: ast.expr | None) -> Any:
    """`resolve_ast_by_type`, its quirks kept (a unary operator always negates; a call without keywords is
    its source text; a name is its identifier)."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return _negated(node.operand)
    if isinstance(node, ast.List):
        return [_value(v) for v in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.BinOp):
        return evaluate(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else _call(node)
    if isinstance(node, ast.Tuple):
        return tuple(_value(v) for v in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise Unreadable(f"unsupported value: {type(node).__name__}")


def _negated(operand: ast.expr) -> Any:
    """bfcl-eval's `-value.operand.value`, whatever the operator (`+5` reads as -5)."""
    value: Any = operand.value if isinstance(operand, ast.Constant) else None
    if type(value) in (int, float, complex, bool):
        return -value
    raise Unreadable(f"unsupported unary operand: {ast.unparse(operand)[:80]}")


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                                            ast.Invert: operator.invert}
# the builtins arithmetic may call (bfcl-eval's `eval` calls anything; these are pure and bounded by their inputs)
PURE_BUILTINS: dict[str, Callable[..., Any]] = {f.__name__: f for f in (abs, round, min, max, sum, len, int, float,
                                                                         str, bool)}
BUILTIN_NAMES = frozenset(dir(builtins))
MAX_SIZE = 1_000_000  # the longest string or list, and the most bits of a number, arithmetic may build


def evaluate(node: ast.expr) -> Any:
    """What bfcl-eval's `eval(ast.unparse(node))` gives for arithmetic over literals and `PURE_BUILTINS`; anything
    else (a name, another call, a result past MAX_SIZE) is unreadable rather than run."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = evaluate(node.left), evaluate(node.right)
        _check_size(node.op, left, right)
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](evaluate(node.operand))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [evaluate(v) for v in node.elts]
        return list(values) if isinstance(node, ast.List) else tuple(values) if isinstance(node, ast.Tuple) \
            else set(values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS \
            and not any(isinstance(a, ast.Starred) for a in node.args) and all(k.arg for k in node.keywords):
        args = [evaluate(a) for a in node.args]
        return PURE_BUILTINS[node.func.id](*args, **{str(k.arg): evaluate(k.value) for k in node.keywords})
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {evaluate(k): evaluate(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and _root_name(node) in BUILTIN_NAMES:
        raise RunsCode(f"proctor does not evaluate {ast.unparse(node)[:80]!r} (bfcl-eval would run it)")
    raise Unreadable(f"proctor does not evaluate {ast.unparse(node)[:80]!r} (bfcl-eval would run it)")


def _root_name(node: ast.expr) -> str | None:
    """The name a call chain starts from: `__import__` in `__import__('os').getpid()`."""
    while isinstance(node, (ast.Call, ast.Attribute)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse arithmetic whose result would be huge (bfcl-eval would build it, or hang)."""
    sized = (str, bytes, list, tuple)
    if isinstance(op, ast.Mult) and (isinstance(left, sized) or isinstance(right, sized)):
        seq, n = (left, right) if isinstance(left, sized) else (right, left)
        if isinstance(n, int) and len(seq) * n > MAX_SIZE:
            raise Unreadable("a repetition past proctor's size bound")
    if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)):
        raise Unreadable("proctor does not %-format strings in a reply")
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0 \
            and abs(left) > 1 and right * abs(left).bit_length() > MAX_SIZE:
        raise Unreadable("a power past proctor's size bound")
    if isinstance(op, ast.LShift) and isinstance(right, int) and right > MAX_SIZE:
        raise Unreadable("a shift past proctor's size bound")


# --------------------------------------------------------------- Java and JavaScript: tree-sitter's tree


def require_tree_sitter(language: str) -> None:
    """Fails in one line when tree-sitter or the language's grammar is not installed."""
    _parser(language)


@cache
def _language(language: str) -> Any:
    try:
        from tree_sitter import Language, Parser  # noqa: F401 - both must be there
        grammar = __import__("tree_sitter_java" if language == JAVA else "tree_sitter_javascript")
        return Language(grammar.language(), language)
    except (ImportError, TypeError, ValueError) as e:
        raise ProctorError(f"BFCL's {language} replies are parsed with tree-sitter 0.21.3 and its {language} "
                           f"grammar ({type(e).__name__}: {e}): {INSTALL}") from None


def _parser(language: str) -> Any:
    grammar = _language(language)
    from tree_sitter import Parser

    parser = Parser()
    parser.set_language(grammar)
    return parser


def _parse(source: str, language: str) -> Any:
    root = _parser(language).parse(source.encode("utf8")).root_node
    if "ERROR" in root.sexp():
        raise Unreadable(f"{language} syntax error")
    return root


def decode_java(source: str) -> Any:
    """`parse_java_function_call`: the first method invocation in the tree, its named arguments as text; {}
    when there is none."""
    found = _first_invocation(source, _parse(source, JAVA))
    return found if found else {}


def _text(source: str, node: Any) -> str:
    return source[node.start_byte:node.end_byte]  # bfcl-eval slices the text by byte offsets


def _first_invocation(source: str, node: Any) -> list[dict[Any, Any]] | None:
    """`traverse`: depth first, the first method_invocation (which ends the search, arguments or not)."""
    if node.type != "method_invocation":
        for child in node.children:
            if found := _first_invocation(source, child):
                return found
        return None
    name = _text(source, node.child_by_field_name("name"))
    owner = node.child_by_field_name("object")
    if owner is not None:
        name = f"{_text(source, owner)}.{name}"
    arguments = node.child_by_field_name("arguments")
    if arguments is None:
        return None
    return [{name: _java_arguments(source, arguments)}]


def _java_arguments(source: str, node: Any) -> dict[Any, Any]:
    """`extract_arguments`: `name=value` pairs, and bare identifiers / class literals under the key None."""
    args: dict[Any, Any] = {}
    for child in node.children:
        if child.type == "assignment_expression":
            key, value = _text(source, child.children[0]), _java_value(source, child.children[2])
        elif child.type in ("identifier", "class_literal", "set"):
            key, value = None, _java_value(source, child)
        else:
            continue
        if key in args:
            raise Unreadable(f"the argument {key!r} is given twice")
        args[key] = value
    return args


def _java_value(source: str, node: Any, nested: bool = False) -> str:
    """`traverse_node`: a value's text, a string or char literal unquoted at the top, spaces between tokens
    dropped, `new T[]{...}` and `new T(args)` rebuilt (an anonymous class body left out)."""
    if node is None:
        raise Unreadable("a Java construct bfcl-eval cannot read")
    kind = node.type
    if kind in ("string_literal", "character_literal"):
        return _text(source, node) if nested else _text(source, node)[1:-1]
    if kind in ("identifier", "class_literal", "type_identifier", "method_invocation"):
        return _text(source, node)
    if kind == "array_creation_expression":
        return (f"new {_java_value(source, node.child_by_field_name('type'), True)}[]"
                f"{_java_value(source, node.child_by_field_name('value'), True)}")
    if kind == "object_creation_expression":
        created = _java_value(source, node.child_by_field_name("type"), True)
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            return f"new {created}()"
        inner = ", ".join(_java_value(source, c, True) for c in arguments.children if c.type not in (",", "(", ")"))
        return f"new {created}({inner})"
    if kind == "set":
        return "{" + ", ".join(_java_value(source, c, True) for c in node.children if c.type not in (",", "set")) + "}"
    if node.child_count > 0:
        return "".join(_java_value(source, c, True) for c in node.children)
    return _text(source, node)


def decode_javascript(source: str) -> Any:
    """`parse_javascript_function_call`: the first statement that is a call, its named arguments as source text
    (quotes trimmed); None when no statement is."""
    root = _parse(source, JAVASCRIPT)
    if root.type != "program":
        return None
    for child in root.children:
        if child.type != "expression_statement":
            continue
        for sub in child.children:
            if sub.type == "call_expression":
                return [{sub.children[0].text.decode("utf8"): _js_arguments(sub.children[1])}]
    return None


def _js_arguments(node: Any) -> dict[Any, Any]:
    """`extract_arguments` (JavaScript): `name=value` as text, and bare identifiers / `true` under None."""
    args: dict[Any, Any] = {}
    for child in node.children:
        if child.type == "assignment_expression":
            key, value = child.children[0].text.decode("utf-8"), child.children[2].text.decode("utf-8")
            if (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'")):
                value = value[1:-1]
        elif child.type in ("identifier", "true"):
            key, value = None, child.text.decode("utf-8")
        else:
            continue
        if key in args:
            raise Unreadable(f"the argument {key!r} is given twice")
        args[key] = value
    return args


# ---------------------------------------------------------------------- the checker (ast_checker.py)


@dataclass(frozen=True)
class Check:
    """A checker's verdict: valid, or the error type and message bfcl-eval reports."""

    valid: bool
    error_type: str = ""
    error: str = ""
    is_variable: bool = False


VALID = Check(True)


def _invalid(error_type: str, error: str) -> Check:
    return Check(False, error_type, error)


def check_calls(functions: list[dict[str, Any]], calls: list[dict[Any, Any]], answers: list[dict[str, Any]],
                language: str, category: str, underscore_to_dot: bool = False) -> Check:
    """`ast_checker`: by category, the unordered parallel checker, the multiple checker or the simple one.
    `underscore_to_dot`: the model's names had `.` replaced by `_` (a tool-calling API's rule)."""
    if "parallel" in category:
        return _parallel(functions, calls, answers, language, underscore_to_dot)
    if "multiple" in category:
        if len(calls) != len(answers):
            return _invalid("multiple_function_checker:wrong_count", "Wrong number of functions.")
        return check_function(_find(functions, next(iter(answers[0]))), calls[0], answers[0], language,
                              underscore_to_dot)
    if len(calls) != 1:
        return _invalid("simple_function_checker:wrong_count", "Wrong number of functions.")
    return check_function(functions[0], calls[0], answers[0], language, underscore_to_dot)


def _find(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """`find_description`: the function named `name` (bfcl-eval goes on with None: it then raises)."""
    found = next((f for f in functions if f["name"] == name), None)
    if found is None:
        raise CheckerFailure(f"no function {name!r} among the item's functions")
    return found


def _parallel(functions: list[dict[str, Any]], calls: list[dict[Any, Any]], answers: list[dict[str, Any]],
              language: str, underscore_to_dot: bool) -> Check:
    """`parallel_function_checker_no_order`: each expected call, in order, takes the first unmatched call that
    passes; the first expected call none passes fails the reply."""
    if len(calls) != len(answers):
        return _invalid("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
    matched: list[int] = []
    for i, answer in enumerate(answers):
        doc = _find(functions, next(iter(answer)))
        result = VALID
        for index, call in enumerate(calls):
            if index in matched:
                continue
            result = check_function(doc, call, answer, language, underscore_to_dot)
            if result.valid:
                matched.append(index)
                break
        if not result.valid:
            return _invalid("parallel_function_checker_no_order:cannot_find_match",
                            f"Could not find a matching function among index "
                            f"{[j for j in range(len(calls)) if j not in matched]} of model output for index {i} "
                            f"of possible answers. ({result.error_type}: {result.error})")
    return VALID


def check_function(doc: dict[str, Any], call: dict[Any, Any], answer: dict[str, Any], language: str,
                   underscore_to_dot: bool = False) -> Check:
    """`simple_function_checker`: the name, the required parameters, each given parameter's type and value,
    then every expected parameter not marked optional ("" among its values) present."""
    expected = next(iter(answer.values()))
    name = doc["name"]
    if underscore_to_dot and "." in name:
        name = re.sub(r"\.", "_", name)
    if name not in call:
        return _invalid("simple_function_checker:wrong_func_name", f"Function name {name!r} not found in model output.")
    params = call[name]
    details = doc["parameters"]["properties"]
    for param in doc["parameters"]["required"]:
        if param not in params:
            return _invalid("simple_function_checker:missing_required", f"Missing required parameter: {param!r}.")
    for param, value in params.items():
        if param not in details or param not in expected:
            return _invalid("simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}.")
        result = _check_param(param, value, details[param], expected[param], language)
        if not result.valid:
            return result
    for param in expected:
        if param not in params and "" not in expected[param]:
            return _invalid("simple_function_checker:missing_optional",
                            f"Optional parameter {param!r} not provided and not marked as optional.")
    return VALID


def _check_param(param: str, value: Any, detail: dict[str, Any], allowed: list[Any], language: str) -> Check:
    """One parameter: converted (Java, JavaScript: from its text), type-checked, then its value compared."""
    declared = detail["type"]
    nested_type: type | None = None
    if language in (JAVA, JAVASCRIPT):
        table = JAVA_TYPE_CONVERSION if language == JAVA else JS_TYPE_CONVERSION
        if declared not in table:
            raise CheckerFailure(f"the {language} type {declared!r} has no conversion")
        converted = table[declared]
        if type(value) is not str:
            return _invalid(f"type_error:{'java' if language == JAVA else 'js'}",
                            f"Incorrect type for parameter {param!r}. Expected type String, got "
                            f"{type(value).__name__}. Parameter value: {value!r}.")
        convert = java_type_converter if language == JAVA else js_type_converter
        if declared in NESTED_CONVERSION_TYPE_LIST:
            inner = detail["items"]["type"]
            nested_type = table[inner]
            value = convert(value, declared, inner)
        else:
            value = convert(value, declared)
    else:
        if declared not in PYTHON_TYPE_MAPPING:
            raise CheckerFailure(f"the type {declared!r} is not one bfcl-eval checks")
        converted = PYTHON_TYPE_MAPPING[declared]
        if declared in PYTHON_NESTED_TYPE_CHECK_LIST:
            nested_type = PYTHON_TYPE_MAPPING[detail["items"]["type"]]
    if declared == "tuple" and type(value) is tuple:
        value = list(value)
    if language == PYTHON and declared == "float" and type(value) is int:
        value = float(value)
    typed = type_check(param, value, allowed, declared, converted, nested_type)
    if not typed.valid:
        return typed
    return _check_value(param, value, allowed, converted, nested_type, typed.is_variable)


def _check_value(param: str, value: Any, allowed: list[Any], converted: type, nested_type: type | None,
                 is_variable: bool) -> Check:
    """The value against the possible answers: dicts, lists of dicts, strings and lists compared standardized
    (unless the answer is a variable's name), anything else by equality."""
    if not is_variable:
        if converted is dict:
            return dict_check(param, value, allowed)
        if converted is list and nested_type is dict:
            return list_dict_check(param, value, allowed)
        if converted is str:
            return string_check(param, value, allowed)
        if converted is list:
            return list_check(param, value, allowed)
    if value not in allowed:
        return _invalid("value_error:others", f"Invalid value for parameter {param!r}: {value!r}. "
                                              f"Expected one of {allowed}.")
    return VALID


def _answer_type(allowed: list[Any]) -> type | None:
    """`get_possible_answer_type`: the type of the first possible answer that is not "" (optional)."""
    return next((type(a) for a in allowed if a != ""), None)


def type_check(param: str, value: Any, allowed: Any, declared: str, converted: type | None,
               nested_type: type | None) -> Check:
    """`type_checker`: the value's type is the declared one (a list's items too, one level deep); or the
    possible answers' type, which marks the value a variable's name."""
    answer_type = _answer_type(allowed)
    is_variable = answer_type is not None and answer_type is not converted
    error = (f"Incorrect type for parameter {param!r}. Expected type {declared}, got {type(value).__name__}. "
             f"Parameter value: {value!r}.")
    if type(value) is converted:
        if nested_type is None:
            return Check(True, is_variable=is_variable)
        for option in allowed:
            if type(option) is not list or all(
                    type_check(param, item, option, str(nested_type), nested_type, None).valid
                    for item in cast(list[Any], value)):
                return Check(True, is_variable=is_variable)
        error = (f"Nested type checking failed for parameter {param!r}. Expected outer type {declared} with inner "
                 f"type {nested_type}. Parameter value: {value!r}.")
    if answer_type is not None and type(value) is answer_type:
        if type(value) is converted:  # the nested check failed: bfcl-eval returns its failed result
            return Check(False, "type_error:nested", error, is_variable=True)
        return Check(True, is_variable=True)
    return _invalid("type_error:simple", error)


def standardize(text: str) -> str:
    """`standardize_string`: spaces and `,./-_*^` removed, lower case, single quotes made double."""
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def _standard(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def string_check(param: str, value: str, allowed: list[Any]) -> Check:
    """`string_checker`: the standardized value is one of the standardized string answers."""
    if standardize(value) not in [standardize(a) for a in allowed if type(a) is str]:
        return _invalid("value_error:string", f"Invalid value for parameter {param!r}: {value!r}. Expected one of "
                                              f"{allowed}. Case insensitive.")
    return VALID


def list_check(param: str, value: list[Any], allowed: list[Any]) -> Check:
    """`list_checker`: the list, its strings standardized, equals one of the answers standardized (an optional
    marker "" reads as the empty list)."""
    given = [_standard(v) for v in value]
    if given not in [[_standard(option[j]) for j in range(len(option))] for option in allowed]:
        return _invalid("value_error:list/tuple", f"Invalid value for parameter {param!r}: {value!r}. "
                                                  f"Expected one of {allowed}.")
    return VALID


def dict_check(param: str, value: Any, options: list[Any]) -> Check:
    """`dict_checker`: some answer ("" skipped) has every key of the value, each value among its standardized
    answers, and no missing key that is not optional."""
    result = _invalid("dict_checker:unclear", "")
    for option in options:
        if option == "":
            continue
        result = _dict_matches(value, option)
        if result.valid:
            return VALID
    return result


def _dict_matches(value: Any, option: Any) -> Check:
    """One answer dict against the value (bfcl-eval's loop body; a value or answer of another shape raises
    where it raises there)."""
    for key, given in value.items():
        if key not in option:
            return _invalid("value_error:dict_key", f"Unexpected dict key parameter: '{key}'.")
        choices = [_standard(a) for a in option[key]]
        if _standard(given) not in choices:
            return _invalid("value_error:dict_value",
                            f"Invalid value for parameter {key!r}: {given!r}. Expected one of {choices}.")
    for key, answers in option.items():
        if key not in value and "" not in answers:
            return _invalid("value_error:dict_key", f"Missing dict key parameter: '{key}'.")
    return VALID


def list_dict_check(param: str, value: list[Any], options: list[Any]) -> Check:
    """`list_dict_checker`: some answer has as many dicts, each matching its dict in order."""
    result = _invalid("list_dict_checker:unclear", "")
    for option in options:
        if len(value) != len(option):
            result = _invalid("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
            continue
        for i, given in enumerate(value):
            result = dict_check(param, given, [option[i]])
            if not result.valid:
                break
        else:
            return VALID
    return result


# ------------------------------------------------- Java and JavaScript type converters (type_convertor/)


def java_type_converter(value: str, expected: str, nested: str | None = None) -> Any:
    """`java_type_converter`: a Java value's text as the Python value it stands for (the text itself when it
    does not read as that type)."""
    if expected in ("byte", "short", "integer"):
        return int(value) if re.match(r"^-?\d+$", value) else str(value)
    if expected == "float":
        if not re.match(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$", value):
            return str(value)
        return float(re.sub(r"[fF]$", "", value))
    if expected == "double":
        return float(value) if re.match(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$", value) else str(value)
    if expected == "long":
        return int(re.sub(r"[lL]$", "", value)) if re.match(r"^-?\d+[lL]$", value) else str(value)
    if expected == "boolean":
        return value == "true" if value in ("true", "false") else str(value)
    if expected == "char":
        return value if re.match(r"^\'.$\'", value) else str(value)
    if expected == "ArrayList":
        return _java_arraylist(value, nested)
    if expected == "Array":
        return _java_array(value, nested)
    if expected == "HashMap":
        return _java_hashmap(value)
    if expected in ("String", "any"):
        return str(value)
    raise CheckerFailure(f"bfcl-eval does not convert the Java type {expected!r}")


def _java_element(text: str, nested: str | None) -> Any:
    if nested in ("char", "String"):
        return text[1:-1]
    return java_type_converter(text, nested) if nested else java_value(text)


def _java_arraylist(text: str, nested: str | None) -> Any:
    if m := re.search(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)", text):
        return [_java_element(e.strip(), nested) for e in m.group(1).split(",")]
    if m := re.search(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", text, re.DOTALL):
        return [_java_element(e.strip(), nested) for e in re.findall(r"add\((.+?)\)", m.group(1))]
    if re.search(r"new\s+ArrayList<\w*>\(\)", text):
        return []
    return text


def _java_array(text: str, nested: str | None) -> Any:
    m = re.search(r"new\s+\w+\[\]\s*\{(.*?)\}", text)
    if not m:
        return text
    parts = [x.strip() for x in m.group(1).split(",") if x.strip()]
    return [java_type_converter(x, nested) if nested else java_value(x) for x in parts]


def _java_hashmap(text: str) -> Any:
    m = re.search(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", text, re.DOTALL)
    if m:
        return {k: java_value(v.strip()) for k, v in re.findall(r"put\(\"(.*?)\",\s*(.*?)\)", m.group(1))} \
            if m.group(1).strip() else {}
    return {} if re.search(r"new\s+HashMap<.*?>\s*\(\)", text) else text


def java_value(text: str) -> Any:
    """`parse_java_value`: a literal's text without a declared type."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if re.match(r"^-?\d+[lL]$", text):
        return int(text[:-1])
    if re.match(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$", text):
        return float(re.sub(r"[fF]$", "", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def js_type_converter(value: str, expected: str, nested: str | None = None) -> Any:
    """`js_type_converter`: a JavaScript value's source text as the Python value it stands for (the text
    itself when it does not read as that type)."""
    if expected not in JS_TYPE_CONVERSION:
        raise ValueError(f"Unsupported type: {expected}")
    if expected == "String":
        quoted = (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'"))
        return value[1:-1] if quoted else str(value)
    if expected == "integer":
        return int(value) if re.match(r"^-?\d+$", value) else str(value)
    if expected == "float":
        return float(value) if re.match(r"^-?\d+(\.\d+)?$", value) else str(value)
    if expected == "Bigint":
        return int(value[:-1]) if re.match(r"^-?\d+n$", value) else str(value)
    if expected == "Boolean":
        return value == "true" if value in ("true", "false") else str(value)
    if expected == "dict":
        return _js_dict(value.strip())
    if expected == "array":
        return _js_array(value.strip(), nested)
    return str(value)


_JS_ARRAY_2D = r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
_JS_ARRAY = r"\[(.*?)\]|\bnew\s+Array\((.*?)\)"


def _js_array(code: str, nested: str | None) -> Any:
    """`parse_js_collection(code, "array")`: a 2-D array, else a 1-D one (its items by the nested type)."""
    try:
        if m := re.match(_JS_ARRAY_2D, code):
            rows = []
            for i, row in enumerate(re.findall(r"\[(.*?)\]", m.group(0))):
                row = row.strip()
                if i == 0 and row.startswith("["):
                    row = row[1:]
                rows.append([js_value(e.strip()) for e in row.split(",")])
            return rows
        m = re.match(_JS_ARRAY, code)
        if not m:
            return code
        inner = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else ""
        elements = inner.strip().split(",") if inner.strip() else []
        if not nested:
            return [js_value(e.strip()) for e in elements]
        return [js_type_converter(e.strip(), nested, "String") if e.strip().startswith(("'", '"'))
                else js_type_converter(e.strip(), nested) for e in elements]
    except Exception:  # noqa: BLE001 - bfcl-eval's bare `except: return code`
        return code


def _js_dict(code: str) -> Any:
    """`parse_js_collection(code, "dict")`: `{key: value, ...}` by its regular expressions."""
    if code == "{}":
        return {}
    m = re.match(r"\{(.*?)\}", code)
    if not m:
        return code
    out: dict[str, Any] = {}
    for key, raw in re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", m.group(1)):
        key, raw = key.strip().strip("'\""), raw.strip()
        if raw.startswith("[") and raw.endswith("]"):
            out[key] = _js_array(raw.strip(), None)
        elif raw.startswith("{") and raw.endswith("}"):
            out[key] = _js_dict(raw.strip())
        else:
            out[key] = js_value(raw.strip("'\""))
    return out


def js_value(text: str) -> Any:
    """`parse_js_value`: a literal's text without a declared type."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    return _number_or_text(text)


# ---------------------------------------------------------------------------- the verdict on one reply


@dataclass(frozen=True)
class Verdict:
    """bfcl-eval's verdict on one entry, and proctor's outcome for it: CORRECT, WRONG (the checker's reason),
    or NO_ANSWER (the reply is not a call list: unreadable, or the wrong shape)."""

    valid: bool
    outcome: Outcome
    error_type: str = ""
    error: str = ""
    calls: Any = None


def judge(category: str, functions: list[dict[str, Any]], answers: list[dict[str, Any]] | None,
          reading: Reading, underscore_to_dot: bool = False) -> Verdict:
    """An entry's verdict from its reading: relevance categories by whether it calls a function, the others by
    the AST checker."""
    if is_relevance(category):
        calls = (reading.readable and not is_empty(reading.calls)) or reading.runs_code
        ok = not calls if "irrelevance" in category else calls
        why = ("irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not.") \
            if "irrelevance" in category else \
            ("relevance_error:decoder_failed", f"Invalid syntax. Failed to decode AST when it should have. "
                                               f"{reading.problem or ''}".strip())
        return Verdict(ok, Outcome.CORRECT if ok else Outcome.WRONG, *(("", "") if ok else why), calls=reading.calls)
    if not reading.readable:
        return Verdict(False, Outcome.NO_ANSWER, "ast_decoder:decoder_failed",
                       f"Invalid syntax. Failed to decode AST. {reading.problem}")
    if not is_call_list(reading.calls):
        return Verdict(False, Outcome.NO_ANSWER, "ast_decoder:decoder_wrong_output_format",
                       "Did not output in the specified format.", reading.calls)
    if len(reading.calls) > MAX_CALLS:
        return Verdict(False, Outcome.NO_ANSWER, "proctor:too_many_calls",
                       f"{len(reading.calls)} calls (proctor checks at most {MAX_CALLS})", reading.calls)
    return _checked(category, functions, answers or [], reading, underscore_to_dot)


def _checked(category: str, functions: list[dict[str, Any]], answers: list[dict[str, Any]], reading: Reading,
             underscore_to_dot: bool) -> Verdict:
    language = language_of(category)
    try:
        check = check_calls(functions, reading.calls, answers, language, category, underscore_to_dot)
    except (CheckerFailure, KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as e:
        return Verdict(False, Outcome.WRONG, "proctor:checker_raised",
                       f"bfcl-eval's checker raises on this reply ({type(e).__name__}: {e})"[:300], reading.calls)
    return Verdict(check.valid, Outcome.CORRECT if check.valid else Outcome.WRONG, check.error_type, check.error,
                   reading.calls)


def grade(item: Item, text: str) -> Scored:
    """One reply to one BFCL item, scored as bfcl-eval scores it (the item keeps its category, functions and
    possible answers in its metadata)."""
    meta = item.metadata
    category = str(meta["bfcl_category"])
    language = PYTHON if is_relevance(category) else language_of(category)
    verdict = judge(category, meta["function"], meta.get("ground_truth"), read_reply(text, language))
    details = GenerationDetails(compare=RULE_NAME, rejected=None if verdict.valid else
                                f"{verdict.error_type}: {verdict.error}"[:500])
    extracted = None if verdict.calls is None else repr(verdict.calls)[:2000]
    return Scored(verdict.outcome, details, score=1.0 if verdict.valid else 0.0, extracted=extracted,
                  extraction_rule=RULE_NAME if verdict.calls is not None else NONE)


def no_answer_read(text: str) -> Extraction:
    """A grader rule extracts no answer on its own: it scores the whole reply (`grade`)."""
    return Extraction(None, NONE)


BFCL_RULE = AnswerRule(RULE_NAME, "grader", SOURCE, read=no_answer_read, score_whole=grade)


def read_fc_reply(trajectory: Trajectory) -> Reading:
    """The last turn as bfcl-eval's FC decoder reads it (`OpenAICompletionsHandler.decode_ast`): its calls as
    `[{name: json.loads(arguments)}]`; a reply without calls is its text, which decodes to no call when empty
    and does not decode otherwise."""
    last = trajectory.turns[-1] if trajectory.turns else None
    if last is None:
        return Reading(problem="no model turn")
    if last.tool_calls:
        return read_tool_calls([(c.name, c.arguments) for c in last.tool_calls])
    if not last.text:
        return Reading([])
    return Reading(problem="the reply is text, not tool calls ('str' object has no attribute 'keys')")


def grade_calls(item: Item, trajectory: Trajectory) -> Scored:
    """One function-calling reply to one BFCL item, scored as bfcl-eval scores an OpenAI FC model's: the AST
    checker on the decoded calls, names compared with `.` as `_` (`underscore_to_dot`)."""
    meta = item.metadata
    category = str(meta["bfcl_category"])
    verdict = judge(category, meta["function"], meta.get("ground_truth"), read_fc_reply(trajectory),
                    underscore_to_dot=True)
    details = GenerationDetails(compare=FC_RULE_NAME, rejected=None if verdict.valid else
                                f"{verdict.error_type}: {verdict.error}"[:500])
    extracted = None if verdict.calls is None else repr(verdict.calls)[:2000]
    return Scored(verdict.outcome, details, score=1.0 if verdict.valid else 0.0, extracted=extracted,
                  extraction_rule=FC_RULE_NAME if verdict.calls is not None else NONE)


FC_RULE_NAME = "bfcl-ast-fc"
FC_SOURCE = (f"bfcl-eval {BFCL_VERSION} (PyPI) model_handler/api_inference/openai_completion.py decode_ast (FC), "
             "model_handler/utils.py convert_to_tool, eval_checker/ast_eval/ast_checker.py ast_checker "
             "(underscore_to_dot), eval_checker/eval_runner.py")
BFCL_FC_RULE = AnswerRule(FC_RULE_NAME, "grader", FC_SOURCE, read=no_answer_read, score_trajectory=grade_calls)
