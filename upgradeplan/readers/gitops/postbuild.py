"""A Flux Kustomization's post-build substitution over the objects it built.

kustomize-controller substitutes the YAML text of each object (``spec.postBuild``; see
:mod:`~upgradeplan.readers.gitops.envsubst` for the expressions) and reads the text again, so
a value is what its substituted text reads as in YAML: ``version: ${V}`` with ``V`` = ``1.20``
is the number 1.2, not the text. Its variables are ``substituteFrom`` (ConfigMaps of the
files, in order; a Secret's are never read) overridden by ``substitute``, each with its line
breaks removed. With ``substituteStrategy: WithVariables`` (the default) nothing is
substituted unless at least one variable is set, so ``${V:=1.0.0}`` then stays as written. An
object labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` is left
alone. A variable name outside ``[_a-zA-Z][_a-zA-Z0-9]*`` or an expression envsubst cannot
parse fails the whole build: Flux applies none of it.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct, field

from upgradeplan.readers.gitops import envsubst
from upgradeplan.readers.gitops.docs import Doc, PathKey
from upgradeplan.readers.gitops.transform import clone, identity
from upgradeplan.yamlload import YamlError, load_one

GROUP = "kustomize.toolkit.fluxcd.io"
_VALID_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
_FIRST = set("#,[]{}&*!|>'\"%@`")  # a plain scalar cannot start with one of these
_GO_BOOLS = {"y", "Y", "n", "N"}  # booleans to the YAML reader Flux uses, text to ours


class Outcome(Struct):
    """The objects as Flux applies them, and what substitution left unknown or literal."""

    objects: list[Doc]
    unknown: dict[str, str] = field(default_factory=dict)  # expression -> why
    literal: dict[str, str] = field(default_factory=dict)  # expression -> why it is text
    fails: str = ""  # the build fails (Flux applies none of it): where and why
    may_fail: str = ""  # strict substitution fails the build: where and why


def post_build(ks: Doc, objs: list[Doc], configmaps: list[Doc]) -> Outcome:
    """``objs`` after ``ks``'s post-build substitution (unchanged without ``spec.postBuild``)."""
    post = ks.get("spec", "postBuild")
    if not isinstance(post, dict):
        return Outcome(objs)
    _, _, ns, name = identity(ks)
    owner = f"Kustomization {ns or 'flux-system'}/{name} ({ks.file}:{postbuild_line(ks)})"
    env, bad = _variables(post, configmaps, ns or "flux-system", owner)
    out = Outcome([])
    always = post.get("substituteStrategy") == "Always"
    runs: bool | None = True if (always or env.values or env.unsure) else None
    if runs is None and not env.maybe:
        runs = False
    if runs and bad:
        out.fails = f"{owner}: variable name {bad!r} is invalid (must match {_VALID_NAME.pattern})"
        return out
    for doc in objs:
        if _disabled(doc):
            out.objects.append(doc)
            continue
        try:
            out.objects.append(_one(doc, env, runs, out))
        except envsubst.Fails as exc:
            out.fails = f"{owner}: {exc} in {doc.file}"
            out.objects = []
            return out
    return out


def postbuild_line(ks: Doc) -> int:
    """The line of ``spec.postBuild:`` itself."""
    return ks.key_lines.get(("spec", "postBuild")) or ks.line("spec", "postBuild")


def _variables(
    post: dict[str, Any], configmaps: list[Doc], ns: str, owner: str
) -> tuple[envsubst.Vars, str]:
    """The variables the files tell (and an invalid name among them, or "")."""
    values: dict[str, str] = {}
    unsure: dict[str, str] = {}
    maybe: list[str] = []
    for ref in post.get("substituteFrom") or []:
        if not isinstance(ref, dict):
            continue
        kind, ref_name = ref.get("kind"), ref.get("name")
        cm = next((c for c in configmaps if kind == "ConfigMap" and _named(c, ref_name, ns)), None)
        data = cm.get("data") if cm is not None else None
        if cm is not None and data is None:
            continue  # a ConfigMap without data: no variable
        if cm is None or not isinstance(data, dict):
            why = (
                "a Secret's data is never read"
                if kind == "Secret"
                else "not in the files this entry point applies"
            )
            maybe.append(f"it may come from {kind} {ref_name}: {why}")
            continue
        for k, v in data.items():
            _set(values, unsure, str(k), v, f"ConfigMap {ref_name} data {k}", cm.file)
    subst = post.get("substitute")
    if isinstance(subst, dict):
        for k, v in subst.items():
            _set(values, unsure, str(k), v, f"{owner} substitute {k}", "")
    names = [*values, *unsure]
    bad = next((n for n in names if not _VALID_NAME.fullmatch(n)), "")
    env = envsubst.Vars(values, "; ".join(maybe), unsure, owner)
    return env, bad


def _set(
    values: dict[str, str], unsure: dict[str, str], k: str, v: Any, label: str, where: str
) -> None:
    if isinstance(v, str):
        values[k] = v.replace("\n", "")
        unsure.pop(k, None)
    else:  # the API server refuses a value that is no string: the source is not applied
        unsure[k] = f"{label} is {v!r}, not a string{' in ' + where if where else ''}"
        values.pop(k, None)


def _named(cm: Doc, name: Any, ns: str) -> bool:
    _, kind, cm_ns, cm_name = identity(cm)
    return kind == "ConfigMap" and cm_name == name and (not cm_ns or cm_ns == ns)


def _disabled(doc: Doc) -> bool:
    key = f"{GROUP}/substitute"
    for where in ("labels", "annotations"):
        meta = doc.get("metadata", where)
        if isinstance(meta, dict) and meta.get(key) == "disabled":
            return True
    return False


def _one(doc: Doc, env: envsubst.Vars, runs: bool | None, out: Outcome) -> Doc:
    """One object substituted: the data, keys included, and its tables moved with its keys."""
    moves: dict[PathKey, PathKey] = {}
    changed = False

    def text(s: str) -> tuple[bool, Any]:
        """(changed, new value) of one string."""
        if "$" not in s:
            return False, s
        if runs is False:
            for e in envsubst.expressions(s):
                why = f"{env.owner} sets no variable, so Flux substitutes nothing"
                out.literal.setdefault(e, why)
            return False, s
        if runs is None:
            for e in envsubst.expressions(s) or ([s] if "$$" in s else []):
                out.unknown.setdefault(
                    e, f"{e}: whether {env.owner} substitutes at all is not known ({env.maybe})"
                )
            return False, s
        res = envsubst.expand(s, env)
        if res.unset and not out.may_fail:
            names = ", ".join(res.unset)
            out.may_fail = f"{env.owner} sets no {names} (used in {doc.file} without a default)"
        if res.text is None:
            out.unknown.update({e: w for e, w in res.unknown.items() if e not in out.unknown})
            return False, s
        if res.text == s:
            return False, s
        value, why = _read_back(s, res.text)
        if why:
            for e in envsubst.expressions(s):
                out.unknown.setdefault(e, f"{e}: {why}")
            return False, s
        if isinstance(value, str) and "${" in value:
            for e in envsubst.expressions(value):
                why = f"written ${e}: Flux's escape leaves the text {e}, applied as it is"
                out.literal.setdefault(e, why)
        return value != s, value

    def walk(node: Any, old: PathKey, new: PathKey) -> Any:
        nonlocal changed
        if old != new:
            moves[old] = new
        if isinstance(node, str):
            hit, value = text(node)
            changed = changed or hit
            return value
        if isinstance(node, list):
            return [walk(v, (*old, i), (*new, i)) for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        result: dict[Any, Any] = {}
        for k, v in node.items():
            nk = k
            if isinstance(k, str):
                hit, nk = text(k)
                if not isinstance(nk, str):
                    nk = k
                changed = changed or nk != k
            result[nk] = walk(v, (*old, k), (*new, nk))
        return result

    data = walk(doc.data, (), ())
    if not changed:
        return doc
    res = clone(doc)
    res.data = data
    for table in (res.lines, res.key_lines, res.raw, res.styles, res.files, res.embeds):
        moved = {moves.get(k, k): v for k, v in table.items()}
        table.clear()
        table.update(moved)
    for path in list(res.raw):
        value = res.get(*path)
        if isinstance(value, str) and value != res.raw[path]:
            res.raw[path] = value
    return res


def _read_back(original: str, result: str) -> tuple[Any, str]:
    """What Flux reads the substituted text as, or ("", why) when this cannot be sure.

    The object is written as YAML (a string plainly where it can be, else in single quotes,
    a multi-line one as a literal block), substituted, and read again.
    """
    if "\n" in original:
        return result, ""  # a literal block: the text as it is
    first = original[:1]
    plain = not (
        not original
        or first in _FIRST
        or (first in "?:-" and original[1:2] in ("", " "))
        or original != original.strip()
        or ": " in original
        or " #" in original
        or original.endswith(":")
        or "\t" in original
    )
    if not plain:
        if "'" in result:
            return "", f"after substitution {result!r} is not read back as written"
        return result, ""
    if result in _GO_BOOLS:
        return "", f"after substitution {result!r} reads as a boolean in Flux's YAML"
    try:
        value = load_one(result)
    except YamlError:
        return "", f"after substitution {result!r} is no longer valid YAML in the object"
    if not isinstance(value, str):
        kind = "nothing (null)" if value is None else f"{type(value).__name__} {value!r}"
        return "", (
            f"after substitution the YAML text {result!r} reads as {kind}, not as text "
            "(Flux substitutes the text and reads it again; a field that must be a string "
            "then fails to apply)"
        )
    return value, ""
