"""Snapshot files: upgradeplan's own state format, and plain ``kubectl get -o yaml|json`` output.

A snapshot is the serialised :class:`State` (docs/state-format.md). Plain Kubernetes objects
(a ``List``, a ``*List``, single objects, several YAML documents) are handed to
:func:`upgradeplan.readers.kube.objects.state_from_objects`, so a customer needs nothing but
kubectl. Reading never executes anything from the file (:mod:`upgradeplan.yamlload`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any, Literal

import yaml

from upgradeplan import errors, progress, provenance, yamlload
from upgradeplan.filekind import describe, is_kubeconfig
from upgradeplan.kb.loader import load
from upgradeplan.model import Fact, FactValue, KnowledgeBase, State
from upgradeplan.readers import recorded
from upgradeplan.readers.inputs import read_bounded
from upgradeplan.readers.kube.objects import server_version_object, state_from_objects
from upgradeplan.state import keys
from upgradeplan.state.merge import merge
from upgradeplan.unreadable import Unreadable
from upgradeplan.versions import Constraint, Version

SCHEMA_VERSION = 1
KIND = "upgradeplan-state"

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def read(path: str, kb: KnowledgeBase | None = None) -> State:
    """Read a snapshot file (``-`` is stdin). Raises errors.BadInput with ``file:line``."""
    text, label = _read_text(path)

    return merge(*states_of(text, label, kb))


def states_of(text: str, label: str, kb: KnowledgeBase | None = None) -> list[State]:
    """The states a snapshot text holds, unmerged: one per upgradeplan-state document (a
    ``snapshot --all-contexts`` stream holds one per context), then one for all Kubernetes
    objects together. ``label`` names the text in errors and sources."""
    docs = _parse(text, label)
    states: list[State] = []
    objects: list[dict[str, Any]] = []
    listed = False  # a kubectl list was read, even an empty one
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise errors.BadInput(
                f"not a snapshot: it is {describe(doc)}, expected a mapping",
                location=label,
                hint="a snapshot is an upgradeplan-state document or kubectl -o yaml|json output",
            )
        if doc.get("kind") == KIND:
            states.append(_state_doc(doc, text, label, kb))
        elif _is_kubeconfig(doc):
            raise errors.BadInput(
                "not a snapshot: it is a kubeconfig",
                location=_where(text, label, "kind"),
                hint="read the cluster with --kubeconfig FILE, or give its snapshot "
                "(upgradeplan snapshot -f FILE)",
            )
        elif _is_list(doc):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise errors.BadInput(
                    f"{doc.get('kind')}.items must be a list", location=_where(text, label, "items")
                )
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    raise errors.BadInput(
                        f"{doc.get('kind')}.items[{i}] is {describe(item)}, expected an object",
                        location=_where(text, label, "items"),
                        hint="a list holds Kubernetes objects (kubectl get -o yaml|json)",
                    )
            objects.extend(items)
            listed = True
        elif isinstance(doc.get("kind"), str) and "apiVersion" in doc:
            objects.append(doc)
        elif isinstance(doc.get("serverVersion"), dict):  # kubectl version -o json|yaml
            objects.append(server_version_object(doc["serverVersion"]))
        else:
            kind = doc.get("kind")
            what = f"kind {str(kind)[:40]!r}" if kind is not None else "no kind"
            raise errors.BadInput(
                f"not a snapshot ({what}): it is {describe(doc)}",
                location=_where(text, label, "kind"),
                hint=f"expected 'kind: {KIND}' or Kubernetes objects (kubectl get -o yaml|json)",
            )
    if objects or listed:
        states.append(_from_objects(kb, objects, label))
    if not states:
        raise errors.BadInput("the file holds no state and no objects", location=label)
    return states


MAX_INPUT = 256 * 1024 * 1024  # bytes of one snapshot file (20,000 HelmReleases are ~10 MB)


def _is_kubeconfig(doc: Any) -> bool:
    return is_kubeconfig(doc)


def _read_text(path: str) -> tuple[str, str]:
    """The text of a snapshot file, or of stdin: regular files only, at most MAX_INPUT bytes
    (:mod:`upgradeplan.readers.inputs`: a FIFO or a device is refused by name)."""

    if path == "-":
        return _decoded(sys.stdin.buffer.read(MAX_INPUT + 1), "<stdin>"), "<stdin>"
    if os.path.isdir(path):
        raise errors.BadInput(
            f"{path}: is a directory",
            hint="--state/--snapshot takes a file; use --gitops for a directory",
        )
    hint = (
        "check the --state/--snapshot path"
        if not os.path.lexists(path)
        else ("--state/--snapshot reads a regular file, or '-' for stdin")
    )
    data = read_bounded(path, path, cap=MAX_INPUT, hint=hint)
    return _decoded(data, path), path


def _decoded(data: bytes, label: str) -> str:
    if len(data) > MAX_INPUT:
        raise errors.BadInput(
            f"{label}: more than the cap of {MAX_INPUT} bytes",
            hint="a snapshot of one installation is far smaller; check the input",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.BadInput(f"{label}: not UTF-8 text ({exc.reason})") from None


# a shell prompt and the command pasted with the output: `$ kubectl get … -o yaml`,
# `user@host:~$ kubectl …`, `> flux export …`, `PS C:\> kubectl …`
_PROMPT = re.compile(r"^\s*(?:\S*[$#%>]\s*)?(?:kubectl|k|oc|flux|helm)(?:\s.*)?$|^\s*[$%>]\s*$")


def _without_prompts(text: str, label: str) -> str:
    """``text`` with pasted shell prompt lines before and after the output blanked (line
    numbers stay), each one said as a note on stderr."""
    lines = text.split("\n")
    skipped: list[int] = []
    for order in (range(len(lines)), range(len(lines) - 1, -1, -1)):
        for i in order:
            line = lines[i]
            if not line.strip():
                continue
            if not _PROMPT.match(line) or line.lstrip().startswith(("{", "[", "-", "#")):
                break
            skipped.append(i)
    if not skipped:
        return text

    for i in sorted(set(skipped)):
        progress.note(f"{label}:{i + 1}: skipped a shell prompt line: {lines[i].strip()}")
        lines[i] = ""
    return "\n".join(lines)


def _parse(text: str, label: str) -> list[Any]:
    """The documents of a snapshot text; the cyclic garbage collector paused meanwhile (the
    parsers build only acyclic containers, and collecting over them made reading a 20,000
    HelmRelease snapshot superlinear: 3.5 times slower at 10,000)."""
    return _parse_documents(text, label)


def _parse_documents(text: str, label: str) -> list[Any]:
    text = _without_prompts(text, label)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise errors.BadInput(
                f"malformed JSON: {exc.msg} (column {exc.colno})",
                location=f"{label}:{exc.lineno}",
            ) from None
        except RecursionError:
            raise errors.BadInput(
                "JSON nested too deeply to be a snapshot", location=label
            ) from None
        return loaded if isinstance(loaded, list) else [loaded]
    try:
        return yamlload.load_all(text)
    except yamlload.YamlError as exc:
        raise errors.BadInput(
            exc.message if exc.refused else f"malformed YAML: {exc.problem}",
            location=f"{label}:{exc.line}" if exc.line else label,
            hint=exc.hint,
        ) from None


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in doc


def _where(text: str, label: str, key: str) -> str:
    """``file:line`` of the first line that defines ``key`` (best effort)."""
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.strip()
        if body.startswith((f"{key}:", f'"{key}":', f"'{key}':", f'"{key}" :')):
            return f"{label}:{number}"
    return label


def _state_doc(
    doc: dict[str, Any], text: str, label: str, kb: KnowledgeBase | None = None
) -> State:
    version = doc.get("schema_version")
    if version is None:
        raise errors.BadInput(
            "missing schema_version",
            location=_where(text, label, "kind"),
            hint="add 'schema_version: 1'",
        )
    if version != SCHEMA_VERSION:
        raise errors.BadInput(
            f"schema_version {version!r} is not supported "
            f"(this upgradeplan reads {SCHEMA_VERSION})",
            location=_where(text, label, "schema_version"),
            hint="write it with this upgradeplan version, or upgrade upgradeplan",
        )
    raw_facts = doc.get("facts") or {}
    if not isinstance(raw_facts, dict):
        raise errors.BadInput("facts must be a mapping", location=_where(text, label, "facts"))
    facts: dict[str, Fact] = {}
    for key, entry in raw_facts.items():
        try:
            facts[key] = _fact_entry(key, entry, label)
        except errors.BadInput as exc:
            # the line is looked up only for a bad fact (a scan per fact made reading quadratic)
            if exc.location:
                raise
            where = _where(text, label, str(key))
            raise errors.BadInput(exc.message, location=where, hint=exc.hint) from None
    unreadable = doc.get("unreadable") or {}
    if not isinstance(unreadable, dict):
        raise errors.BadInput(
            "unreadable must be a mapping", location=_where(text, label, "unreadable")
        )
    name = doc.get("name")
    index = {str(k): str(v) for k, v in unreadable.items()}
    unread = _unread(doc.get("unread"), text, label)
    # what the file only records (a derived version, a text source it says was unreadable)
    facts, unread = recorded.as_read(facts, index, unread, label, lambda: _kb(kb))
    return State(facts=facts, name=str(name) if name else label, unreadable=index, unread=unread)


def _source(entry: dict[str, Any], key: str, label: str) -> provenance.Source:
    """The source a snapshot recorded for a fact: its ``from`` fields (the typed Source, whose
    text must be the ``source`` text when both are given); else its ``source`` text as it
    stands (no file, line or object is read out of the text); else the snapshot file."""
    said = entry.get("source")
    if "from" not in entry:
        return provenance.text(str(said)) if said else provenance.text(label)
    try:
        source = provenance.from_fields(entry["from"])
    except ValueError as exc:
        raise errors.BadInput(
            f"fact {key!r}: from: {exc}",
            hint="write it with upgradeplan snapshot, or see docs/state-format.md (sources)",
        ) from None
    if said and str(said) != str(source):
        raise errors.BadInput(
            f"fact {key!r}: source {str(said)!r} is not what its from fields say ({str(source)!r})",
            hint="edit both, or drop 'source' (it is printed from 'from')",
        )
    return source


def _fact_entry(key: Any, entry: Any, label: str) -> Fact:
    """One fact of a state document; errors.BadInput without a location when it is bad."""
    if not isinstance(key, str) or not key:
        raise errors.BadInput(f"fact key {key!r} must be a string")
    if not isinstance(entry, dict) or "value" not in entry:
        raise errors.BadInput(f"fact {key!r} must be a mapping with 'value' (and 'source')")
    value = _fact_value(key, entry["value"], "")
    return Fact(key, value, _source(entry, key, label))


def _unread(raw: Any, text: str, label: str) -> tuple[Unreadable, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise errors.BadInput(
            "unread must be a list of mappings", location=_where(text, label, "unread")
        )
    return tuple(Unreadable.from_dict(r) for r in raw)


def _fact_value(key: str, value: Any, where: str) -> FactValue:
    found = keys.match(key)
    if found is None:
        raise errors.BadInput(
            f"fact {key!r} is not a fact key of docs/state-format.md",
            location=where,
            hint="write it with upgradeplan snapshot, or use a key of docs/state-format.md",
        )
    kind = found.row.type
    if kind in ("version", "constraint"):
        if value is None:
            return None
        if not isinstance(value, str):
            raise errors.BadInput(
                f"fact {key!r}: version {value!r} must be a quoted string",
                location=where,
                hint='quote versions in YAML, e.g. value: "4.10.0"',
            )
        _check(key, value, where, version=kind == "version")
        return value
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, list) and all(isinstance(i, (str, int, float, bool)) for i in value):
        return [str(i) for i in value]
    if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
        if kind == "values":  # a chart's values keep their types
            return {str(k): v for k, v in value.items()}
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    if kind == "values" and isinstance(value, (dict, list)):
        return value  # a values subtree: nested maps and lists as the chart has them
    raise errors.BadInput(
        f"fact {key!r}: unsupported value {value!r}",
        location=where,
        hint="a fact value is a string, bool, number, list of strings, flat map or null",
    )


def _check(key: str, value: str, where: str, *, version: bool) -> None:
    try:
        if version:
            Version.parse(value)
        else:
            Constraint.parse(value)
    except (errors.InvalidVersion, errors.InvalidConstraint) as exc:
        raise errors.BadInput(f"fact {key!r}: {exc.one_line()}", location=where) from None


def _from_objects(kb: KnowledgeBase | None, objects: list[dict[str, Any]], label: str) -> State:
    state = state_from_objects(_kb(kb), objects, source_prefix=label)
    return (
        state if state.name else State(facts=state.facts, name=label, unreadable=state.unreadable)
    )


def _kb(kb: KnowledgeBase | None) -> KnowledgeBase:
    """``kb``, else the bundled knowledge (loaded only when a reading needs it)."""
    if kb is not None:
        return kb

    return load()


# --------------------------------------------------------------------------- writing


def to_document(state: State) -> dict[str, Any]:
    """The snapshot document of a state: fixed top-level order, fact keys sorted."""
    by_key = state.facts
    facts = {key: fact_entry(by_key[key]) for key in sorted(by_key)}
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": KIND,
        "name": state.name,
        "facts": facts,
    }
    if state.unreadable:
        doc["unreadable"] = {k: state.unreadable[k] for k in sorted(state.unreadable)}
    if state.unread:
        doc["unread"] = [r.to_dict() for r in state.unread]
    return doc


def fact_entry(fact: Fact) -> dict[str, Any]:
    """One fact of the document: its value, its source's text and (but for a text source,
    which is its text) the source's typed fields."""
    value, source = fact.value, fact.source
    if isinstance(value, (dict, list)):  # else as it is: a scalar
        value = _plain(value)
    entry = {"value": value, "source": str(source)}
    if source.kind != "text":
        entry["from"] = provenance.to_fields(source)
    return entry


def _plain(value: FactValue) -> Any:
    if isinstance(value, dict):
        return {k: value[k] for k in sorted(value)}
    if isinstance(value, list):
        return list(value)
    return value


def dump(state: State, fmt: Literal["yaml", "json"] | str = "yaml") -> str:
    """Serialise a state deterministically (no timestamps; never Secret data)."""
    doc = to_document(state)
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise errors.BadInput(f"unknown snapshot format {fmt!r}", hint="use yaml or json")
    out: str = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1000,
    )
    return out


def write_all(states: Iterable[State], fmt: str = "yaml") -> str:
    """Several states as one stream (YAML documents, or a JSON list)."""
    items = list(states)
    if fmt == "json":
        return json.dumps([to_document(s) for s in items], indent=2, ensure_ascii=False) + "\n"
    return "---\n".join(dump(s, "yaml") for s in items)
