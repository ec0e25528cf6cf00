"""A state's snapshot document as indented JSON, its facts written without building it.

``scan -o json`` of a large cluster prints ten thousand facts, most of them a plain value
read from an object: ``{"value": …, "source": "cluster prod: HelmRelease ns/name …",
"from": {"kind": "object", "origin": "cluster prod", "detail": "HelmRelease ns/name …"}}``.
Building that dict for each fact (:func:`upgradeplan.readers.snapshot.fact_entry`) and then
walking it again to write it cost about a sixth of such a scan. :class:`StateJSON` writes
such a fact's text at once, and any other fact through its entry as the snapshot document
has it; the text is the same as :func:`upgradeplan.render.jsontext.dumps` of
:func:`upgradeplan.readers.snapshot.to_document` (``tests/test_render_statejson.py``).
"""

from __future__ import annotations

from dataclasses import replace

from upgradeplan.model import State
from upgradeplan.readers.snapshot import fact_entry, to_document
from upgradeplan.render.jsontext import Prewritten, escape, scalar, write

_INDENT = "  "
_SCALARS = (str, int, bool, type(None))  # values written by jsontext.scalar


class StateJSON(Prewritten):
    """``to_document(state)``, written as indented JSON wherever it sits in a document."""

    def __init__(self, state: State) -> None:
        self.state = state

    def write(self, out: list[str], newline: str) -> None:
        doc = to_document(replace(self.state, facts={}))
        doc["facts"] = _Facts(self.state)
        write(doc, out, newline)


class _Facts(Prewritten):
    def __init__(self, state: State) -> None:
        self.state = state

    def write(self, out: list[str], newline: str) -> None:
        facts = self.state.facts
        if not facts:
            out.append("{}")
            return
        one = newline + _INDENT  # a fact's key
        two = one + _INDENT  # its entry's keys
        three = two + _INDENT  # the keys of its 'from'
        opened = f': {{{two}"value": '
        source_at = f",{two}" + '"source": '
        from_at = f",{two}" + '"from": {' + three + '"kind": "object",' + three + '"origin": '
        detail_at = f",{three}" + '"detail": '
        closed = f"{two}}}{one}}}"
        separator = "{" + one
        # An object source's text is "<origin>: <detail>"; JSON escapes character by
        # character, so its escaped text is the escaped "<origin>: " (without its closing
        # quote) and the escaped detail (without its opening one): each detail is escaped
        # once, and each origin once for all its facts.
        origins: dict[str, tuple[str, str]] = {}
        for key in sorted(facts):
            fact = facts[key]
            value, source = fact.value, fact.source
            if (
                type(value) in _SCALARS
                and source.kind == "object"
                and source.origin
                and source.detail
                and source.obj is None
                and not (source.path or source.file or source.line or source.subject)
                and source.behind is None
            ):
                origin = origins.get(source.origin)
                if origin is None:
                    origin = origins[source.origin] = (
                        escape(source.origin + ": ")[:-1],
                        escape(source.origin),
                    )
                detail = escape(source.detail)
                out.append(
                    f"{separator}{escape(key)}{opened}{scalar(value)}{source_at}{origin[0]}"
                    f"{detail[1:]}{from_at}{origin[1]}{detail_at}{detail}{closed}"
                )
            else:
                out.append(separator + escape(key) + ": ")
                write(fact_entry(fact), out, one)
            separator = "," + one
        out.append(newline + "}")
