"""Frozen record classes, cheap to build at import: ``@frozen`` for ``@dataclass(frozen=True)``.

``dataclasses.dataclass`` compiles six to ten functions from source for every frozen class
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``, the
order methods) and asks :mod:`inspect` for a signature when the class has no docstring; for
the few dozen classes a command imports that was the largest part of its start-up. Here only
``__init__`` is compiled (it must have the fields' signature, and it is the hot one: versions,
facts and evidence are built by the thousand), and only when the first instance is made
(:func:`init_of`; the console script keeps the compiled code between runs,
:mod:`upgradeplan.compiled`); the other methods are closures over the field names, with the
same results as the dataclass ones:

- ``__init__`` takes the fields in order, with their defaults and default factories, sets
  them as a frozen dataclass does (``object.__setattr__``; a mutable record's by plain
  assignment) and calls ``__post_init__`` when the class has one;
- ``__eq__`` compares the tuple of compared fields when both are of the same class (else
  ``NotImplemented``), ``__hash__`` hashes that tuple (fields with ``hash=False`` left out),
  the order methods (``order=True``) compare it;
- ``__repr__`` is ``Name(field=value, ...)`` over the fields with ``repr=True``;
- assigning or deleting any attribute raises :class:`dataclasses.FrozenInstanceError`;
- ``__dataclass_fields__`` holds the :class:`dataclasses.Field` of every field, so
  :func:`dataclasses.fields`, :func:`dataclasses.replace`, :func:`dataclasses.asdict` and
  :func:`dataclasses.is_dataclass` work on them; ``__match_args__`` is set.

:mod:`dataclasses` itself is not imported until something asks for those ``Field`` objects
(``__dataclass_fields__`` makes them on first use) or an error of its is raised: it imports
:mod:`inspect`, and with it ``ast``, ``dis`` and ``tokenize``, which cost a command that
needs none of them (the offline ``check``) about a tenth of its time. So fields are declared
with this module's :func:`field` (the same arguments as :func:`dataclasses.field`; a
``dataclasses.field`` is taken too), and :func:`replace` is ``dataclasses.replace`` for these
classes.

``@record`` is the same for ``@dataclass`` (mutable: no ``__setattr__``/``__delattr__`` of
its own, ``__hash__`` None). ``slots=True`` makes the class again with ``__slots__`` for the
fields and the frozen dataclass's ``__getstate__``/``__setstate__`` (the values as a list),
as ``@dataclass(frozen=True, slots=True)`` does.

What is not supported raises :class:`TypeError` when the class is built: inheriting from a
dataclass (or, with ``slots``, from a class with slots), ``ClassVar``/``InitVar``/``KW_ONLY``
annotations, ``kw_only`` fields, methods the decorator would have to overwrite. Methods the
class defines itself are kept, as the dataclass decorator keeps them. ``tests/test_frozen.py``
holds every class built with it to what ``@dataclass(frozen=True)`` gives for the same fields.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from operator import attrgetter
from reprlib import recursive_repr
from typing import TYPE_CHECKING, Any, TypeVar, dataclass_transform, overload

from upgradeplan import compiled

if TYPE_CHECKING:
    from dataclasses import Field as DataclassField

_T = TypeVar("_T")
_NOT_SUPPORTED = ("ClassVar", "InitVar", "KW_ONLY")


class _Missing:
    """No default (``dataclasses.MISSING`` where real fields are made)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FieldSpec:
    """One field of a record class: what :func:`dataclasses.field` records, and its name and
    type once the class is built."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kw_only",
        "metadata",
        "name",
        "repr",
        "type",
    )

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        hash: bool | None,
        compare: bool,
        metadata: Mapping[Any, Any] | None,
        kw_only: Any,
    ) -> None:
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.metadata, self.kw_only = metadata, kw_only
        self.name: str = ""
        self.type: Any = None


@overload
def field(
    *,
    default: _T,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
) -> _T: ...


@overload
def field(
    *,
    default_factory: Callable[[], _T],
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
) -> _T: ...


@overload
def field(
    *,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
) -> Any: ...


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
) -> Any:
    """A field of a ``@frozen``/``@record`` class, as :func:`dataclasses.field` declares one."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return FieldSpec(default, default_factory, init, repr, hash, compare, metadata, MISSING)


def replace(obj: _T, /, **changes: Any) -> _T:
    """:func:`dataclasses.replace` (for a ``@frozen``/``@record`` instance without importing
    :mod:`dataclasses`): a new object with the fields of ``obj`` and ``changes``."""
    specs: dict[str, FieldSpec] | None = type(obj).__dict__.get("__record_fields__")
    if specs is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for name, f in specs.items():
        if not f.init:
            if name in changes:
                raise ValueError(
                    f"field {name} is declared with init=False, it cannot be specified with "
                    "replace()"
                )
        elif name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)


def _frozen_instance_error(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


class _DataclassFields:
    """A record class's ``__dataclass_fields__``: its fields as :class:`dataclasses.Field`
    objects, made (and :mod:`dataclasses` imported) when first asked for."""

    def __init__(self, specs: dict[str, FieldSpec]) -> None:
        self._specs = specs
        self._made: dict[str, DataclassField[Any]] | None = None

    def __get__(self, obj: object, owner: type | None = None) -> dict[str, DataclassField[Any]]:
        if self._made is None:
            import dataclasses

            made: dict[str, DataclassField[Any]] = {}
            for name, s in self._specs.items():
                # the arguments dataclasses.field() passes (MISSING where none is given)
                args: list[Any] = [
                    dataclasses.MISSING if s.default is MISSING else s.default,
                    dataclasses.MISSING if s.default_factory is MISSING else s.default_factory,
                    s.init,
                    s.repr,
                    s.hash,
                    s.compare,
                    s.metadata,
                    dataclasses.MISSING,
                ]
                f: DataclassField[Any] = dataclasses.Field(*args)
                f.name, f.type = name, s.type
                mark = getattr(dataclasses, "_FIELD", None)  # what dataclasses.fields() picks
                if mark is not None:
                    f._field_type = mark  # type: ignore[attr-defined]
                made[name] = f
            self._made = made
        return self._made


def _dataclass_field(value: object) -> bool:
    """Whether ``value`` is a :class:`dataclasses.Field` (without importing the module: none
    can exist before it is imported)."""
    cls = type(value)
    return cls.__name__ == "Field" and cls.__module__ == "dataclasses"


def _spec_of(f: Any) -> FieldSpec:
    """A :class:`dataclasses.Field` declared on a record class, as a FieldSpec."""
    import dataclasses

    def mine(value: Any) -> Any:
        return MISSING if value is dataclasses.MISSING else value

    return FieldSpec(
        mine(f.default),
        mine(f.default_factory),
        f.init,
        f.repr,
        f.hash,
        f.compare,
        f.metadata or None,
        f.kw_only,
    )


@overload
def frozen(cls: type[_T], /) -> type[_T]: ...


@overload
def frozen(*, order: bool = False, slots: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen(cls: type[_T] | None = None, /, *, order: bool = False, slots: bool = False) -> Any:
    """Make ``cls`` a frozen record class (``order=True``: its instances sort by the fields;
    ``slots=True``: a new class with ``__slots__`` for the fields, as the dataclass one)."""

    def wrap(c: type[_T]) -> type[_T]:
        return _build(c, order, slots)

    return wrap if cls is None else wrap(cls)


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(*, order: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_T] | None = None, /, *, order: bool = False) -> Any:
    """Make ``cls`` a mutable record class, as ``@dataclass`` does: the same ``__init__``,
    ``__repr__`` and ``__eq__`` as :func:`frozen`, fields assignable, ``__hash__`` None."""

    def wrap(c: type[_T]) -> type[_T]:
        return _build(c, order, frozen=False)

    return wrap if cls is None else wrap(cls)


def _build(cls: type[_T], order: bool, slots: bool = False, frozen: bool = True) -> type[_T]:
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: @frozen does not inherit dataclass fields")
    fields = _fields(cls)
    names = tuple(fields)
    if slots:
        cls = _slotted(cls, names)
    compared, hashed, shown = [], [], []
    for n, f in fields.items():
        if f.compare:
            compared.append(n)
        if f.compare if f.hash is None else f.hash:
            hashed.append(n)
        if f.repr:
            shown.append(n)
    body = cls.__dict__
    methods: dict[str, Any] = {}  # set below unless the class body defines them
    methods["__init__"] = _first_init(cls, fields)
    methods["__repr__"] = _repr(tuple(shown))
    key = _key(tuple(compared))
    methods["__eq__"] = _eq(key)
    methods["__match_args__"] = names
    for name, value in methods.items():
        if name not in body:
            _put(cls, name, value)
    if "__hash__" not in body or (body["__hash__"] is None and "__eq__" in body):
        _put(cls, "__hash__", _hash(_key(tuple(hashed))) if frozen else None)
    forced: dict[str, Callable[..., Any]] = {}
    if frozen:
        forced["__setattr__"] = _frozen_setattr(cls, names)
        forced["__delattr__"] = _frozen_delattr(cls, names)
    if order:
        forced.update((f"__{op}__", _compare(key, op)) for op in ("lt", "le", "gt", "ge"))
    for name, method in forced.items():
        if name in body:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
        _put(cls, name, method)
    _put(cls, "__record_fields__", fields)
    _put(cls, "__dataclass_fields__", _DataclassFields(fields))
    return cls


def _slotted(cls: type[_T], names: tuple[str, ...]) -> type[_T]:
    """``cls`` made again with ``__slots__`` for the fields (what ``slots=True`` of a dataclass
    does), with the frozen dataclass's ``__getstate__``/``__setstate__``: the fields' values
    as a list, set back with ``object.__setattr__``."""
    body = dict(cls.__dict__)
    if "__slots__" in body:
        raise TypeError(f"{cls.__qualname__} already specifies __slots__")
    if any(hasattr(base, "__slots__") for base in cls.__mro__[1:-1]):
        raise TypeError(f"{cls.__qualname__}: @frozen(slots=True) does not inherit slots")
    for name in (*names, "__dict__", "__weakref__"):
        body.pop(name, None)  # a field's default stays in its Field (and __init__)
    body["__slots__"] = names
    meta: Any = type(cls)
    new: type[_T] = meta(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    if "__getstate__" not in body:
        _put(new, "__getstate__", lambda self: [getattr(self, n) for n in names])
    if "__setstate__" not in body:

        def __setstate__(self: Any, state: list[Any]) -> None:
            for name, value in zip(names, state, strict=False):
                object.__setattr__(self, name, value)

        _put(new, "__setstate__", __setstate__)
    return new


def _fields(cls: type) -> dict[str, FieldSpec]:
    """The fields in definition order, as dataclasses makes them (name and type set)."""
    out: dict[str, FieldSpec] = {}
    body = cls.__dict__
    for name, annotation in (body.get("__annotations__") or {}).items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if ("Var" in text or "KW_ONLY" in text) and (  # the cheap test first
            text.split("[", 1)[0].rpartition(".")[2] in _NOT_SUPPORTED
        ):
            raise TypeError(f"{cls.__qualname__}.{name}: @frozen does not support {text}")
        default = body.get(name, MISSING)
        declared = isinstance(default, FieldSpec) or _dataclass_field(default)
        if declared:
            f = default if isinstance(default, FieldSpec) else _spec_of(default)
            if f.kw_only is True:
                raise TypeError(f"{cls.__qualname__}.{name}: @frozen does not support kw_only")
            if f.default is MISSING:  # the class attribute is the default, as dataclass does
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        else:  # what field(default=default) makes
            f = FieldSpec(default, MISSING, True, True, None, True, None, MISSING)
        if f.default is not MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        f.name = name
        f.type = annotation
        out[name] = f
    return out


def _set(cls: type, name: str, value: Any) -> None:
    """Set ``name`` on the class unless the class body defines it."""
    if name not in cls.__dict__:
        _put(cls, name, value)


def _put(cls: type, name: str, value: Any) -> None:
    setattr(cls, name, value)


def _first_init(cls: type, fields: dict[str, FieldSpec]) -> Callable[..., None]:
    """``__init__`` until the first instance is made: compiles the real one (:func:`init_of`),
    puts it on the class and calls it. A class never constructed (the knowledge classes when
    the knowledge comes from its cache: unpickling calls no ``__init__``) never compiles it."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init_of(cls)(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    _FIRST[cls] = (__init__, fields)
    return __init__


_FIRST: dict[type, tuple[Callable[..., None], dict[str, FieldSpec]]] = {}


def init_of(cls: type) -> Callable[..., None]:
    """The compiled ``__init__`` of a ``@frozen`` class (compiled now if it was not yet)."""
    first = _FIRST.get(cls)
    if first is None:
        init: Callable[..., None] = cls.__dict__["__init__"]
        return init
    stub, fields = first
    real = _init(cls, fields)  # two threads may both compile it: the same function
    if cls.__dict__.get("__init__") is stub:
        _put(cls, "__init__", real)
    _FIRST.pop(cls, None)
    return real


def _init(cls: type, fields: dict[str, FieldSpec]) -> Callable[..., None]:
    """``__init__`` compiled for the fields: the one method that must have their signature."""
    # A frozen class's fields (slots or not) are set with ``object.__setattr__``, as the
    # dataclass does; a mutable record's attributes are assigned, as the dataclass does.
    # (Writing them into ``self.__dict__`` instead built an instance in half the time, but a
    # filled ``__dict__``, which CPython 3.11 otherwise keeps as inline values, made every
    # later attribute read about five times slower.)
    scope: dict[str, Any] = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    params, lines = ["self"], []
    if "__slots__" not in cls.__dict__ and getattr(cls.__setattr__, "__module__", "") != __name__:
        store = "self.{} = {}".format  # @record
    else:
        store = "_set(self, {!r}, {})".format
    for i, (name, f) in enumerate(fields.items()):
        if not f.init:
            if f.default_factory is not MISSING:
                scope[f"_f{i}"] = f.default_factory
                lines.append(store(name, f"_f{i}()"))
            elif f.default is not MISSING:
                scope[f"_d{i}"] = f.default
                lines.append(store(name, f"_d{i}"))
            continue
        if f.default_factory is not MISSING:
            scope[f"_f{i}"] = f.default_factory
            params.append(f"{name}=_FACTORY")
            lines.append(store(name, f"_f{i}() if {name} is _FACTORY else {name}"))
        else:
            if f.default is not MISSING:
                scope[f"_d{i}"] = f.default
                params.append(f"{name}=_d{i}")
            else:
                params.append(name)
            lines.append(store(name, name))
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    body = "\n    ".join(lines or ["pass"])
    source = f"def __init__({', '.join(params)}) -> None:\n    {body}\n"
    exec(compiled.code(source, f"<frozen {cls.__module__}.{cls.__qualname__}>"), scope)
    fn: Callable[..., None] = scope["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    return fn


class _HasFactory:
    """The default of a parameter whose field has a default factory."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _HasFactory()


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of those attributes (always a tuple, as the dataclass methods build)."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    @recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _compare(key: Callable[[Any], tuple[Any, ...]], op: str) -> Callable[[Any, object], Any]:
    cmp = getattr(operator, op)

    def compare(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return cmp(key(self), key(other))
        return NotImplemented

    compare.__name__ = f"__{op}__"
    return compare


def _frozen_setattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    fields = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise _frozen_instance_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str], None]:
    fields = frozenset(names)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise _frozen_instance_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


__all__ = ["FieldSpec", "field", "frozen", "record", "replace"]
