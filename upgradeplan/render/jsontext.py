"""Indented JSON, the same text as ``json.dumps(indent=2, ensure_ascii=False)``, faster.

The standard library encodes with C code only without ``indent``; with it, every value goes
through a chain of Python generators (on a 5,000-HelmRelease scan, 2 MB of output, that was
about a tenth of the command's time). Here one recursive function appends pieces to a list,
strings are escaped by the same C function the standard encoder uses, and numbers are
written as the standard encoder writes them; a dict or list holding only scalars (most of
a scan's: each fact's ``from``) is written by the standard library's C encoder in one call,
with the newline and indent of its level as the item separator. The output is the same text
(``tests/test_render_jsontext.py`` compares the two on generated values).
"""

from __future__ import annotations

import json.encoder
from typing import Any

_escape = json.encoder.encode_basestring  # the C escaper where available, as json uses
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the C code
_INDENT = "  "


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _escape(key)
    if isinstance(key, float):  # bool and int before float, as json orders them
        return _escape(_float(key))
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return _escape(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def scalar(value: Any) -> str:
    """A string, number, boolean or None as json writes it (a NaN or infinity as ``json`` does)."""
    if type(value) is str:
        return _escape(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_SCALARS = frozenset((str, int, float, bool, type(None)))
_flat_encoders: dict[str, Any] = {}


def _flat(value: dict[Any, Any] | list[Any] | tuple[Any, ...], inner: str) -> str:
    """A dict or list of scalars (plain ``str``, ``int``, ``float``, ``bool``, None) by the C
    encoder, its items on their own lines at the indentation ``inner`` (a newline and its
    indent), brackets left out: ``json`` itself writes the same scalars and keys this way."""
    encode = _flat_encoders.get(inner)
    if encode is None:
        encode = _c_make_encoder(None, None, _escape, None, ": ", "," + inner, False, False, True)
        _flat_encoders[inner] = encode
    return "".join(encode(value, 0))[1:-1]


class Prewritten:
    """A value that writes its own text (the same as its plain data would give): a large
    part of a document written by a faster path that knows its shape."""

    def write(self, out: list[str], newline: str) -> None:
        """Append the value's text at the indentation ``newline``, as :func:`write` would."""
        raise NotImplementedError


def write(value: Any, out: list[str], newline: str) -> None:
    """Append ``value`` encoded at the indentation ``newline`` (a newline and its indent)."""
    _write(value, out, newline)


def _write(value: Any, out: list[str], newline: str) -> None:
    """Append ``value`` encoded at the indentation ``newline`` (a newline and its indent)."""
    if isinstance(value, str):
        out.append(_escape(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + _INDENT
        if _c_make_encoder is not None:
            for item in value.values():
                if type(item) not in _SCALARS:
                    break
            else:
                out.append("{" + inner + _flat(value, inner) + newline + "}")
                return
        separator = "{" + inner
        for key, item in value.items():
            text = _escape(key) if type(key) is str else _key(key)
            if isinstance(item, str):
                out.append(separator + text + ": " + _escape(item))
            else:
                out.append(separator + text + ": ")
                _write(item, out, inner)
            separator = "," + inner
        out.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + _INDENT
        if _c_make_encoder is not None:
            for item in value:
                if type(item) not in _SCALARS:
                    break
            else:
                out.append("[" + inner + _flat(value, inner) + newline + "]")
                return
        separator = "[" + inner
        for item in value:
            out.append(separator)
            if isinstance(item, str):
                out.append(_escape(item))
            else:
                _write(item, out, inner)
            separator = "," + inner
        out.append(newline + "]")
    elif isinstance(value, Prewritten):
        value.write(out, newline)
    else:
        out.append(scalar(value))


escape = _escape  # a string's JSON text, as json writes it (ensure_ascii=False)


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, the same text."""
    out: list[str] = []
    _write(value, out, "\n")
    return "".join(out)
