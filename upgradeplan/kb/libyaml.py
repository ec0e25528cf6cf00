"""YAML with line numbers through libyaml: any text the knowledge parser of
:mod:`upgradeplan.kb.yamlsubset` does not read, and every syntax error.

PyYAML's C parser composes the nodes through the one fast-resolving C loader
(:class:`upgradeplan.readers.yamldata.FastLoader`: the safe loader's tags, looked up in a
C-level cache); one walk over the nodes builds :class:`LineDict` / :class:`LineList`.
"""

from __future__ import annotations

from typing import Any

from upgradeplan.readers.yamldata import FastLoader  # first: it imports yaml quickly

# isort: split
import yaml

from upgradeplan.kb.yamlio import LineDict, LineList, YamlSyntaxError

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode


class _Builder:
    """Builds LineDict/LineList/scalars from the C composer's nodes in one walk.

    Strings, dates and plain decimal integers are built directly; other scalars (null,
    booleans, ``0755``, ``1_000``, floats, ``!!binary``…) by the safe constructor, which also
    raises its errors (an unknown tag). Aliases are built again where they are used. A string
    equal to one already in ``strings`` is that one (the parser makes a new object for every
    scalar; the knowledge repeats the same words thousands of times).
    """

    def __init__(self, loader: FastLoader, strings: dict[str, str]) -> None:
        self.loader = loader
        self.same = strings.setdefault
        self.duplicate_keys: list[tuple[Any, int]] = []

    def build(self, node: yaml.Node) -> Any:
        cls = node.__class__
        if cls is _SCALAR:
            tag = node.tag
            value = node.value
            if tag == _STR:
                return self.same(value, value)
            # decimal digits only: "0755" is octal to YAML 1.1 and "٣" no YAML int at all
            if tag == _INT and value.isascii() and value.isdigit() and value[:1] != "0":
                return int(value)
            if tag == _TIMESTAMP:
                return value  # dates stay text
            return self.loader.construct_object(node, deep=True)
        if cls is _MAPPING:
            return self.mapping(node)  # type: ignore[arg-type]
        if cls is _SEQUENCE:
            out = LineList([self.build(child) for child in node.value])
            out.line = node.start_mark.line + 1
            out.lines = [child.start_mark.line + 1 for child in node.value]
            return out
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node: yaml.MappingNode) -> LineDict:
        out = LineDict()
        out.line = node.start_mark.line + 1
        lines = out.lines
        for key_node, value_node in node.value:
            if key_node.__class__ is _SCALAR and key_node.tag == _STR:
                key = self.same(key_node.value, key_node.value)
            elif key_node.tag == _MERGE:
                # `<<: *anchor` merge keys: let PyYAML flatten them, then build again
                self.loader.flatten_mapping(node)
                return self.mapping(node)
            else:
                key = self.build(key_node)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "found an unhashable key",
                        key_node.start_mark,
                    ) from None
            line = key_node.start_mark.line + 1
            if key in out:
                self.duplicate_keys.append((key, line))
            out[key] = self.build(value_node)
            lines[key] = line
        return out


def load(text: str, strings: dict[str, str]) -> tuple[Any, list[tuple[Any, int]]]:
    """What :func:`upgradeplan.kb.yamllines.load_text_with_duplicates` gives, through libyaml."""

    loader = FastLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, []
        builder = _Builder(loader, strings)
        return builder.build(node), builder.duplicate_keys
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {_what(exc)}", _line(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {exc}", 0) from None
    except RecursionError:
        what = "nested too deeply (or an alias inside the node it names)"
        raise YamlSyntaxError(f"YAML syntax error: {what}", 0) from None
    finally:
        loader.dispose()


def _line(exc: yaml.MarkedYAMLError) -> int:
    mark = exc.problem_mark or exc.context_mark
    return mark.line + 1 if mark is not None else 0


def _what(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    what = ": ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
    start = exc.context_mark
    if start is not None and mark is not None and start.line != mark.line:
        what += f" (it started on line {start.line + 1})"
    return what
