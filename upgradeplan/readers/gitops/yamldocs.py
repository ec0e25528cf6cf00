"""The GitOps reader's YAML: text read into documents whose values keep their ``file:line``.

:func:`upgradeplan.yamlload.load_paths` reads the text (bounded; a key written twice is
refused) into :class:`~upgradeplan.readers.gitops.docs.Doc` objects.
"""

from __future__ import annotations

from typing import Any

from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.readers.gitops.docs import Doc, View
from upgradeplan.yamlload import YamlError, load_paths


def documents(content: bytes, display: str) -> list[Doc]:
    """Parse every document of a YAML file; errors become :class:`BadInput` at ``file:line``."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"not UTF-8 text (byte {exc.start})",
            location=display,
            hint="save the file as UTF-8 or remove it from the --gitops PATH",
        ) from None
    return parse(text, display)


class Refused(UpgradeplanError):
    """A file no reader should read on: a key written twice (kustomize refuses it), or past
    a limit of :mod:`upgradeplan.yamlload`. Not a :class:`BadInput`, which the reader keeps
    as an unreadable file: this one stops the read with exit 2."""


def parse(text: str, display: str, offset: int = 0) -> list[Doc]:
    """Parse YAML text whose first line is line ``offset + 1`` of ``display``
    (:func:`upgradeplan.yamlload.load_paths`: bounded, a key written twice refused)."""
    try:
        located = load_paths(text, offset)
    except YamlError as exc:
        line = exc.line + offset if exc.line else 0
        if exc.refused:  # kustomize refuses it too: the whole read stops (exit 2)
            raise Refused(
                f"{display}:{line}: {exc.message}" if line else f"{display}: {exc.message}",
                hint=exc.hint,
            ) from None
        raise BadInput(
            exc.message,
            location=f"{display}:{line}" if line else display,
            hint="fix the YAML (or remove the file from the --gitops PATH)",
        ) from None
    return [
        Doc(data, display, i, lines, key_lines, raw, styles)
        for i, (data, lines, key_lines, raw, styles) in enumerate(located)
    ]


def embedded(view: View, *path: Any) -> list[Doc]:
    """The YAML documents held in the string at ``path`` of ``view`` (a ConfigMap's
    ``values.yaml``).

    Lines stay true to the file for a literal block (``|``); otherwise every value is
    placed on the key's line.
    """
    text = view.get(*path)
    if not isinstance(text, str):
        return []
    full = (*view.prefix, *path)
    if full in view.doc.embeds:
        file, offset = view.doc.embeds[full]
        return parse(text, file, offset=offset)
    file, key_line = view.doc.loc(*full)
    key_line = view.doc.key_lines.get(full) or key_line
    if view.doc.styles.get(full) == "|":
        return parse(text, file, offset=key_line)
    docs = parse(text, file)
    for d in docs:
        d.lines = dict.fromkeys(d.lines, key_line)
        d.key_lines = dict.fromkeys(d.key_lines, key_line)
    return docs
