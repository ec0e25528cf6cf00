"""The migration patches of a plan as one text stream, a JSON document, or a kustomize-ready
folder layout.

:func:`upgradeplan.patches.build.build` collects them. Pure: nothing here opens a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from upgradeplan.errors import BadInput
from upgradeplan.model import Step
from upgradeplan.patches.build import dump_yaml
from upgradeplan.patches.patchset import PatchItem, PatchSet
from upgradeplan.yamlload import YamlError, load_one

__all__ = ["dir_layout", "render_json", "render_text"]

# --------------------------------------------------------------------------- rendering

_KIND_LABEL: dict[str, str] = {
    "file-edit": "unified diff",
    "strategic-merge": "kustomize strategic-merge patch",
    "json6902": "JSON 6902 patch",
    "manifest": "manifest to apply",
    "command": "shell commands",
    "snippet": "values to set",
}


_NOTHING = "# No patches: nothing needs a migration and no pin or version moves.\n"
_NO_FILES = (
    "# No patches for {moves}:\n"
    "# no file that was read holds a pin to move, and no step needs a migration.\n"
    "# Read the installation from its files (--gitops PATH) for diffs of its pins;\n"
    "# `upgradeplan plan` prints the steps.\n"
)


def _nothing(patches: PatchSet) -> str:
    """Why there is no patch: nothing moves, or what moves is in no file that was read."""
    if not patches.steps:
        return _NOTHING
    moves = ", ".join(_step_title(s) for s in patches.steps)
    return _NO_FILES.format(moves=moves)


def _step_title(step: Step) -> str:
    return f"{step.product} {step.from_version} → {step.to_version}"


def _target_text(target: Mapping[str, Any]) -> str:
    kind = target.get("kind", "")
    name = target.get("name", "")
    ns = target.get("namespace", "")
    if not (kind or name):
        return ""
    return f"{kind} {ns + '/' if ns else ''}{name}".strip()


def _header(item: PatchItem) -> str:
    when = {"before": "before the step", "after": "after the step", "during": "the step"}
    label = "now" if item.step == 0 else when[item.when]
    parts = [f"{label}: {item.title}", f"[{item.migration}; {_KIND_LABEL[item.kind]}"]
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
        return _nothing(patches)
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


def _json6902_as_yaml(content: str, where: str) -> str:
    try:
        ops = load_one(content)
    except YamlError as exc:
        raise BadInput(
            f"JSON 6902 patch does not parse: {exc.problem}".splitlines()[0], location=where
        ) from None
    if not isinstance(ops, list):
        raise BadInput("JSON 6902 patch is not a list of operations", location=where)
    return dump_yaml(ops)


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
                extra = f"; {item.note}" if item.note else ""
                readme.append(f"- `{fname}`: {item.title} ({_KIND_LABEL[item.kind]}{extra})")
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
            out[f"{folder}/kustomization.yaml"] = dump_yaml(kust)
            readme.append("- `kustomization.yaml`: add your base under `resources` and build")
        readme.append("")
    if not groups:
        readme.extend(line.removeprefix("# ") for line in _nothing(patches).splitlines())
    out["README.md"] = "\n".join(readme).rstrip("\n") + "\n"
    return out
