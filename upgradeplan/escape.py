"""Values read from an installation, made safe for where they are written.

A name read from a cluster, a snapshot, a GitOps file or a flag reaches shell commands
(quoted: ``kb.templating.shq``), YAML (a JSON string: ``kb.templating.yq``) and Markdown
(:func:`code` spans and :func:`fence` blocks one backtick longer than any run inside, other
text through :func:`md_text`). A value holding a control character (NUL, a line break, an
escape sequence) is refused before it is written anywhere (:func:`refuse_control`): no
Kubernetes name holds one, and a line break is what turns a comment line of a patch into an
operation.

Nothing here imports the rest of the package but :mod:`upgradeplan.errors`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from upgradeplan.errors import BadInput

# control characters, and the two Unicode line and paragraph separators YAML breaks lines on
_REFUSED = ("Cc", "Zl", "Zp")


def control_char(value: Any) -> str | None:
    """The first refused character in ``value`` (strings inside lists and mappings too)."""
    if isinstance(value, str):
        return next((c for c in value if unicodedata.category(c) in _REFUSED), None)
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = control_char(key) or control_char(item)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = control_char(item)
            if found:
                return found
    return None


def refuse_control(value: Any, what: str, *, location: str = "") -> None:
    """:class:`BadInput` (exit 2) when ``value`` holds a control character; ``what`` names
    the value (a fact key and where it was read), never echoing the character itself."""
    found = control_char(value)
    if found is None:
        return
    shown = ascii(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise BadInput(
        f"{what} holds the control character U+{ord(found):04X} ({shown}); a value written "
        "into a patch, a command or a runbook cannot hold one",
        location=location,
        hint="fix the value where it is written (no Kubernetes name holds a control character)",
    )


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(value: object) -> str:
    """``str(value)`` with every refused character written as its escape (``\\n``,
    ``\\x00``, ``\\u2028``), so a value read from a file name or an object cannot start a
    new line (a heading, a list item, a workflow command) wherever it is printed."""
    text = str(value)
    if not any(unicodedata.category(c) in _REFUSED for c in text):
        return text
    out = []
    for c in text:
        if unicodedata.category(c) not in _REFUSED:
            out.append(c)
        elif c in _NAMED:
            out.append(_NAMED[c])
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
    return "".join(out)


def _longest_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def code(value: object) -> str:
    """``value`` as one Markdown code span, whatever backticks it holds (CommonMark: the
    delimiter is a backtick run of a length that does not occur inside); a line break or
    other control character is shown as its escape (:func:`visible`), so the span stays one
    span on one line."""
    text = visible(value)
    ticks = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(lines: list[str] | tuple[str, ...]) -> str:
    """A code fence longer than any backtick run in ``lines`` (at least three)."""
    return "`" * max(3, _longest_run("\n".join(lines)) + 1)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|])")


def md_text(value: object) -> str:
    """``value`` as Markdown text that renders as itself: HTML escaped (``<``, ``>``,
    ``&``), the characters that start emphasis, code, links or table cells escaped, and
    control characters shown as their escapes (:func:`visible`)."""
    import html

    return _MD_SPECIAL.sub(r"\\\1", html.escape(visible(value), quote=False))


__all__ = ["code", "control_char", "fence", "md_text", "refuse_control", "visible"]
