"""Every YAML the tool reads, through PyYAML's C loader, bounded, with line numbers.

libyaml (``yaml.CSafeLoader``) composes the nodes; one walk builds the safe loader's data
(YAML 1.1: ``0755`` is octal): :func:`load_all` plain (snapshots, kubeconfigs),
:func:`load_lines` with the line of each key and item (the knowledge, accept files),
:func:`load_paths` with, per path, lines, the scalar as written and its style (GitOps).
Bounded (docs/state-format.md): :data:`MAX_BYTES`, :data:`MAX_DEPTH` levels, :data:`MAX_ALIASED`
nodes through aliases (an alias bomb is refused, not grown); a key written twice is refused,
as kustomize refuses it. Each refusal is a :class:`YamlError` with its line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import yaml

MAX_BYTES = 64 * 1024 * 1024  # characters of one file's text
MAX_DEPTH = 100  # levels of nested mappings and sequences
MAX_ALIASED = 100_000  # nodes built through aliases in one file
_DEEP = f"nested deeper than {MAX_DEPTH} levels (the limit for a YAML file)"

_STR = "tag:yaml.org,2002:str"
_VALUE = "tag:yaml.org,2002:value"
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MERGE = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BOOLS: dict[str, bool] = yaml.constructor.SafeConstructor.bool_values
_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode

PathKey = tuple[Any, ...]
# a document read with its lines: data, value lines, key lines, scalars as written, styles
Located = tuple[Any, dict[PathKey, int], dict[PathKey, int], dict[PathKey, str], dict[PathKey, str]]


class YamlError(Exception):
    """Text that is not YAML, or past a limit; ``line`` is 1-based (0 when unknown);
    ``problem``: a syntax error's message without its "YAML syntax error: " prefix."""

    def __init__(self, message: str, line: int = 0, problem: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.problem = problem or message
        # past a limit or a key written twice (not a syntax error): every reader refuses it
        self.refused = not problem
        self.hint = "docs/state-format.md gives the limits of a YAML file" if self.refused else ""


class DuplicateKey(YamlError):
    """A key written twice in one mapping (YAML would silently keep the last)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message, line)
        self.hint = "keep one of the two (kustomize refuses a key written twice too)"


class LineDict(dict[Any, Any]):
    """A mapping read from YAML: ``line`` of the mapping, ``lines[key]`` of each key."""

    __slots__ = ("line", "lines")

    def __init__(self) -> None:
        super().__init__()
        self.line = 0
        self.lines: dict[Any, int] = {}


class LineList(list[Any]):
    """A sequence read from YAML: ``line`` of the sequence, ``lines[i]`` of each item."""

    __slots__ = ("line", "lines")

    def __init__(self, items: Sequence[Any] = ()) -> None:
        super().__init__(items)
        self.line = 0
        self.lines: list[int] = []


def line_of(doc: Any, path: Sequence[Any]) -> int:
    """The line of ``path`` inside ``doc`` (the line of its last key or item), or of the
    deepest part of it that exists (1 for the root)."""
    line = getattr(doc, "line", 1) or 1
    node = doc
    for step in path:
        if isinstance(node, LineDict) and step in node:
            line = node.lines.get(step, line)
            node = node[step]
        elif isinstance(node, LineList) and isinstance(step, int) and 0 <= step < len(node):
            line = node.lines[step] if step < len(node.lines) else line
            node = node[step]
        else:
            break
    return line


@functools.lru_cache(maxsize=1 << 16)  # mostly keys, which repeat
def _resolve(kind: Any, value: Any, implicit: Any) -> Any:
    tag = _RESOLVER.resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
    # a plain ``=`` is YAML 1.1's "value" key, which no safe constructor builds; Go's YAML
    # (kubectl, Helm) reads it as the string "=" (prometheus-operator's CRDs write one)
    return _STR if tag == _VALUE else tag


_RESOLVER = yaml.resolver.Resolver()
_NO_PATHS: dict[Any, Any] = {}


class _Loader(yaml.CSafeLoader):
    """The C safe loader with its tags remembered: the safe loader has no path resolvers, so
    a node's tag depends only on its kind, text and implicitness."""

    descend_resolver = _NO_PATHS.get  # type: ignore[assignment]  # a no-op, without a call
    ascend_resolver = tuple  # type: ignore[assignment]

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.resolve = _resolve  # type: ignore[method-assign]


class _Reanchoring(yaml.SafeLoader):
    """The pure-Python composer, letting an anchor be defined again (YAML 1.2 allows it;
    libyaml refuses it)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


class _Builder:
    """Data from composed nodes; with ``lines`` LineDict / LineList. ``aliases``: the text
    may hold aliases, so a node built again is counted against :data:`MAX_ALIASED` and a
    node inside itself is refused. ``same``: equal strings made one object. ``lenient``: an
    unknown tag or a bad value reads as the text (GitOps). ``duplicates``: a list to keep
    keys written twice in, not raised."""

    def __init__(self, *, aliases: bool, lines: bool = False, dates: bool = True, **how: Any):
        self.aliases, self.lines, self.dates = aliases, lines, dates
        self.lenient: bool = how.get("lenient", False)
        self.same: Any = how.get("same")
        self.duplicates: list[DuplicateKey] | None = how.get("duplicates")
        self.offset: int = how.get("offset", 1)  # paths mode: the line of the text's first
        self.data: Any = None
        self.constructor: Any = None
        self.seen: set[int] = set()
        self.active: set[int] = set()
        self.inside = 0  # > 0 while building through an alias
        self.budget = MAX_ALIASED
        # paths mode (load_paths): per path, the value's line, its key's line, text, style
        self.at: dict[PathKey, int] = {}
        self.key_at: dict[PathKey, int] = {}
        self.raw: dict[PathKey, str] = {}
        self.styles: dict[PathKey, str] = {}

    def scalar(self, node: Any) -> Any:
        tag, value = node.tag, node.value
        if tag == _STR:
            return value if self.same is None else self.same(value, value)
        if tag == _NULL:
            return None
        if tag == _BOOL and value.lower() in _BOOLS:
            return _BOOLS[value.lower()]
        # decimal only: "0755" is octal, "1_000" and "+1" are ints YAML 1.1 reads its own way
        if tag == _INT and value.isascii() and value.isdigit() and value[:1] != "0":
            return int(value)
        if tag == _TIMESTAMP and not self.dates:
            return value
        if self.constructor is None:
            self.constructor = yaml.constructor.SafeConstructor()
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError:
            if self.lenient:
                return value
            raise

    def enter(self, node: Any, depth: int) -> bool:
        """Account for a collection node; True when it is built again (through an alias)."""
        if depth > MAX_DEPTH:
            raise YamlError(_DEEP, _at(node))
        if not self.aliases:
            return False
        key = id(node)
        if key in self.active:
            raise YamlError("an alias inside the node it names", _at(node))
        self.active.add(key)
        again = key in self.seen
        self.seen.add(key)
        self.inside += again
        if self.inside:
            self.budget -= len(node.value) + 1
            if self.budget < 0:
                raise YamlError(
                    f"aliases expand to more than {MAX_ALIASED} nodes (the limit for a "
                    "YAML file: an alias bomb?)",
                    _at(node),
                )
        return again

    def leave(self, node: Any, again: bool) -> None:
        if self.aliases:
            self.active.discard(id(node))
            self.inside -= again

    def key(self, node: Any, out: Any) -> Any:
        """The key of ``node``, refused (or recorded) when ``out`` has it already."""
        if node.__class__ is not _SCALAR:
            raise YamlError("a mapping or sequence used as a key", _at(node))
        key = self.scalar(node)  # a scalar's value is hashable (str, int, bytes, date…)
        if key in out:
            twice = DuplicateKey(f"key {key!r} is written twice in one mapping", _at(node))
            if self.duplicates is None:
                raise twice
            self.duplicates.append(twice)
        return key

    def sources(self, merges: list[Any]) -> Iterator[Any]:
        """The mappings the ``<<`` values of a mapping name, in their order."""
        for key, value in merges:
            for source in value.value if value.__class__ is _SEQUENCE else [value]:
                if source.__class__ is not _MAPPING:
                    raise YamlError("a merge key (<<) of something not a mapping", _at(key))
                yield source

    def build(self, node: Any, depth: int, path: PathKey | None = None) -> Any:
        """The data of ``node``; with ``path`` (paths mode) its line, text and style kept."""
        cls = node.__class__
        if path is not None:
            self.at[path] = node.start_mark.line + self.offset
            if cls is _SCALAR:
                self.raw[path] = node.value
                if node.style:
                    self.styles[path] = node.style
        # !!set, !!omap…: PyYAML's own (in paths mode, as plain collections, as Flux reads them)
        if cls is _SCALAR or (node.tag not in _PLAIN_TAGS and path is None):
            return self.scalar(node)
        again = self.enter(node, depth)
        out: Any
        if cls is _MAPPING:
            out = self.mapping(node, depth, path)
        elif path is not None:
            out = [self.build(child, depth + 1, (*path, i)) for i, child in enumerate(node.value)]
        else:
            out = [self.build(child, depth + 1) for child in node.value]
            if self.lines:
                out = LineList(out)
                out.line = node.start_mark.line + 1
                out.lines = [child.start_mark.line + 1 for child in node.value]
        self.leave(node, again)
        return out

    def mapping(self, node: Any, depth: int, path: PathKey | None, skip: Any = ()) -> Any:
        """``skip``: keys not built (a merged source's keys the mapping has itself)."""
        lines, same = self.lines, self.same
        out: Any = LineDict() if lines else {}
        at: dict[Any, int] | None = out.lines if lines else None
        merges: list[Any] = []
        for key_node, value_node in node.value:
            tag = key_node.tag
            if tag == _STR and key_node.__class__ is _SCALAR and key_node.value not in out:
                key = key_node.value if same is None else same(key_node.value, key_node.value)
            elif tag == _MERGE and key_node.__class__ is _SCALAR:
                merges.append((key_node, value_node))
                continue
            else:
                key = self.key(key_node, out)
            if key in skip:
                continue
            if path is not None:
                here = (*path, key)
                self.key_at[here] = key_node.start_mark.line + self.offset
                out[key] = self.build(value_node, depth + 1, here)
            elif value_node.tag == _STR and value_node.__class__ is _SCALAR:  # most values
                out[key] = (
                    value_node.value if same is None else same(value_node.value, value_node.value)
                )
            else:
                out[key] = self.build(value_node, depth + 1)
            if at is not None:
                at[key] = key_node.start_mark.line + 1
        if merges:  # as the safe loader: the merged keys first, the earlier source winning
            own, out = out, LineDict() if lines else {}
            for source in reversed(list(self.sources(merges))):
                again = self.enter(source, depth)
                merged = self.mapping(source, depth, path, own if path is not None else ())
                self.leave(source, again)
                out.update(merged)
                if lines:
                    out.lines.update(merged.lines)
            out.update(own)
            if lines:
                out.lines.update(own.lines)
        if lines:
            out.line = node.start_mark.line + 1
        return out


def _at(node: Any) -> int:
    return int(node.start_mark.line) + 1


def _nodes(text: str, build: Callable[[Any], Any] | None = None) -> list[Any]:
    """The composed documents of ``text`` (aliases are the very node they name), each given
    to ``build`` as soon as it is composed: a long stream's nodes are not all kept at once."""
    if len(text) > MAX_BYTES:
        raise YamlError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB (the limit for a YAML file)")
    for loader_class in (_Loader, _Reanchoring):
        loader = loader_class(text)
        try:
            out = []
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    out.append(node if build is None else build(node))
            return out
        except yaml.composer.ComposerError as exc:
            if loader_class is _Reanchoring or "duplicate anchor" not in str(exc):
                raise _error(exc) from None
        except yaml.YAMLError as exc:
            raise _error(exc) from None
        except RecursionError:  # the pure-Python composer has no limit of its own
            raise YamlError(_DEEP) from None
        finally:
            loader.dispose()
    raise AssertionError("unreachable")


def _error(exc: yaml.YAMLError) -> YamlError:
    if isinstance(exc, yaml.reader.ReaderError):  # a byte YAML refuses: one line, not two
        char = ord(exc.character) if isinstance(exc.character, str) else exc.character
        said = f"{exc.reason} (U+{char:04X} at character {exc.position + 1})"
        return YamlError(f"YAML syntax error: {said}", 0, said)
    if not isinstance(exc, yaml.MarkedYAMLError):
        said = " ".join(str(exc).split())  # one line
        return YamlError(f"YAML syntax error: {said}", 0, said)
    mark = exc.problem_mark or exc.context_mark
    what = ": ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
    start = exc.context_mark
    if start is not None and mark is not None and start.line != mark.line:
        what += f" (it started on line {start.line + 1})"
    line = mark.line + 1 if mark is not None else 0
    if "maximum nesting depth" in what:  # libyaml's own limit (1,000 levels)
        return YamlError(_DEEP, line)
    return YamlError(f"YAML syntax error: {what}", line, what)


def _run(text: str, node: Any, path: PathKey | None = None, **how: Any) -> _Builder:
    """``node`` built (``.data``); ``how``: the :class:`_Builder`'s options."""
    builder = _Builder(aliases="*" in text and "&" in text, **how)  # may hold an alias
    try:
        builder.data = builder.build(node, 0, path)
    except yaml.MarkedYAMLError as exc:  # a bad value of a tag (!!int x, !!binary …)
        raise _error(exc) from None
    return builder


def load_all(text: str) -> list[Any]:
    """Every document of ``text`` as plain data (what ``yaml.load_all`` with the safe loader
    gives, aliases copied). Raises :class:`YamlError`."""
    return _nodes(text, lambda node: _run(text, node).data)


def load_one(text: str) -> Any:
    """The one document of ``text`` as plain data (None when empty)."""
    docs = load_all(text)
    if len(docs) > 1:
        raise YamlError("expected one YAML document, found more (a second ---)")
    return docs[0] if docs else None


def load_lines(
    text: str,
    *,
    dates: bool = False,
    strings: dict[str, str] | None = None,
    duplicates: list[DuplicateKey] | None = None,
) -> Any:
    """The one document of ``text`` (None when empty) as :class:`LineDict` / :class:`LineList`;
    dates stay text (``2026-09-20`` is a date in the knowledge's format, not a ``date``)
    unless ``dates``. ``strings``: equal strings share one object through it (pass the same
    dict for every file of a load). ``duplicates``: keys written twice are added to it (the
    last kept) instead of raised, so lint reports every one and the file's other problems."""
    nodes = _nodes(text)
    if len(nodes) > 1:
        raise YamlError("expected one YAML document, found more (a second ---)", _at(nodes[1]))
    if not nodes:
        return None
    same = ({} if strings is None else strings).setdefault
    return _run(text, nodes[0], lines=True, dates=dates, same=same, duplicates=duplicates).data


def load_paths(text: str, offset: int = 0) -> list[Located]:
    """Every document of ``text`` as ``(data, lines, key_lines, raw, styles)``: per path of
    keys and indexes, the line of the value (its first line is ``offset + 1``), of its key,
    the scalar as written (``4.10`` stays ``"4.10"``) and its style (``|``, ``"``…)."""

    def located(node: Any) -> Located:
        b = _run(text, node, (), lenient=True, offset=offset + 1)
        return b.data, b.at, b.key_at, b.raw, b.styles

    return _nodes(text, located)
