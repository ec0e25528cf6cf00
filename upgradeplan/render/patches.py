"""The migration patches of a plan: file edits as unified diffs, kustomize patches, manifests,
shell commands — as one text stream, a JSON document, or a kustomize-ready folder layout.

Pure: the caller hands in the text of the files the pins were read from (``files``, path ->
content); nothing here opens a file. :func:`apply_json6902` and :func:`apply_merge_patch`
(from :mod:`upgradeplan.render.patchops`) say what a patch does to an object dict.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from upgradeplan.errors import BadInput
from upgradeplan.model import Action, Fact, Move, Plan, State, Step
from upgradeplan.render.patchops import apply_json6902, apply_merge_patch, same_object
from upgradeplan.render.yamledit import ScalarEdit, content_hash, set_scalars

__all__ = [
    "FileChange",
    "PatchItem",
    "PatchSet",
    "apply_json6902",
    "apply_merge_patch",
    "build",
    "dir_layout",
    "render_json",
    "render_text",
    "same_object",
    "source_location",
]

ItemKind = Literal["file-edit", "strategic-merge", "json6902", "manifest", "command", "snippet"]

_KIND_OF_MIGRATION: dict[str, ItemKind] = {
    "helmrelease-patch": "strategic-merge",
    "json6902": "json6902",
    "manifest": "manifest",
    "command": "command",
    "bom-pin": "snippet",
    "values-edit": "snippet",
}

_LOC = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+)$")


def source_location(source: str) -> tuple[str, int] | None:
    """``(file, line)`` when a fact source or move source names a file line, else None."""
    text = source.strip()
    if text.startswith(("flag ", "derived:", "cluster ", "snapshot ")):
        return None
    m = _LOC.match(text)
    if m is None:
        return None
    return m.group("file"), int(m.group("line"))


@dataclass(frozen=True)
class PatchItem:
    step: int  # 1-based index of the plan step; 0 = a fix for the installation as it is
    kind: ItemKind
    migration: str  # migration id, or "pin-move" for the version/pin moves of a step
    title: str
    when: Literal["before", "after", "during"]
    content: str  # unified diff, YAML patch/manifest, or shell commands
    target: Mapping[str, Any] = field(default_factory=dict)
    file: str = ""  # file-edit: the file it changes
    placeholders: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    note: str = ""  # e.g. why no diff could be made


@dataclass(frozen=True)
class FileChange:
    """All edits to one file through a given step: what ``--write`` writes."""

    path: str
    original: str
    original_hash: str
    edits: tuple[ScalarEdit, ...]
    result: str


@dataclass(frozen=True)
class PatchSet:
    items: tuple[PatchItem, ...]
    steps: tuple[Step, ...]
    changes_by_step: tuple[tuple[FileChange, ...], ...]  # [k] = cumulative changes through step k+1

    def file_changes(self, through_step: int) -> tuple[FileChange, ...]:
        """The cumulative file changes of steps 1..through_step (empty when there are none)."""
        if through_step < 1 or not self.changes_by_step:
            return ()
        return self.changes_by_step[min(through_step, len(self.changes_by_step)) - 1]


# --------------------------------------------------------------------------- building


def _fact_edit(state: State, key: str, after: str) -> tuple[str, ScalarEdit] | None:
    fact: Fact | None = state.get(key)
    if fact is None or not isinstance(fact.value, str):
        return None
    loc = source_location(fact.source)
    if loc is None:
        return None
    return loc[0], ScalarEdit(loc[1], fact.value, after, what=key)


def _move_edit(move: Move, state: State) -> tuple[str, ScalarEdit] | None:
    if move.after is None or move.before is None:
        return None
    loc = source_location(move.source) if move.source else None
    if loc is not None:
        return loc[0], ScalarEdit(
            loc[1], move.before, move.after, what=f"{move.kind}.{move.product}"
        )
    if move.kind == "pin":
        return _fact_edit(state, f"pin.{move.product}", move.after)
    # the installed version of a product pinned exactly in a file (e.g. the meta chart's
    # OCIRepository spec.ref.semver) moves with its pin
    pin = state.get(f"pin.{move.product}")
    if pin is not None and isinstance(pin.value, str) and _is_exact(pin.value):
        return _fact_edit(state, f"pin.{move.product}", move.after)
    return None


def _is_exact(text: str) -> bool:
    from upgradeplan.versions import is_exact

    return is_exact(text)


def _leaf(content: str) -> tuple[str, str] | None:
    """The single (dotted key, string value) leaf of a small YAML snippet, if it has one."""
    import yaml

    try:
        doc = yaml.load(content, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return None
    path: list[str] = []
    while isinstance(doc, dict) and len(doc) == 1:
        key, doc = next(iter(doc.items()))
        path.append(str(key))
    if path and isinstance(doc, str | int | float) and not isinstance(doc, bool):
        return ".".join(path), str(doc)
    return None


def _snippet_edit(action: Action, step: Step | None, state: State) -> tuple[str, ScalarEdit] | None:
    """A bom-pin or values-edit action as an edit of the file its fact was read from."""
    leaf = _leaf(action.content)
    if leaf is None:
        return None
    dotted, value = leaf
    keys: list[str] = []
    target = action.target
    if action.kind == "bom-pin":
        component = str(target.get("component") or "")
        if not component and dotted.startswith("components."):
            component = dotted.split(".")[1]
        if component:
            keys.append(f"pin.{component}")
    else:
        key = str(target.get("key") or dotted.rsplit(".", 1)[-1])
        product = step.product if step is not None else ""
        for candidate in (str(target.get("product", "")), product):
            if candidate:
                keys.append(f"values.{candidate}.{key}")
        keys.extend(k for k in state.facts if k.startswith("values.") and k.endswith(f".{key}"))
    for key in keys:
        found = _fact_edit(state, key, value)
        if found is not None:
            return found
    return None


_HR_VALUES = re.compile(r"HelmRelease (?P<ns>[^/\s]+)/(?P<name>\S+) spec\.values\.(?P<key>\S+)")


def _helmrelease_values_patch(action: Action, state: State) -> tuple[str, dict[str, Any]] | None:
    """A values-edit whose key was read from a HelmRelease's ``spec.values`` (a cluster or a
    snapshot) as a strategic-merge patch of that HelmRelease."""
    leaf = _leaf(action.content)
    if leaf is None or action.kind != "values-edit":
        return None
    dotted, value = leaf
    key = str(action.target.get("key") or dotted)
    for fact in state:
        if not fact.key.startswith("values.") or not fact.key.endswith(f".{key}"):
            continue
        m = _HR_VALUES.search(fact.source)
        if m is None or m.group("key") != key:
            continue
        values: Any = value
        for part in reversed(key.split(".")):
            values = {part: values}
        doc = {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": m.group("name"), "namespace": m.group("ns")},
            "spec": {"values": values},
        }
        target = {
            "group": "helm.toolkit.fluxcd.io",
            "version": "v2",
            "kind": "HelmRelease",
            "name": m.group("name"),
            "namespace": m.group("ns"),
        }
        return _dump_yaml(doc), target
    return None


def _step_title(step: Step) -> str:
    return f"{step.product} {step.from_version} → {step.to_version}"


def _kube_target(action: Action, item_kind: ItemKind) -> dict[str, Any]:
    target = {k: v for k, v in action.target.items() if k in ("kind", "name", "namespace")}
    if item_kind in ("strategic-merge", "manifest"):
        import yaml

        try:
            docs = [d for d in yaml.load_all(action.content, Loader=yaml.CSafeLoader) if d]
        except yaml.YAMLError:
            docs = []
        if docs and isinstance(docs[0], dict):
            meta = docs[0].get("metadata") or {}
            target.setdefault("kind", docs[0].get("kind"))
            if isinstance(meta, dict):
                target.setdefault("name", meta.get("name"))
                if meta.get("namespace"):
                    target.setdefault("namespace", meta.get("namespace"))
            api = str(docs[0].get("apiVersion") or "")
            if "/" in api:
                target.setdefault("group", api.split("/")[0])
                target.setdefault("version", api.split("/")[1])
            elif api:
                target.setdefault("version", api)
    return {k: v for k, v in target.items() if v}


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return out


def build(
    plan: Plan,
    state: State,
    *,
    files: Mapping[str, str] | None = None,
    current_actions: Sequence[Action] = (),
) -> PatchSet:
    """Collect the patches of ``plan`` step by step.

    ``files`` holds the text of files named by pin/fact sources; a move or bom-pin/values-edit
    whose file is there becomes a unified diff against the file as the previous steps left it.
    ``current_actions`` are fixes for the installation as it is (step 0), e.g. from a plan
    without a target.
    """
    files = dict(files or {})
    live: dict[str, str] = dict(files)
    edits: dict[str, list[ScalarEdit]] = {}
    items: list[PatchItem] = []
    cumulative: list[tuple[FileChange, ...]] = []

    def file_edit(step_no: int, edit_at: tuple[str, ScalarEdit], title: str, mig: str) -> PatchItem:
        path, edit = edit_at
        if path not in live:
            return PatchItem(
                step=step_no,
                kind="snippet",
                migration=mig,
                title=title,
                when="during",
                content=f"{path}:{edit.line}: {edit.before} -> {edit.after}\n",
                file=path,
                note="file not available; edit it by hand",
            )
        before = live[path]
        after = set_scalars(before, [edit], where=path)
        live[path] = after
        edits.setdefault(path, []).append(edit)
        return PatchItem(
            step=step_no,
            kind="file-edit",
            migration=mig,
            title=title,
            when="during",
            content=_diff(path, before, after),
            file=path,
        )

    def action_items(step_no: int, step: Step | None, action: Action) -> list[PatchItem]:
        kind = _KIND_OF_MIGRATION.get(action.kind, "snippet")
        if kind == "snippet":
            found = _snippet_edit(action, step, state)
            if found is not None and found[0] in live:
                item = file_edit(step_no, found, action.title, action.migration)
                return [
                    PatchItem(
                        step=item.step,
                        kind=item.kind,
                        migration=item.migration,
                        title=item.title,
                        when=action.when,
                        content=item.content,
                        file=item.file,
                        fixes=action.fixes,
                        placeholders=action.placeholders,
                    )
                ]
            hr = _helmrelease_values_patch(action, state)
            if hr is not None:
                return [
                    PatchItem(
                        step=step_no,
                        kind="strategic-merge",
                        migration=action.migration,
                        title=action.title,
                        when=action.when,
                        content=hr[0],
                        target=hr[1],
                        placeholders=action.placeholders,
                        fixes=action.fixes,
                    )
                ]
        return [
            PatchItem(
                step=step_no,
                kind=kind,
                migration=action.migration,
                title=action.title,
                when=action.when,
                content=action.content if action.content.endswith("\n") else action.content + "\n",
                target=_kube_target(action, kind),
                placeholders=action.placeholders,
                fixes=action.fixes,
            )
        ]

    for action in current_actions:
        items.extend(action_items(0, None, action))
    for n, step in enumerate(plan.steps, 1):
        step_actions = sorted(step.actions, key=lambda a: 0 if a.when == "before" else 2)
        for action in step_actions:
            if action.when == "before":
                items.extend(action_items(n, step, action))
        moved: set[str] = set()
        for move in step.moves:
            found = _move_edit(move, state)
            if found is None:
                continue
            key = f"{found[0]}:{found[1].line}"
            if key in moved:
                continue
            moved.add(key)
            # the file holds the value as the previous step left it
            path, edit = found
            prior = [e for e in edits.get(path, []) if e.line == edit.line]
            if prior:
                edit = ScalarEdit(edit.line, prior[-1].after, edit.after, edit.what)
            if edit.before == edit.after:
                continue  # an action of this step already moved it
            title = f"{move.product}: {move.before} → {move.after}"
            items.append(file_edit(n, (path, edit), title, "pin-move"))
        for action in step_actions:
            if action.when == "after":
                items.extend(action_items(n, step, action))
        cumulative.append(_changes(files, edits))
    return PatchSet(items=tuple(items), steps=plan.steps, changes_by_step=tuple(cumulative))


def _changes(
    files: Mapping[str, str], edits: Mapping[str, list[ScalarEdit]]
) -> tuple[FileChange, ...]:
    out: list[FileChange] = []
    for path in sorted(edits):
        original = files[path]
        # collapse chained edits of one line to the first value and the last value
        by_line: dict[int, ScalarEdit] = {}
        for e in edits[path]:
            first = by_line.get(e.line)
            by_line[e.line] = (
                e if first is None else ScalarEdit(e.line, first.before, e.after, e.what)
            )
        merged = tuple(by_line[line] for line in sorted(by_line))
        out.append(
            FileChange(
                path=path,
                original=original,
                original_hash=content_hash(original),
                edits=merged,
                result=set_scalars(original, merged, where=path),
            )
        )
    return tuple(out)


# --------------------------------------------------------------------------- rendering

_KIND_LABEL: dict[str, str] = {
    "file-edit": "unified diff",
    "strategic-merge": "kustomize strategic-merge patch",
    "json6902": "JSON 6902 patch",
    "manifest": "manifest to apply",
    "command": "shell commands",
    "snippet": "values to set",
}


def _target_text(target: Mapping[str, Any]) -> str:
    kind = target.get("kind", "")
    name = target.get("name", "")
    ns = target.get("namespace", "")
    if not (kind or name):
        return ""
    return f"{kind} {ns + '/' if ns else ''}{name}".strip()


def _header(item: PatchItem) -> str:
    parts = [f"{item.when}: {item.title}", f"[{item.migration}; {_KIND_LABEL[item.kind]}"]
    where = item.file or _target_text(item.target)
    if where:
        parts[-1] += f"; {where}"
    parts[-1] += "]"
    return " ".join(parts)


def render_text(patches: PatchSet, *, only_step: int | None = None) -> str:
    """Every patch under a ``#`` header per step; diffs, YAML and shell as they are."""
    out: list[str] = []
    groups: dict[int, list[PatchItem]] = {}
    for item in patches.items:
        groups.setdefault(item.step, []).append(item)
    if not groups:
        return "# No patches: the plan needs no migrations and moves no pin written in a file.\n"
    for step_no in sorted(groups):
        if only_step is not None and step_no != only_step:
            continue
        if step_no == 0:
            out.append("# Now: fixes for the installation as it is")
        else:
            step = patches.steps[step_no - 1]
            out.append(f"# Step {step_no}: {_step_title(step)}")
        for item in groups[step_no]:
            out.append(f"## {_header(item)}")
            if item.fixes:
                out.append(f"## fixes: {', '.join(item.fixes)}")
            if item.placeholders:
                out.append(f"## fill in: {', '.join(item.placeholders)}")
            if item.note:
                out.append(f"## note: {item.note}")
            out.append(item.content.rstrip("\n"))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def render_json(patches: PatchSet) -> str:
    doc = {
        "schema_version": 1,
        "patches": [
            {
                "step": i.step,
                "kind": i.kind,
                "migration": i.migration,
                "title": i.title,
                "when": i.when,
                "file": i.file or None,
                "target": dict(i.target) or None,
                "fixes": list(i.fixes),
                "placeholders": list(i.placeholders),
                "content": i.content,
            }
            for i in patches.items
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def _dump_yaml(doc: Any) -> str:
    import yaml

    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


def _json6902_as_yaml(content: str, where: str) -> str:
    import yaml

    try:
        ops = yaml.load(content, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        raise BadInput(
            f"JSON 6902 patch does not parse: {exc}".splitlines()[0], location=where
        ) from None
    if not isinstance(ops, list):
        raise BadInput("JSON 6902 patch is not a list of operations", location=where)
    return _dump_yaml(ops)


def dir_layout(patches: PatchSet) -> dict[str, str]:
    """Relative path -> content of a folder per step, each a kustomize overlay.

    ``NN-<step>/kustomization.yaml`` lists the manifests as ``resources`` and the
    strategic-merge and JSON 6902 patches under ``patches`` with their targets; shell commands
    go to ``commands-before.sh`` / ``commands-after.sh``, file edits to ``*.diff``. Add your
    base (``resources: [../base]``) to build it against your manifests.
    """
    out: dict[str, str] = {}
    groups: dict[int, list[PatchItem]] = {}
    for item in patches.items:
        groups.setdefault(item.step, []).append(item)
    readme = ["# Patches", ""]
    for step_no in sorted(groups):
        if step_no == 0:
            folder, heading = "00-now", "Fixes for the installation as it is"
        else:
            step = patches.steps[step_no - 1]
            span = f"{_slug(step.from_version)}-to-{_slug(step.to_version)}"
            folder = f"{step_no:02d}-{_slug(step.product)}-{span}"
            heading = f"Step {step_no}: {_step_title(step)}"
        readme += [f"## {heading}", "", f"Folder `{folder}/`:", ""]
        resources: list[str] = []
        kpatches: list[dict[str, Any]] = []
        scripts: dict[str, list[str]] = {}
        used: set[str] = set()

        def name_for(base: str, ext: str, used: set[str] = used) -> str:
            name = f"{base}.{ext}"
            n = 2
            while name in used:
                name = f"{base}-{n}.{ext}"
                n += 1
            used.add(name)
            return name

        for item in groups[step_no]:
            base = _slug(item.migration)
            if item.kind == "manifest":
                fname = name_for(base, "yaml")
                out[f"{folder}/{fname}"] = item.content
                resources.append(fname)
                readme.append(f"- `{fname}`: {item.title} (resource)")
            elif item.kind in ("strategic-merge", "json6902"):
                fname = name_for(base, "yaml")
                content = item.content
                if item.kind == "json6902":
                    content = _json6902_as_yaml(content, f"{folder}/{fname}")
                out[f"{folder}/{fname}"] = content
                entry: dict[str, Any] = {"path": fname}
                target = {
                    k: item.target[k]
                    for k in ("group", "version", "kind", "name", "namespace")
                    if k in item.target
                }
                if target:
                    entry["target"] = target
                kpatches.append(entry)
                readme.append(f"- `{fname}`: {item.title} ({_KIND_LABEL[item.kind]})")
            elif item.kind == "command":
                script = f"commands-{'after' if item.when == 'after' else 'before'}.sh"
                scripts.setdefault(script, []).append(f"# {item.title}\n{item.content.rstrip()}")
            else:
                ext = "diff" if item.kind == "file-edit" else "txt"
                fname = name_for(_slug(item.file.rsplit("/", 1)[-1]) if item.file else base, ext)
                out[f"{folder}/{fname}"] = item.content
                how = "apply with `git apply` or `patch -p1`" if ext == "diff" else "set by hand"
                readme.append(f"- `{fname}`: {item.title} ({how})")
        for script, parts in sorted(scripts.items()):
            out[f"{folder}/{script}"] = "#!/bin/sh\nset -eu\n\n" + "\n\n".join(parts) + "\n"
            readme.append(f"- `{script}`: run {script.split('-')[1][:-3]} the step")
        if resources or kpatches:
            kust: dict[str, Any] = {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": resources,
            }
            if kpatches:
                kust["patches"] = kpatches
            out[f"{folder}/kustomization.yaml"] = _dump_yaml(kust)
            readme.append("- `kustomization.yaml`: add your base under `resources` and build")
        readme.append("")
    out["README.md"] = "\n".join(readme).rstrip("\n") + "\n"
    return out
