"""Accessors: the functions generated for a predicate's path that read a source value.

A path (``commands[*].command``) is turned once, when rules are bound, into one Python
function of nested loops and lookups; evaluating it parses nothing and never raises on a
JSON value. :func:`compile_accessor` answers whether a text test accepts any string at the
path; :func:`compile_strings` lists those strings, for a caller that runs several tests
on them (the floors' per-layer tests) and so walks the value once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from raw_core.policy._paths import PathStep, format_path

__all__ = [
    "MISSING",
    "TextTest",
    "chain_accessor",
    "compile_accessor",
    "compile_strings",
    "is_array",
    "strings_at",
]

MISSING: Final = object()

TextTest = Callable[[str], bool]
"""Whether a pattern matches anywhere in a string (``CompiledPattern.test``)."""


def _leaf(test: TextTest) -> Callable[[Any], bool]:
    def leaf(value: Any) -> bool:
        return isinstance(value, str) and test(value)

    return leaf


def _name_step(name: str, following: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if isinstance(value, (dict, Mapping)):  # dict first: the common case, checked fast
            child = value.get(name, MISSING)
            return child is not MISSING and following(child)
        return False

    return test


def is_array(value: Any) -> bool:
    kind = type(value)
    if kind is list or kind is tuple:
        return True
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _each_step(following: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if is_array(value):
            for item in value:
                if following(item):
                    return True
        return False

    return test


_GENERATED_STEPS: Final = 8
"""Paths up to this many steps get one generated function; longer ones (rare) a chain of
closures, so the generated code stays far inside Python's limits on nested blocks."""


def compile_accessor(
    steps: tuple[PathStep, ...], test: TextTest, required: tuple[str, ...] = ()
) -> Callable[[Any], bool]:
    """A function of a source value: does ``test`` accept any string at ``steps``?

    Built once, as one generated function of nested loops and lookups (so evaluating a
    path makes one Python call, plus one per string tested); it parses nothing and never
    raises on a JSON value (dicts or other mappings, lists or tuples, scalars). The same
    semantics as :func:`chain_accessor`, which builds it as one closure per step.

    ``required`` (a pattern's :attr:`~raw_core._re2.CompiledPattern.required`): strings of
    which ``test`` finds one in every text it accepts; a string holding none is passed
    over without calling ``test``, which changes no answer.
    """
    if len(steps) > _GENERATED_STEPS:
        return chain_accessor(steps, test, required)
    return _generate(steps, test, required)


def chain_accessor(
    steps: tuple[PathStep, ...], test: TextTest, required: tuple[str, ...] = ()
) -> Callable[[Any], bool]:
    """:func:`compile_accessor` as one closure per step: for paths too long to generate,
    and the reference the generated functions are tested against."""
    if required:
        searched = test

        def test(text: str) -> bool:
            return any(literal in text for literal in required) and searched(text)

    accessor = _leaf(test)
    for step in reversed(steps):
        accessor = _each_step(accessor) if step is None else _name_step(step, accessor)
    return accessor


def compile_strings(steps: tuple[PathStep, ...]) -> Callable[[Any], list[str]]:
    """A function of a source value: every string at ``steps``, in document order.

    Exactly the strings that an accessor of the same path (:func:`compile_accessor`) hands
    its test, so any test over the list answers as that accessor would. One generated
    function, or :func:`strings_at` for paths too long to generate."""
    if len(steps) > _GENERATED_STEPS:
        return lambda value: strings_at(value, steps)
    function: Callable[[Any], list[str]] = _generated(
        steps,
        "strings",
        {},
        ["found = []"],
        ["if _isinstance({leaf}, _str):", "    found.append({leaf})"],
        "found",
    )
    return function


def strings_at(value: Any, steps: tuple[PathStep, ...]) -> list[str]:
    """:func:`compile_strings` as a plain recursive walk (long paths; the reference)."""
    found: list[str] = []

    def visit(node: Any, depth: int) -> None:
        if depth == len(steps):
            if isinstance(node, str):
                found.append(node)
            return
        step = steps[depth]
        if step is None:
            if is_array(node):
                for item in node:
                    visit(item, depth + 1)
        elif isinstance(node, (dict, Mapping)):
            child = node.get(step, MISSING)
            if child is not MISSING:
                visit(child, depth + 1)

    visit(value, 0)
    return found


def _generate(
    steps: tuple[PathStep, ...], test: TextTest, required: tuple[str, ...]
) -> Callable[[Any], bool]:
    """The accessor of :func:`compile_accessor` for ``steps``: true at the first string
    ``test`` accepts (skipping those holding none of ``required``), else false."""
    namespace: dict[str, Any] = {"_test": test}
    condition = ""
    if required:
        for index, literal in enumerate(required):
            namespace[f"_r{index}"] = literal
        condition = " and (" + " or ".join(f"_r{i} in {{leaf}}" for i in range(len(required)))
        condition += ")"
    leaf = [f"if _isinstance({{leaf}}, _str){condition} and _test({{leaf}}):", "    return True"]
    accessor: Callable[[Any], bool] = _generated(steps, "accessor", namespace, [], leaf, "False")
    return accessor


def _generated(
    steps: tuple[PathStep, ...],
    kind: str,
    namespace: dict[str, Any],
    head: list[str],
    leaf: list[str],
    result: str,
) -> Any:
    """One function for ``steps``: a name step looks the name up in a dict (or another
    mapping), a ``[*]`` step loops over a list (or tuple, or another sequence that is no
    string or bytes), and ``leaf``'s lines run on each value reached (``{leaf}`` names
    it); any other value, or an absent name, falls through to the next element, and the
    function returns ``result`` when none is left. ``head`` opens the function.

    The names (and the accessor's ``required`` strings) are passed to the code as
    constants (``_n0``, ``_r0``...), never written into it, so a name of any text is only
    ever data.
    """
    namespace.update(
        {
            "_MISSING": MISSING,
            "_Mapping": Mapping,
            "_is_array": is_array,
            "_str": str,
            "_dict": dict,
            "_list": list,
            "_tuple": tuple,
            "_isinstance": isinstance,
            "_type": type,
        }
    )
    lines = ["def generated(v0):", *(f"    {line}" for line in head)]
    indent = "    "
    for index, step in enumerate(steps):
        value, child = f"v{index}", f"v{index + 1}"
        if step is None:
            lines.append(
                f"{indent}if _type({value}) is _list or _type({value}) is _tuple"
                f" or _is_array({value}):"
            )
            lines.append(f"{indent}    for {child} in {value}:")
            indent += "        "
        else:
            namespace[f"_n{index}"] = step
            # dict first, by the C check that takes subclasses (the frozen arguments are
            # one): the ABC check of Mapping is several times slower.
            lines.append(
                f"{indent}if _isinstance({value}, _dict) or _isinstance({value}, _Mapping):"
            )
            lines.append(f"{indent}    {child} = {value}.get(_n{index}, _MISSING)")
            lines.append(f"{indent}    if {child} is not _MISSING:")
            indent += "        "
    lines.extend(indent + line.format(leaf=f"v{len(steps)}") for line in leaf)
    lines.append(f"    return {result}")
    # Code built above from the path's shape alone, named after the path for tracebacks.
    code = compile("\n".join(lines), f"<raw {kind} {format_path(steps)}>", "exec")
    exec(code, namespace)
    return namespace["generated"]
