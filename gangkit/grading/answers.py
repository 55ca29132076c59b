"""An exercise's answer taken out of the learner's kernel as data, and rebuilt in the grader.

The grader never believes what a learner's kernel says about a mark. After an exercise's cell has
run, it asks the kernel for the value of ``answer`` and nothing else, written as plain data (the
encoding below: numbers, text, lists, dicts, numpy scalars, pandas Series and DataFrames, and the
dataclasses of gangkit such as ``lesson08.Design``). The grader rebuilds the value in its own
interpreter, where the checks were imported before any learner's code ran, and calls the check
there. Whatever the learner redefined in their kernel (the check, ``print``, ``True``), only the
value of ``answer`` reaches the check.

Nothing is unpickled: the data is JSON, each value a small tagged list (``["float", "0.5"]``,
``["list", [...]]``). A value of any other type arrives as a stand-in of the same type name, so the
check can still say "expected a number, but got a gangkit Result". The encoding is bounded (nesting
depth, number of items, length of text); a bigger answer is refused with a sentence that says so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys

__all__ = ["EXPRESSION", "AnswerError", "decode"]

#: Most values (items of lists and dicts, characters of text / 100) an answer may hold.
BUDGET = 200_000

# Run in the learner's kernel (as a user expression, so it leaves no output and no history):
# encode the global ``answer`` as JSON text. Standard library only; numpy and pandas only when the
# learner's kernel has them loaded already.
_ENCODER = r'''
def encode(value, budget=%d):
    import dataclasses, json, sys
    left = [budget]
    def spend(n=1):
        left[0] -= n
        if left[0] < 0:
            raise ValueError("the answer is too large to grade")
    def enc(v, depth):
        if depth > 12:
            raise ValueError("the answer is nested too deeply to grade")
        spend()
        t = type(v)
        if v is None:
            return ["none"]
        if t is bool:
            return ["bool", v]
        if t is int:
            return ["int", str(v)]
        if t is float:
            return ["float", repr(v)]
        if t is str:
            spend(len(v) // 100)
            return ["str", v]
        if t in (list, tuple, set, frozenset):
            items = sorted(v, key=repr) if t in (set, frozenset) else v
            return [t.__name__, [enc(x, depth + 1) for x in items]]
        if t is dict:
            return ["dict", [[enc(k, depth + 1), enc(x, depth + 1)] for k, x in v.items()]]
        np = sys.modules.get("numpy")
        if np is not None and isinstance(v, np.generic):
            return ["numpy", t.__name__, enc(v.item(), depth + 1)]
        pd = sys.modules.get("pandas")
        if pd is not None and isinstance(v, pd.Series):
            spend(len(v))
            return ["Series", enc(v.name, depth + 1), enc(list(v.index), depth + 1), enc(v.tolist(), depth + 1)]
        if pd is not None and isinstance(v, pd.DataFrame):
            spend(v.size)
            return ["DataFrame", enc(list(v.columns), depth + 1), enc(list(v.index), depth + 1),
                    enc(v.values.tolist(), depth + 1)]
        if dataclasses.is_dataclass(v) and not isinstance(v, type) and t.__module__.startswith("gangkit"):
            fields = [[f.name, enc(getattr(v, f.name), depth + 1)] for f in dataclasses.fields(v)]
            return ["dataclass", t.__module__, t.__qualname__, fields]
        return ["object", str(t.__module__), str(t.__qualname__), repr(v)[:200]]
    return json.dumps(enc(value, 0))
''' % BUDGET

#: The user expression the grader evaluates in the kernel: the JSON text of ``answer``.
EXPRESSION = ("(lambda ns: (exec(%r, ns), ns['encode'](globals().get('answer')))[1])({})" % _ENCODER)


class AnswerError(ValueError):
    """The kernel's reply is not an answer the grader can rebuild (the sentence says why)."""


def _stand_in(module: str, qualname: str, text: str):
    """An object whose type has the learner's type's module and name, and nothing else."""
    name = qualname.rsplit(".", 1)[-1] or "object"
    cls = type(name, (), {"__module__": module, "__qualname__": qualname, "__repr__": lambda self: text})
    return cls()


def _dataclass(module: str, qualname: str, fields: dict):
    """A gangkit dataclass rebuilt from its fields (the module was imported by the grader, never by the data)."""
    target = sys.modules.get(module) if module.startswith("gangkit.") else None
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if isinstance(target, type) and dataclasses.is_dataclass(target):
        try:
            return target(**fields)
        except (TypeError, ValueError):
            pass
    return _stand_in(module, qualname, f"{qualname}(...)")


def _dec(node, depth: int = 0):
    if depth > 14 or not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise AnswerError("the answer's data is malformed")
    tag, rest = node[0], node[1:]
    if tag == "none":
        return None
    if tag == "bool" and rest and isinstance(rest[0], bool):
        return rest[0]
    if tag == "int" and rest and isinstance(rest[0], str) and len(rest[0]) <= 5000:
        return int(rest[0])
    if tag == "float" and rest and isinstance(rest[0], str):
        return float(rest[0])
    if tag == "str" and rest and isinstance(rest[0], str):
        return rest[0]
    if tag in ("list", "tuple", "set", "frozenset") and rest and isinstance(rest[0], list):
        items = [_dec(x, depth + 1) for x in rest[0]]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and rest and isinstance(rest[0], list):
        return {_dec(k, depth + 1): _dec(v, depth + 1) for k, v in rest[0]}
    if tag == "numpy" and len(rest) == 2:
        import numpy as np

        value = _dec(rest[1], depth + 1)
        cls = getattr(np, str(rest[0]), None)
        return cls(value) if isinstance(cls, type) and issubclass(cls, np.generic) else value
    if tag == "Series" and len(rest) == 3:
        import pandas as pd

        return pd.Series(_dec(rest[2], depth + 1), index=_dec(rest[1], depth + 1), name=_dec(rest[0], depth + 1))
    if tag == "DataFrame" and len(rest) == 3:
        import pandas as pd

        return pd.DataFrame(_dec(rest[2], depth + 1), columns=_dec(rest[0], depth + 1),
                            index=_dec(rest[1], depth + 1))
    if tag == "dataclass" and len(rest) == 3:
        fields = {str(k): _dec(v, depth + 1) for k, v in rest[2]}
        return _dataclass(str(rest[0]), str(rest[1]), fields)
    if tag == "object" and len(rest) == 3:
        return _stand_in(str(rest[0])[:100], str(rest[1])[:100], str(rest[2])[:200])
    raise AnswerError("the answer's data is malformed")


def decode(text: str):
    """The answer the JSON ``text`` holds, rebuilt with the grader's own types; AnswerError when it cannot be."""
    if not isinstance(text, str) or len(text) > 20 * BUDGET:
        raise AnswerError("the answer is too large to grade")
    try:
        node = json.loads(text, parse_constant=lambda name: math.nan)
    except ValueError as e:
        raise AnswerError("the answer's data is not JSON") from e
    try:
        return _dec(node)
    except (TypeError, ValueError, OverflowError, RecursionError) as e:
        if isinstance(e, AnswerError):
            raise
        raise AnswerError(f"the answer's data is malformed ({type(e).__name__})") from e
