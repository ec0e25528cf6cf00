"""YAML documents as ``yaml.load_all(text, Loader=yaml.CSafeLoader)`` gives them, in half the time.

PyYAML's C parser composes the node tree, and its generic constructor then spends most of a
snapshot's reading time on Python calls per node. Here the C composer resolves tags through a
cache (a tag depends only on the node's kind, text and implicitness; the safe loader has no
path resolvers), and the common nodes are built by a direct walk: plain mappings with string
keys, sequences, strings, null, booleans and decimal integers. Anchors and aliases give the
same shared objects. Anything else (another tag, a merge key, a non-string key, a float, a
timestamp, a recursive alias, nesting deeper than the walk can go) sends the whole text to
the safe constructor itself, so the data and the errors are always exactly PyYAML's.
"""

from __future__ import annotations

import functools
from typing import Any

# isort: split
import yaml

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_BOOLS: dict[str, bool] = yaml.constructor.SafeConstructor.bool_values

_RESOLVER = yaml.resolver.Resolver()  # the safe loader's implicit tags
_NO_PATHS: dict[Any, Any] = {}


@functools.lru_cache(maxsize=1 << 16)  # mostly keys, which repeat
def _resolve(kind: Any, value: Any, implicit: Any) -> Any:
    """A node's tag as the safe loader resolves it: it depends on nothing but these."""
    return _RESOLVER.resolve(kind, value, implicit)  # type: ignore[no-untyped-call]


class _Unusual(Exception):
    """A node the direct walk does not build: the safe constructor builds the text."""


def _scalar(node: Any) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _NULL:
        return None
    value: str = node.value
    if tag == _BOOL:
        return _BOOLS[value.lower()]
    # decimal only: "0755" is octal, "1_000" and "+1" are ints PyYAML reads its own way
    if tag == _INT and value.isascii() and value.isdigit() and (value[0] != "0" or value == "0"):
        return int(value)
    raise _Unusual


def _build(node: Any) -> Any:
    """The data of a node tree without aliases."""
    cls = node.__class__
    if cls is yaml.ScalarNode:
        return _scalar(node)
    if cls is yaml.MappingNode and node.tag == _MAP:
        out: dict[str, Any] = {}
        for key, value in node.value:
            if key.__class__ is not yaml.ScalarNode or key.tag != _STR:
                raise _Unusual  # a merge key, a non-string or tagged key
            out[key.value] = _build(value)
        return out
    if cls is yaml.SequenceNode and node.tag == _SEQ:
        return [_build(child) for child in node.value]
    raise _Unusual


class _Shared:
    """The data of a node tree with aliases: an aliased node is the same node object, so
    it is built once and shared, as PyYAML's constructor shares it."""

    def __init__(self) -> None:
        self.done: dict[Any, Any] = {}  # node -> its data (keyed by the node: it stays alive)
        self.busy: set[Any] = set()

    def build(self, node: Any) -> Any:
        cls = node.__class__
        if cls is yaml.ScalarNode:
            return _scalar(node)
        if node in self.done:
            return self.done[node]
        if node in self.busy:
            raise _Unusual  # a recursive structure
        self.busy.add(node)
        out: Any
        if cls is yaml.MappingNode and node.tag == _MAP:
            out = {}
            for key, value in node.value:
                if key.__class__ is not yaml.ScalarNode or key.tag != _STR:
                    raise _Unusual
                out[key.value] = self.build(value)
        elif cls is yaml.SequenceNode and node.tag == _SEQ:
            out = [self.build(child) for child in node.value]
        else:
            raise _Unusual
        self.done[node] = out
        return out


class FastLoader(yaml.CSafeLoader):
    """The C loader, resolving tags as the safe loader does with less work per node.

    The C composer asks Python for every node's tag. The safe loader has no path resolvers,
    so descending and ascending are no-ops (builtins here, not Python calls), and a tag
    depends only on the node's kind, text and implicitness, so it is remembered in a C-level
    cache (most scalars are repeated keys): no Python call at all for a known one. The GitOps
    reader composes its files with it too.
    """

    descend_resolver = _NO_PATHS.get  # type: ignore[assignment]  # (parent, index): no-op
    ascend_resolver = tuple  # type: ignore[assignment]  # (): no-op

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.resolve = _resolve  # type: ignore[method-assign]


def load_all(text: str) -> list[Any]:
    """Every document of ``text``, equal (types included) to
    ``list(yaml.load_all(text, Loader=yaml.CSafeLoader))``, which raises the same errors."""
    loader = FastLoader(text)
    try:
        out: list[Any] = []
        while loader.check_node():
            build = _Shared().build if "&" in text else _build
            out.append(build(loader.get_node()))
        return out
    except (_Unusual, RecursionError):
        pass
    finally:
        loader.dispose()
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))
