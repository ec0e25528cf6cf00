"""Collect a plan's patches: step by step, each migration in the form that fits where its
facts were read.

- A pin or version move, a ``bom-pin`` or ``values-edit`` migration, and a JSON 6902
  ``replace`` of a value that was read from a file (``--gitops``) become **file edits**
  (unified diffs; ``--write`` applies them), chained across steps: step 2's diff is against
  the file as step 1 left it.
- A ``values-edit`` of a key read from a HelmRelease's ``spec.values`` (a cluster, a
  snapshot) becomes a **strategic-merge patch** of that HelmRelease.
- A ``helmrelease-patch`` that only sets ``spec.driftDetection`` of a HelmRelease the meta
  chart renders from a BOM (the GitOps reader read or derived its drift-detection mode from
  ``components.<name>``) becomes an **edit of the BOM** (``components.<name>.driftDetection``,
  the chart's passthrough), since no HelmRelease manifest in the files could take the patch.
- ``helmrelease-patch`` / ``json6902`` / ``manifest`` / ``command`` migrations stay what they
  are, with kustomize targets naming the observed objects.

Pure: files come in as text (``files``: path -> content).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from upgradeplan.errors import BadInput
from upgradeplan.model import Action, Fact, Jump, KnowledgeBase, Move, Plan, State, Step
from upgradeplan.patches.files import content_hash
from upgradeplan.patches.patchset import (
    KIND_OF_MIGRATION,
    FileChange,
    ItemKind,
    KeyEdit,
    PatchItem,
    PatchSet,
    ScalarEdit,
)
from upgradeplan.patches.yamledit import (
    entry_paths_at,
    scalar_lines,
    set_keys,
    set_scalars,
)
from upgradeplan.versions import is_exact
from upgradeplan.yamlload import YamlError, load_all

_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


# --------------------------------------------------------------------------- small helpers


def _is_exact(text: str) -> bool:
    return is_exact(text)


def _yaml_docs(text: str) -> list[Any]:
    try:
        return [d for d in load_all(text) if d is not None]
    except YamlError:
        return []


def _leaf(content: str) -> tuple[str, str] | None:
    """The single (dotted key, string value) leaf of a small YAML snippet, if it has one."""
    docs = _yaml_docs(content)
    if len(docs) != 1:
        return None
    doc = docs[0]
    path: list[str] = []
    while isinstance(doc, dict) and len(doc) == 1:
        key, doc = next(iter(doc.items()))
        path.append(str(key))
    if path and isinstance(doc, str | int | float) and not isinstance(doc, bool):
        return ".".join(path), str(doc)
    return None


def dump_yaml(doc: Any) -> str:
    import yaml

    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


def _diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _fact_edit(fact: Fact | None, after: str) -> tuple[str, ScalarEdit] | None:
    if fact is None or not isinstance(fact.value, str):
        return None
    loc = fact.source.file_line
    if loc is None:
        return None
    return loc[0], ScalarEdit(loc[1], fact.value, after, what=fact.key)


def _json6902_replacements(content: str) -> list[tuple[str, str]]:
    """(old, new) string values of each ``replace`` op guarded by a ``test`` of its path."""
    docs = _yaml_docs(content)
    ops = docs[0] if docs and isinstance(docs[0], list) else []
    tested: dict[str, Any] = {}
    out: list[tuple[str, str]] = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        if op.get("op") == "test":
            tested[str(op.get("path"))] = op.get("value")
        elif op.get("op") == "replace":
            old, new = tested.get(str(op.get("path"))), op.get("value")
            if isinstance(old, str) and isinstance(new, str) and old != new:
                out.append((old, new))
    return out


def _of_action(item: PatchItem, action: Action) -> PatchItem:
    """``item`` with the action's timing, the hazards it fixes and its placeholders."""
    return replace(item, when=action.when, fixes=action.fixes, placeholders=action.placeholders)


def _require_yaml(content: str, action: Action) -> None:
    """A rendered patch or manifest must be YAML; a value that breaks it is bad input."""

    try:
        load_all(content)
    except YamlError as exc:
        first = exc.message.splitlines()[0]
        raise BadInput(
            f"migration {action.migration} rendered invalid YAML for this installation: {first}",
            hint="a substituted value needs the yq filter in the template; see "
            "docs/knowledge-format.md",
        ) from None


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, state: State, files: Mapping[str, str], kb: KnowledgeBase | None) -> None:
        self.state = state
        self.files = dict(files)
        self.kb = kb
        self.live = dict(files)
        self.edits: dict[str, list[ScalarEdit]] = {}
        self.key_edits: dict[str, list[KeyEdit]] = {}
        self.items: list[PatchItem] = []

    # ------------------------------------------------------------------ file edits

    def file_edit(
        self, step_no: int, path: str, edit: ScalarEdit, title: str, migration: str
    ) -> PatchItem | None:
        """A diff of ``path`` (as earlier edits left it); None when it would change nothing."""
        prior = [e for e in self.edits.get(path, []) if e.line == edit.line]
        if prior:  # the line holds what the last edit wrote
            edit = ScalarEdit(edit.line, prior[-1].after, edit.after, edit.what)
        if edit.before == edit.after:
            return None
        if path not in self.live:
            return PatchItem(
                step=step_no,
                kind="snippet",
                migration=migration,
                title=title,
                when="during",
                content=f"{path}:{edit.line}: {edit.before} -> {edit.after}\n",
                file=path,
                note="file not available; edit it by hand",
            )
        before = self.live[path]
        self.edits.setdefault(path, []).append(edit)
        if path in self.key_edits:  # added lines moved the rest: render from the original
            after = self._rendered(path)
        else:
            after = set_scalars(before, [edit], where=path)
        self.live[path] = after
        return _file_edit(
            step_no, path, migration, title, _diff(path, before, after), edits=(edit,)
        )

    def key_edit(
        self, step_no: int, path: str, edits: Sequence[KeyEdit], title: str, migration: str
    ) -> PatchItem | None:
        """A diff of ``path`` setting values at key paths (adding missing keys)."""
        before = self.live[path]
        self.key_edits.setdefault(path, []).extend(edits)
        after = self._rendered(path)
        if after == before:
            del self.key_edits[path][-len(edits) :]
            return None
        self.live[path] = after
        diff = _diff(path, before, after)
        return _file_edit(step_no, path, migration, title, diff, keys=tuple(edits))

    def _merged(self, path: str) -> tuple[ScalarEdit, ...]:
        by_line: dict[int, ScalarEdit] = {}
        for e in self.edits.get(path, []):  # chained edits of a line: first value -> last value
            first = by_line.get(e.line)
            by_line[e.line] = e if first is None else replace(first, after=e.after)
        return tuple(by_line[line] for line in sorted(by_line))

    def _rendered(self, path: str) -> str:
        """The original file with every edit so far: the scalars (at their original lines)
        first, then the key edits (found by path, so added lines move nothing they need)."""
        text = set_scalars(self.files[path], self._merged(path), where=path)
        return set_keys(text, self.key_edits.get(path, ()), where=path)

    def changes(self) -> tuple[FileChange, ...]:
        out: list[FileChange] = []
        for path in sorted(set(self.edits) | set(self.key_edits)):
            original = self.files[path]
            out.append(
                FileChange(
                    path=path,
                    original=original,
                    original_hash=content_hash(original),
                    edits=self._merged(path),
                    result=self._rendered(path),
                    keys=tuple(self.key_edits.get(path, ())),
                )
            )
        return tuple(out)

    # ------------------------------------------------------------------ where facts live

    def _product_of(self, action: Action, step: Step | None) -> str:
        if self.kb is not None and action.migration in self.kb.migrations:
            return self.kb.migrations[action.migration].product
        return step.product if step is not None else ""

    def _snippet_edit(self, action: Action, step: Step | None) -> tuple[str, ScalarEdit] | None:
        """A bom-pin or values-edit action as an edit of the file its fact was read from."""
        leaf = _leaf(action.content)
        if leaf is None:
            return None
        dotted, value = leaf
        keys: list[str] = []
        if action.kind == "bom-pin":
            component = str(action.target.get("component") or "")
            if not component and dotted.startswith("components."):
                component = dotted.split(".")[1]
            if component:
                keys.append(f"pin.{component}")
        else:
            key = str(action.target.get("key") or dotted)
            product = self._product_of(action, step)
            if product:
                keys.append(f"values.{product}.{key}")
            keys += sorted(
                k for k in self.state.facts if k.startswith("values.") and k.endswith(f".{key}")
            )
        for key in keys:
            found = _fact_edit(self.state.get(key), value)
            if found is not None:
                return found
        return None

    def _helmrelease_values(self, action: Action) -> PatchItem | None:
        """A values-edit of a key read from a HelmRelease's spec.values, as a patch of it."""
        leaf = _leaf(action.content)
        if leaf is None or action.kind != "values-edit":
            return None
        dotted, value = leaf
        key = str(action.target.get("key") or dotted)
        for fact in self.state:
            obj = fact.source.obj if fact.key.startswith("values.") else None
            if obj is None or obj.kind != "HelmRelease" or not obj.namespace:
                continue
            if fact.source.path != f"spec.values.{key}":
                continue
            values: Any = value
            for part in reversed(key.split(".")):
                values = {part: values}
            doc = {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": obj.name, "namespace": obj.namespace},
                "spec": {"values": values},
            }
            return PatchItem(
                step=0,
                kind="strategic-merge",
                migration=action.migration,
                title=action.title,
                when=action.when,
                content=dump_yaml(doc),
                target={
                    "group": "helm.toolkit.fluxcd.io",
                    "version": "v2",
                    "kind": "HelmRelease",
                    "name": obj.name,
                    "namespace": obj.namespace,
                },
                placeholders=action.placeholders,
                fixes=action.fixes,
            )
        return None

    def _bom_passthrough(self, action: Action) -> tuple[str, list[KeyEdit], str] | None:
        """A HelmRelease patch that only sets ``spec.driftDetection``, as edits of the BOM the
        HelmRelease is rendered from (None when the state does not say it is rendered so)."""
        docs = _yaml_docs(action.content) if action.kind == "helmrelease-patch" else []
        doc = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else {}
        meta, spec = doc.get("metadata"), doc.get("spec")
        if doc.get("kind") != "HelmRelease" or not isinstance(meta, dict):
            return None
        name = str(meta.get("name") or "")
        if not isinstance(spec, dict) or list(spec) != ["driftDetection"]:
            return None
        leaves = spec["driftDetection"]
        if not isinstance(leaves, dict) or not leaves:
            return None
        if not all(isinstance(v, str) and isinstance(k, str) for k, v in leaves.items()):
            return None
        found = self._bom_component(name)
        if found is None:
            return None
        path, doc_no, component, line = found
        edits = [
            KeyEdit(doc_no, (*component, "driftDetection", k), v, line, f"{name} driftDetection")
            for k, v in leaves.items()
        ]
        note = (
            f"the {name} HelmRelease is rendered from this BOM: components.{name}.driftDetection "
            "is passed through to its spec.driftDetection"
        )
        return path, edits, note

    def _bom_component(self, name: str) -> tuple[str, int, tuple[Any, ...], int] | None:
        """(file, document, key path of ``components.<name>``, line) when the state read or
        derived the HelmRelease's drift-detection mode from a BOM entry in a file."""
        fact = self.state.get(f"helmrelease.{name}.drift-detection")
        if fact is None:
            return None
        derived = fact.source.kind == "default"
        if derived:
            if fact.source.subject != name:
                return None
            loc: tuple[str, int] | None = (fact.source.file, fact.source.line)
            tail: tuple[Any, ...] = ("components", name)
        else:
            loc = fact.source.file_line
            tail = ("components", name, "driftDetection", "mode")
        if loc is None or loc[0] not in self.files:
            return None
        for doc_no, path in entry_paths_at(self.files[loc[0]], loc[1], where=loc[0]):
            if path[-len(tail) :] == tail:
                return loc[0], doc_no, path[: len(path) - len(tail) + 2], loc[1]
        if derived:  # a BOM, but not one whose keys we can reach in the file
            raise BadInput(
                f"cannot add driftDetection to components.{name} in place (it is not a "
                "mapping of this file's YAML, e.g. it sits in a ConfigMap's text block)",
                location=f"{loc[0]}:{loc[1]}",
                hint=f"add driftDetection: {{mode: enabled}} under components.{name} by hand",
            )
        return None

    def _replacement_edits(self, action: Action) -> list[tuple[str, ScalarEdit]]:
        """JSON 6902 replacements of values that were read from files (e.g. the delegate's
        args in a values file) as edits of those files."""
        out: list[tuple[str, ScalarEdit]] = []
        for old, new in _json6902_replacements(action.content):
            for fact in self.state:
                value = fact.value
                holds = old == value or (isinstance(value, list) and old in value)
                loc = fact.source.file_line if holds else None
                if loc is None or loc[0] not in self.live:
                    continue
                lines = scalar_lines(self.live[loc[0]], old, where=loc[0])
                if len(lines) == 1:
                    out.append((loc[0], ScalarEdit(lines[0], old, new, what=fact.key)))
                    break
        return out

    def _kube_target(self, action: Action, kind: ItemKind, step: Step | None) -> dict[str, Any]:
        target = {k: v for k, v in action.target.items() if k in ("kind", "name", "namespace")}
        if kind in ("strategic-merge", "manifest"):
            docs = _yaml_docs(action.content)
            if docs and isinstance(docs[0], dict):
                meta = docs[0].get("metadata") or {}
                if docs[0].get("kind"):
                    target["kind"] = docs[0]["kind"]
                if isinstance(meta, dict):
                    for k in ("name", "namespace"):
                        if meta.get(k):
                            target[k] = meta[k]
                api = str(docs[0].get("apiVersion") or "")
                if "/" in api:
                    target["group"], target["version"] = api.split("/", 1)
                elif api:
                    target["version"] = api
        elif kind == "json6902" and target.get("kind") in _WORKLOAD_KINDS:
            # the observed workload, not the migration's default name
            product = self._product_of(action, step)
            for k in ("name", "namespace"):
                observed = self.state.value(f"workload.{product}.{k}")
                if isinstance(observed, str) and observed:
                    target[k] = observed
            api = str(action.target.get("apiVersion") or "apps/v1")
            if "/" in api:
                target["group"], target["version"] = api.split("/", 1)
        return {k: v for k, v in target.items() if v}

    # ------------------------------------------------------------------ items

    def action(self, step_no: int, step: Step | None, action: Action) -> None:
        kind = KIND_OF_MIGRATION.get(action.kind, "snippet")
        if kind == "snippet":
            found = self._snippet_edit(action, step)
            if found is not None and found[0] in self.live:
                item = self.file_edit(step_no, found[0], found[1], action.title, action.migration)
                if item is not None:
                    self.items.append(_of_action(item, action))
                return
            hr = self._helmrelease_values(action)
            if hr is not None:
                self.items.append(replace(hr, step=step_no))
                return
        bom = self._bom_passthrough(action) if kind == "strategic-merge" else None
        if bom is not None and bom[0] in self.live:
            item = self.key_edit(step_no, bom[0], bom[1], action.title, action.migration)
            if item is not None:
                self.items.append(_of_action(replace(item, note=bom[2]), action))
            return
        note = ""
        if kind == "json6902":
            for path, edit in self._replacement_edits(action):
                item = self.file_edit(step_no, path, edit, action.title, action.migration)
                if item is not None:
                    note = (
                        f"the same change as the diff of {path}, for a kustomize overlay of "
                        "the rendered workload: apply one of the two"
                    )
                    self.items.append(_of_action(item, action))
        content = action.content if action.content.endswith("\n") else action.content + "\n"
        if kind in ("strategic-merge", "manifest", "json6902"):
            _require_yaml(content, action)
        self.items.append(
            PatchItem(
                step=step_no,
                kind=kind,
                migration=action.migration,
                title=action.title,
                when=action.when,
                content=content,
                target=self._kube_target(action, kind, step),
                placeholders=action.placeholders,
                fixes=action.fixes,
                note=note,
            )
        )

    def _move_edits(self, move: Move) -> list[tuple[str, ScalarEdit]]:
        if move.after is None or move.before is None:
            return []
        loc = move.source.file_line if move.source is not None else None
        if loc is not None:
            what = f"{move.kind}.{move.product}"
            return [(loc[0], ScalarEdit(loc[1], move.before, move.after, what=what))]
        out: list[tuple[str, ScalarEdit]] = []
        pin = self.state.get(f"pin.{move.product}")
        # a pin moves; so does the exact pin of a product whose version moves (the meta
        # chart's OCIRepository spec.ref.semver, a HelmRelease spec.chart.spec.version)
        if move.kind == "pin" or (
            pin is not None and isinstance(pin.value, str) and _is_exact(pin.value)
        ):
            found = _fact_edit(pin, move.after)
            if found is not None:
                out.append(found)
        if move.kind == "installed" and self.kb is not None and move.product in self.kb.products:
            # values keys that carry the version (image.tag: v0.29.0) move with it
            for key in self.kb.products[move.product].recognise.values_keys:
                fact = self.state.get(f"values.{move.product}.{key}")
                if fact is not None and str(fact.value).removeprefix("v") == move.before:
                    found = _fact_edit(fact, move.after)
                    if found is not None:
                        out.append(found)
        return out

    def moves(self, step_no: int, step: Step) -> None:
        seen: set[tuple[str, int]] = set()
        by_hand: dict[str, str] = {}
        for move in step.moves:
            title = f"{move.product}: {move.before} → {move.after}"
            found = self._move_edits(move)
            for path, edit in found:
                if (path, edit.line) in seen:
                    continue
                seen.add((path, edit.line))
                item = self.file_edit(step_no, path, edit, title, "pin-move")
                if item is not None:
                    self.items.append(item)
            pin = self.state.get(f"pin.{move.product}")
            if found or pin is None or move.after is None:
                continue
            if move.kind == "pin" or (isinstance(pin.value, str) and _is_exact(pin.value)):
                # a pin that is not in a file we read (a cluster, a snapshot, a flag)
                by_hand.setdefault(
                    move.product,
                    f"pin.{move.product}: {move.before} -> {move.after}  (read from {pin.source})",
                )
        if by_hand:
            self.items.append(
                PatchItem(
                    step=step_no,
                    kind="snippet",
                    migration="pin-move",
                    title="pins to move",
                    when="during",
                    content="\n".join(by_hand[p] for p in sorted(by_hand)) + "\n",
                    note="set these where the pins are written (a BOM, the OCIRepository or "
                    "HelmRelease in your GitOps repository); --gitops gives diffs",
                )
            )


_AS_IT_IS = Plan(
    schema_version=1,
    targets=(),
    current={},
    direct=Jump(findings=(), verdict="safe"),
    steps=(),
    verdict="safe",
)


def build(
    plan: Plan | None,
    state: State,
    *,
    files: Mapping[str, str] | None = None,
    current_actions: Sequence[Action] = (),
    kb: KnowledgeBase | None = None,
) -> PatchSet:
    """Collect the patches of ``plan`` step by step (see the module doc).

    ``current_actions`` are fixes for the installation as it is (step 0), e.g. from a plan
    without a target. ``kb`` (optional) names each migration's product and the values keys
    that carry a product's version. Without ``plan`` there is no step (the installation as
    it is).
    """
    plan = plan or _AS_IT_IS
    b = _Builder(state, files or {}, kb)
    for action in current_actions:
        b.action(0, None, action)
    cumulative: list[tuple[FileChange, ...]] = []
    for n, step in enumerate(plan.steps, 1):
        for action in step.actions:
            if action.when == "before":
                b.action(n, step, action)
        b.moves(n, step)
        for action in step.actions:
            if action.when != "before":
                b.action(n, step, action)
        cumulative.append(b.changes())
    return PatchSet(items=tuple(b.items), steps=plan.steps, changes_by_step=tuple(cumulative))


def _file_edit(
    step: int, path: str, migration: str, title: str, diff: str, **edits: Any
) -> PatchItem:
    """A ``file-edit`` item: the diff of ``path``, applied during the step."""
    return PatchItem(
        step=step,
        kind="file-edit",
        migration=migration,
        title=title,
        when="during",
        content=diff,
        file=path,
        **edits,
    )
