"""Why one edition's run stands for both: the strings of two same-shaped cells cannot make one
edition fail where the other runs.

:func:`labs.exercises.edition.code_shape` proves a Chinese code cell and its English twin the same
code once every string literal (f-strings included) is taken out. What is left that could make
the Chinese body raise where the English body runs, or run other code, is in those strings, and
:func:`runtime_differences` rules each part out:

1. an f-string's expressions: both editions interpolate the same expressions with the same
   conversions (``!r``, ``!s``), in any order (a sentence's word order is the language's);
2. its format specs: where the two editions format one expression differently (``:<12`` and
   ``:<17``), both specs accept and refuse the same of an int, a float, a bool and a str (a spec
   built from expressions must be the same in both);
3. plain string literals: a translated literal is a renaming, one to one within the notebook, so
   that a dict key, a comparison or a lookup finds in one edition what it finds in the other;
   a translated ``str.format`` or ``%`` template keeps its fields.

Together with ``code_shape`` this is why ``make test`` runs the notebook bodies of one edition
only (the English student notebooks in the browser); the Chinese solutions run in CI's
``make test-editions`` and in ``make execute``.

Owns: ``runtime_differences``. Must not: run notebook code, or import anything of labs.
"""
from __future__ import annotations

import ast
import copy
import re
import string
from collections import Counter, defaultdict

__all__ = ["runtime_differences"]

#: The values a notebook formats: a spec pair is compatible when each of these is accepted by
#: both specs or refused by both.
SAMPLES = (0, -1234567, 2.5, 1e-9, float("inf"), True, "ab", "")
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa%]")


def _strings(tree) -> tuple[list, list]:
    """(f-strings, plain string constants outside f-strings), in walk order."""
    fstrings, plain = [], []

    def visit(node):
        if isinstance(node, ast.JoinedStr):
            fstrings.append(node)
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            plain.append(node.value)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return fstrings, plain


def _parse(source: str):
    code = "\n".join(line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!")))
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def _accepts(spec: str) -> tuple:
    out = []
    for value in SAMPLES:
        try:
            format(value, spec)
            out.append(True)
        except (ValueError, TypeError):
            out.append(False)
    return tuple(out)


def _spec(node) -> tuple:
    """A format spec as ("text", spec) when it is constant, else ("code", its dump)."""
    if node is None:
        return ("text", "")
    if all(isinstance(v, ast.Constant) for v in node.values):
        return ("text", "".join(v.value for v in node.values))
    return ("code", ast.dump(node))


def _specs_compatible(a: tuple, b: tuple) -> bool:
    if a == b:
        return True
    return a[0] == b[0] == "text" and _accepts(a[1]) == _accepts(b[1])


def _fields(template: str) -> list | None:
    try:
        return [(name, conversion) for _, name, _, conversion in string.Formatter().parse(template)
                if name is not None]
    except ValueError:
        return None


class _Blank(ast.NodeTransformer):
    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node


def _fstring_problems(zh: ast.JoinedStr, en: ast.JoinedStr, pairs: list) -> list[str]:
    """What differs between two f-strings; the string literals inside their expressions (a
    dict key) are appended to ``pairs`` as (Chinese, English), to be held to the renaming."""
    def expressions(node):
        by_expr = defaultdict(list)
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                key = (ast.dump(_Blank().visit(copy.deepcopy(part.value))), part.conversion)
                by_expr[key].append((_spec(part.format_spec), _strings(part.value)[1]))
        return by_expr

    a, b = expressions(zh), expressions(en)
    if Counter({k: len(v) for k, v in a.items()}) != Counter({k: len(v) for k, v in b.items()}):
        return [f"f-strings interpolate different expressions: {ast.unparse(zh)[:90]!r} and "
                f"{ast.unparse(en)[:90]!r}"]
    problems = []
    for key in a:
        for (sa, ca), (sb, cb) in zip(a[key], b[key]):
            pairs += zip(ca, cb)
            if not _specs_compatible(sa, sb):
                problems.append(f"format specs {sa[1]!r} and {sb[1]!r} accept different values "
                                f"in {ast.unparse(en)[:90]!r}")
    return problems


def runtime_differences(zh_sources: list[str], en_sources: list[str]) -> list[str]:
    """Every way the English code cells ``en_sources`` could run differently from the Chinese
    ``zh_sources`` (one notebook's code cells, in order, already of the same shape)."""
    problems, renaming, back = [], {}, {}
    for index, (zh_source, en_source) in enumerate(zip(zh_sources, en_sources)):
        zh_tree, en_tree = _parse(zh_source), _parse(en_source)
        if zh_tree is None or en_tree is None:
            continue  # not Python: code_shape compared it as text
        (zh_f, zh_plain), (en_f, en_plain) = _strings(zh_tree), _strings(en_tree)
        where = f"code cell {index + 1}"
        pairs = list(zip(zh_plain, en_plain))
        for a, b in zip(zh_f, en_f):
            problems += [f"{where}: {p}" for p in _fstring_problems(a, b, pairs)]
        for a, b in pairs:
            if a == b:
                continue
            if renaming.setdefault(a, b) != b:
                problems.append(f"{where}: {a!r} is translated as {b!r} here and as "
                                f"{renaming[a]!r} elsewhere")
            elif back.setdefault(b, a) != a:
                problems.append(f"{where}: {b!r} translates both {a!r} and {back[b]!r}")
            if ("{" in a or "{" in b) and _fields(a) != _fields(b):
                problems.append(f"{where}: the templates {a!r} and {b!r} have different fields")
            if sorted(_PERCENT.findall(a)) != sorted(_PERCENT.findall(b)):
                problems.append(f"{where}: {a!r} and {b!r} have different % conversions")
    return problems
