"""Flux's post-build substitution of one text, as kustomize-controller performs it.

kustomize-controller runs fluxcd/pkg's envsubst (a fork of drone/envsubst) over the YAML text
of each object it built. What it recognises, and what this module does the same way:

* ``${VAR}`` only: ``$VAR`` without braces is text, left as written (Flux's own advice for
  scripts). ``$$`` writes one ``$`` outside an expression, so ``$${VAR}`` is the text
  ``${VAR}``.
* defaults ``${VAR:=d}``, ``${VAR=d}``, ``${VAR:-d}``, and also ``${VAR:+d}``, ``${VAR:?d}``:
  every one of them gives ``d`` when the value is empty or unset and the value otherwise (no
  bash "alternative value" or error message); ``d`` may hold nested ``${...}``.
* ``${#VAR}`` (length), ``${VAR^}`` ``${VAR^^}`` ``${VAR,}`` ``${VAR,,}`` (case),
  ``${VAR:offset}`` ``${VAR:offset:length}``, ``${VAR#p}`` ``${VAR##p}`` ``${VAR%p}``
  ``${VAR%%p}`` (patterns: ``*`` matches any text, ``/`` too, ``?`` one character),
  ``${VAR/x/y}`` ``${VAR//x/y}`` ``${VAR/#x/y}`` ``${VAR/%x/y}`` (plain text, ``\\/`` for a
  slash).
* ``${VAR-d}``, ``${VAR+d}``, ``${VAR?d}`` (no colon), ``${}`` and a name followed by anything
  else are a parse error: the whole Kustomization's build fails.
* a variable nobody sets: in strict mode (kustomize-controller's default from v1.9.0, feature
  gate ``StrictPostBuildSubstitutions``) the build fails unless the expression has a default;
  otherwise it is the empty string. Which mode a cluster runs is not in the files.

Where this module cannot be sure (a variable that may come from a Secret, a pattern with a
character class, a form outside the ones above) the text is *unknown*, with the reason; it
never guesses a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from msgspec import Struct, field

_NAME = re.compile(r"[A-Za-z0-9_]+")
_INT = re.compile(r"[+-]?[0-9]+")
_DEFAULT_OPS = (":=", ":-", ":+", ":?", "=")
_CASE_OPS = (",", ",,", "^", "^^")


class Fails(Exception):
    """The text does not parse as envsubst reads it: Flux's build of the Kustomization fails."""


class _Unmodelled(Exception):
    """A form this module does not read with certainty."""


class Vars(Struct, frozen=True):
    """The variables of one Kustomization as far as the files tell them."""

    values: Mapping[str, str]
    # why a variable not in ``values`` may still be set (a Secret, a ConfigMap not in the
    # files); "" when every source was read, so such a variable is unset
    maybe: str = ""
    unsure: Mapping[str, str] = field(default_factory=dict)  # variable -> why it is unknown
    owner: str = "the Kustomization"  # who substitutes, for messages


class Result(Struct):
    """The substituted text, or None when it cannot be known (``unknown`` says why)."""

    text: str | None
    unknown: dict[str, str] = field(default_factory=dict)  # expression -> why
    # variables used without a default that nothing sets: strict mode fails the build
    unset: list[str] = field(default_factory=list)


class _Expr(Struct):
    name: str
    op: str  # "" (the value itself), ":=", "#" (length), "##", "/", ":" (substring), ...
    args: list[list[_Node]]
    text: str  # as written, for messages


_Node = str | _Expr


def expand(text: str, env: Vars) -> Result:
    """``text`` after Flux's substitution with ``env`` (raises :class:`Fails`)."""
    nodes, exprs = _parse(text)
    if not exprs:
        return Result("".join(n for n in nodes if isinstance(n, str)))
    out = Result(None)
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            parts.append(node)
            continue
        try:
            value = _eval(node, env, out)
        except _Unmodelled as exc:
            out.unknown.setdefault(node.text, f"{node.text}: {exc}")
            value = None
        if value is None:
            out.unknown.setdefault(node.text, _why(node, env))
        else:
            parts.append(value)
    if not out.unknown:
        out.text = "".join(parts)
    return out


def expressions(text: str) -> list[str]:
    """The ``${...}`` expressions of ``text`` as written (none where it does not parse)."""
    try:
        return _parse(text)[1]
    except Fails:
        return []


def _why(node: _Expr, env: Vars) -> str:
    name = node.name
    if name in env.unsure:
        return f"{node.text}: {env.unsure[name]}"
    if env.maybe:
        return f"{node.text}: {env.owner} does not set {name} in the files ({env.maybe})"
    return (
        f"{node.text}: {env.owner} sets no {name}: with strict substitution "
        "(kustomize-controller's default from v1.9.0) its build fails, otherwise it is empty"
    )


# ---------------------------------------------------------------- parsing


class _Scan:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take_name(self) -> str:
        m = _NAME.match(self.s, self.i)
        if m is None:
            if self.peek() and not self.peek().isascii():
                raise _Unmodelled("a variable name outside ASCII")
            return ""
        self.i = m.end()
        if self.peek() and not self.peek().isascii() and self.peek().isalnum():
            raise _Unmodelled("a variable name outside ASCII")
        return m.group(0)


def _parse(text: str) -> tuple[list[_Node], list[str]]:
    """Top-level nodes and the expressions written; ``$$`` outside an expression is ``$``."""
    sc = _Scan(text)
    nodes: list[_Node] = []
    exprs: list[str] = []
    buf: list[str] = []
    while sc.i < len(sc.s):
        c = sc.peek()
        if c == "$" and sc.peek(1) == "$":
            buf.append("$")
            sc.i += 2
        elif c == "$" and sc.peek(1) == "{":
            start = sc.i
            sc.i += 2
            try:
                expr = _expr(sc, start)
            except _Unmodelled as exc:
                # the rest is not read further: envsubst may read it otherwise
                expr = _Expr("", "?", [[str(exc)]], text[start:])
                sc.i = len(text)
            if buf:
                nodes.append("".join(buf))
                buf = []
            nodes.append(expr)
            exprs.append(expr.text)
        else:
            buf.append(c)
            sc.i += 1
    if buf:
        nodes.append("".join(buf))
    return nodes, exprs


def _expr(sc: _Scan, start: str | int) -> _Expr:
    """One ``${...}`` after its ``${`` (``start``: where it began)."""
    begin = int(start)
    if sc.peek() == "#":
        sc.i += 1
        name = sc.take_name()
        if not name or sc.peek() != "}":
            raise Fails(f"bad substitution in {sc.s[begin : sc.i + 1]!r}")
        sc.i += 1
        return _Expr(name, "#len", [], sc.s[begin : sc.i])
    name = sc.take_name()
    if not name:
        raise Fails(f"no variable name in {sc.s[begin : sc.i + 1]!r}")
    c = sc.peek()
    if c == "}":
        sc.i += 1
        return _Expr(name, "", [], sc.s[begin : sc.i])
    if c == ":" and sc.peek(1) in ("=", "-", "?", "+"):
        op = sc.s[sc.i : sc.i + 2]
        sc.i += 2
        return _default(sc, begin, name, op)
    if c == "=":
        sc.i += 1
        return _default(sc, begin, name, "=")
    if c == ":":
        sc.i += 1
        return _substring(sc, begin, name)
    if c in ",^":
        j = sc.i
        while sc.i < j + 2 and sc.peek() and sc.peek() in ",^":
            sc.i += 1
        op = sc.s[j : sc.i]
        return _closed(sc, begin, _Expr(name, op, [], ""))
    if c in "#%":
        op = c * 2 if sc.peek(1) == c else c
        sc.i += len(op)
        arg = _param(sc, "}")
        if not arg:
            raise _Unmodelled("an empty pattern")
        return _closed(sc, begin, _Expr(name, op, [arg], ""))
    if c == "/":
        return _replace(sc, begin, name)
    raise Fails(f"missing closing brace in {sc.s[begin : sc.i + 1]!r}")


def _closed(sc: _Scan, begin: int, expr: _Expr) -> _Expr:
    if sc.peek() != "}":
        if not sc.peek():
            raise _Unmodelled("no closing brace in this value")
        raise Fails(f"bad substitution in {sc.s[begin : sc.i + 1]!r}")
    sc.i += 1
    expr.text = sc.s[begin : sc.i]
    return expr


def _param(sc: _Scan, stops: str, *, escapes: bool = False) -> list[_Node]:
    """One argument: a nested ``${...}``, or text up to one of ``stops`` or a ``${``."""
    if sc.peek() == "$" and sc.peek(1) == "{":
        begin = sc.i
        sc.i += 2
        return [_expr(sc, begin)]
    buf: list[str] = []
    while sc.i < len(sc.s):
        c = sc.peek()
        if c in stops or (c == "$" and sc.peek(1) == "{"):
            break
        if escapes and ((c == "\\" and sc.peek(1) in "/\\") or (c == "$" and sc.peek(1) == "$")):
            buf.append(sc.peek(1))
            sc.i += 2
            continue
        buf.append(c)
        sc.i += 1
    if not sc.peek():
        raise _Unmodelled("no closing brace in this value")
    return ["".join(buf)] if buf else []


def _default(sc: _Scan, begin: int, name: str, op: str) -> _Expr:
    args: list[list[_Node]] = []
    while sc.peek() != "}":
        if not sc.peek():
            raise _Unmodelled("no closing brace in this value")
        args.append(_param(sc, "}"))
    sc.i += 1
    return _Expr(name, op, args, sc.s[begin : sc.i])


def _substring(sc: _Scan, begin: int, name: str) -> _Expr:
    first = _param(sc, ":}")
    if not first:
        raise _Unmodelled("an empty offset")
    args = [first]
    if sc.peek() == ":":
        sc.i += 1
        if sc.peek() == ":":
            raise _Unmodelled("a substring with '::'")
        second = _param(sc, "}")
        if not second:
            raise _Unmodelled("an empty length")
        args.append(second)
    return _closed(sc, begin, _Expr(name, ":", args, ""))


def _replace(sc: _Scan, begin: int, name: str) -> _Expr:
    sc.i += 1
    op = "/"
    if sc.peek() in ("/", "#", "%"):
        op += sc.peek()
        sc.i += 1
    pattern = _param(sc, "/}", escapes=True)
    if not pattern or sc.peek() != "/":
        raise _Unmodelled("a replacement without its pattern and '/'")
    sc.i += 1
    if sc.peek() == "/":
        raise _Unmodelled("a replacement with '//' after its pattern")
    args = [pattern]
    if sc.peek() != "}":
        args.append(_param(sc, "}", escapes=True))
    return _closed(sc, begin, _Expr(name, op, args, ""))


# ---------------------------------------------------------------- evaluation


def _eval(node: _Expr, env: Vars, out: Result) -> str | None:
    """The value of one expression, None when it cannot be known."""
    if node.op == "?":
        raise _Unmodelled(str(node.args[0][0]))
    args: list[str] = []
    for arg in node.args:
        parts = [p if isinstance(p, str) else _eval(p, env, out) for p in arg]
        if any(p is None for p in parts):
            return None
        args.append("".join(p for p in parts if p is not None))
    if node.name in env.values:
        value = env.values[node.name]
    elif env.maybe or node.name in env.unsure:
        return None
    else:
        value = ""
        if node.op not in _DEFAULT_OPS:
            # strict mode fails the build; otherwise the empty string: not known which
            if node.name not in out.unset:
                out.unset.append(node.name)
            return None
    return _apply(node.op, value, args)


def _apply(op: str, value: str, args: list[str]) -> str:
    if op == "" or (op in _DEFAULT_OPS and value):
        return value
    if op in _DEFAULT_OPS:
        return "".join(args)
    if op == "#len":
        return str(len(value.encode()))
    if op in _CASE_OPS:
        if not value.isascii():
            raise _Unmodelled("a change of case outside ASCII")
        if op == ",,":
            return value.lower()
        if op == "^^":
            return value.upper()
        first = value[:1].lower() if op == "," else value[:1].upper()
        return first + value[1:]
    if op in (",^", "^,"):
        return value  # no function of its own: the value as it is
    if not value.isascii():
        raise _Unmodelled("a text operation outside ASCII")
    if op == ":":
        return _substr(value, args)
    if op in ("#", "##", "%", "%%"):
        return _trim(op, value, args[0])
    return _replaced(op, value, args)


def _substr(s: str, args: list[str]) -> str:
    if not _INT.fullmatch(args[0]):
        return s
    pos = int(args[0])
    if pos < 0:
        pos = max(len(s) + pos, 0)
    if len(args) == 1:
        return s[pos:]
    if not _INT.fullmatch(args[1]):
        return s
    length = int(args[1])
    if length < 0:
        raise _Unmodelled("a negative length")
    if pos + length >= len(s):
        return s[pos:]
    return s[pos : pos + length]


def _trim(op: str, s: str, pattern: str) -> str:
    if any(c in pattern for c in "[\\"):
        raise _Unmodelled("a pattern with a character class or escape")
    if op in ("%", "%%"):
        return _trim("#" if op == "%" else "##", s[::-1], pattern[::-1])[::-1]
    prefixes = [s[: len(s) - i] for i in range(len(s))]  # longest first, never empty
    matches = [p for p in prefixes if _glob(pattern, p)]
    if not matches:
        return s
    return s[len(matches[0] if op == "##" else matches[-1]) :]


def _glob(pattern: str, text: str) -> bool:
    """envsubst's own ``path.Match`` for ``*`` (any text, ``/`` too), ``?`` (any character)
    and plain characters."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, text, re.DOTALL) is not None


def _replaced(op: str, s: str, args: list[str]) -> str:
    old = args[0]
    new = args[1] if len(args) > 1 else ""
    if op == "/":
        return s.replace(old, new, 1)
    if op == "//":
        return s.replace(old, new)
    if len(args) != 2:
        return s  # a prefix or suffix replacement needs both parts, else nothing changes
    if op == "/#":
        return new + s[len(old) :] if s.startswith(old) else s
    return s[: len(s) - len(old)] + new if s.endswith(old) else s
