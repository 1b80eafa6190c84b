from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
from pathlib import Path

import tabret
from tabret import _core

ALLOWLIST = Path(__file__).with_name("stubtest-allowlist.txt")


def test_core_stubs_match_the_extension() -> None:
    """The hand-written _core.pyi agrees with what the extension really exports."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "tabret._core", "--allowlist", str(ALLOWLIST)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


STUB = Path(tabret.__file__).with_name("_core.pyi")


def _stub_defaults() -> dict[str, list[dict[str, str]]]:
    """Per function of _core.pyi (``Class.method`` or ``function``), per overload, the literal
    default of each parameter that has one (``...`` is not a value: skipped)."""
    out: dict[str, list[dict[str, str]]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs = list(
                    zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True)
                )
                pairs += [
                    (p, d)
                    for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                    if d is not None
                ]
                given = {
                    p.arg: ast.unparse(d)
                    for p, d in pairs
                    if not (isinstance(d, ast.Constant) and d.value is Ellipsis)
                }
                if given:
                    out.setdefault(prefix + node.name, []).append(given)

    visit(ast.parse(STUB.read_text(encoding="utf-8")).body, "")
    return out


def _split_top_level(params: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in params:
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current] if current.strip() else parts


def _runtime_defaults(obj: object, name: str) -> list[dict[str, str]]:
    """The defaults of each signature pybind11 writes in ``obj``'s docstring (one per overload),
    as it writes them (the repr of the C++ default)."""
    found = []
    for m in re.finditer(re.escape(name) + r"\((.*)\) ->", obj.__doc__ or ""):
        found.append(
            {
                p.split("=", 1)[0].split(":")[0].strip(): p.split("=", 1)[1].strip()
                for p in _split_top_level(m.group(1))
                if "=" in p
            }
        )
    return found


def _same(stub: str, runtime: str) -> bool:
    try:
        a, b = ast.literal_eval(stub), ast.literal_eval(runtime)
    except (ValueError, SyntaxError):
        return stub == runtime
    if isinstance(a, float) or isinstance(b, float):  # a C++ float prints as its double
        return math.isclose(float(a), float(b), rel_tol=1e-6)
    return bool(a == b)


def test_every_stub_default_is_the_extension_s() -> None:
    """Each default written in _core.pyi is the one the extension applies (read from the
    signature pybind11 generates from the C++ default), so a C++ default that changes cannot
    leave a stale one in the stubs, which IDEs and type checkers show as the truth."""
    checked, wrong = 0, []
    for qualname, overloads in _stub_defaults().items():
        obj: object = _core
        for part in qualname.split("."):
            obj = getattr(obj, part)
        runtime = _runtime_defaults(obj, qualname.rsplit(".", 1)[-1])
        assert runtime, f"{qualname}: no signature in its docstring"
        for given in overloads:
            match = next((r for r in runtime if set(given) <= set(r)), None)
            assert match is not None, f"{qualname}{sorted(given)}: no overload has these defaults"
            for param, value in given.items():
                checked += 1
                if not _same(value, match[param]):
                    wrong.append(f"{qualname}({param}): stub {value}, extension {match[param]}")
    assert not wrong, "\n".join(wrong)
    assert checked > 150  # the stubs' defaults were read (182 when written)
