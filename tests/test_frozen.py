"""upgradeplan.frozen: @frozen classes behave as @dataclass(frozen=True) ones of the same fields."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from inspect import signature
from typing import Any

import pytest

import upgradeplan
from upgradeplan.frozen import field as own_field
from upgradeplan.frozen import frozen, init_of, record, replace
from upgradeplan.model import Evidence, Fact, Location, Truth
from upgradeplan.provenance import flag


@frozen
class Rec:
    """A record of every kind of field."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    note: str = field(default="", compare=False)
    secret: str = field(default="", repr=False)
    salt: int = field(default=0, hash=False)


@dataclass(frozen=True)
class Twin:
    """The same fields as Rec, made by dataclasses."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    note: str = field(default="", compare=False)
    secret: str = field(default="", repr=False)
    salt: int = field(default=0, hash=False)


@frozen(order=True)
class Ordered:
    """Sorts by its fields."""

    file: str
    line: int = 0


@frozen
class Derived:
    """A field computed after __init__."""

    text: str
    length: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "length", len(self.text))


@frozen(slots=True)
class Slim:
    """A record with slots."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class SlimTwin:
    """The same fields as Slim, made by dataclasses."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = field(default=(), compare=False)


@record
class Box:
    """A mutable record."""

    name: str
    items: list[str] = field(default_factory=list)
    count: int = 0


@dataclass
class BoxTwin:
    """The same fields as Box, made by dataclasses."""

    name: str
    items: list[str] = field(default_factory=list)
    count: int = 0


def _hash(obj: object) -> int | str:
    try:
        return hash(obj)
    except TypeError as exc:
        return str(exc)


ARGS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 2, ("x", "y")), {}),
    (("a",), {"extra": {"k": "v"}, "note": "n", "secret": "s", "salt": 7}),
    ((), {"name": "b", "count": -1}),
]


@pytest.mark.parametrize(("args", "kwargs"), ARGS)
def test_instances_behave_as_the_dataclass_ones(args: tuple[Any, ...], kwargs: Any) -> None:
    ours, theirs = Rec(*args, **kwargs), Twin(*args, **kwargs)
    assert repr(ours) == repr(theirs).replace("Twin(", "Rec(", 1)
    assert _hash(ours) == _hash(theirs)  # the same value, or the same error (a dict field)
    assert ours == Rec(*args, **kwargs)
    assert not ours != Rec(*args, **kwargs)  # noqa: SIM202
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert [f.name for f in dataclasses.fields(ours)] == [
        f.name for f in dataclasses.fields(theirs)
    ]
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert copy.deepcopy(ours) == ours and copy.copy(ours) == ours


def test_the_signature_is_the_dataclass_one() -> None:
    def params(init: object) -> list[tuple[str, str]]:
        sig = inspect.signature(init)  # type: ignore[arg-type]
        return [(p.name, repr(p.default)) for p in sig.parameters.values()]

    assert params(init_of(Rec)) == params(Twin.__init__)
    assert Rec.__match_args__ == Twin.__match_args__


def test_equality_hash_and_order_follow_the_fields() -> None:
    assert Rec("a", note="x") == Rec("a", note="y")  # compare=False
    assert hash(Rec("a", salt=1)) == hash(Rec("a", salt=2))  # hash=False
    assert Rec("a", salt=1) != Rec("a", salt=2)
    assert Rec("a") != Twin("a")  # type: ignore[comparison-overlap]  # another class: never
    assert Rec("a").__eq__(Twin("a")) is NotImplemented
    assert sorted([Ordered("b", 1), Ordered("a", 2), Ordered("a", 1)]) == [
        Ordered("a", 1),
        Ordered("a", 2),
        Ordered("b", 1),
    ]
    assert Ordered("a") <= Ordered("a") and Ordered("b") > Ordered("a")
    with pytest.raises(TypeError):
        _ = Ordered("a") < Rec("a")  # type: ignore[operator]


def test_default_factories_give_each_instance_its_own_value() -> None:
    one, two = Rec("a"), Rec("b")
    assert one.extra == {} and one.extra is not two.extra


def test_instances_are_immutable() -> None:
    rec = Rec("a")
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'name'"):
        rec.name = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
        rec.other = 1  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'count'"):
        del rec.count
    assert rec == Rec("a")


def test_replace_and_post_init() -> None:
    rec = dataclasses.replace(Rec("a", 1), count=2)
    assert rec == Rec("a", 2) and type(rec) is Rec
    d = Derived("abc")
    assert d.length == 3 and repr(d) == "Derived(text='abc')"
    assert dataclasses.replace(d, text="abcd").length == 4


@frozen
class Own:
    """Fields declared with upgradeplan.frozen.field (no dataclasses import needed)."""

    name: str
    extra: Mapping[str, Any] = own_field(default_factory=dict, hash=False)
    note: str = own_field(default="", compare=False, repr=False)
    length: int = own_field(init=False, default=0)


def test_own_field_and_replace_behave_as_the_dataclasses_ones() -> None:
    ours = Own("a", {"k": "v"}, "n")
    assert repr(ours) == "Own(name='a', extra={'k': 'v'}, length=0)"
    assert ours == Own("a", {"k": "v"}, "other") and hash(ours) == hash(Own("a", {}))
    assert Own("b").extra == {} and Own("b").extra is not Own("c").extra
    fields = dataclasses.fields(Own)  # made on first use, as the dataclass would make them
    assert [(f.name, f.init, f.repr, f.compare, f.hash) for f in fields] == [
        ("name", True, True, True, None),
        ("extra", True, True, True, False),
        ("note", True, False, False, None),
        ("length", False, True, True, None),
    ]
    assert fields[1].default_factory is dict and fields[2].default == ""
    assert dataclasses.asdict(ours) == {"name": "a", "extra": {"k": "v"}, "note": "n", "length": 0}
    moved = replace(ours, name="b")
    assert moved == Own("b", {"k": "v"}) and moved.note == "n" and type(moved) is Own
    assert replace(ours, name="b") == dataclasses.replace(ours, name="b")
    assert replace(Rec("a", 1), count=2) == dataclasses.replace(Rec("a", 1), count=2)
    with pytest.raises(ValueError, match="init=False"):
        replace(ours, length=3)
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(ours, length=3)
    with pytest.raises(TypeError):
        replace(ours, nope=1)
    with pytest.raises(ValueError, match="both default and default_factory"):
        own_field(default=1, default_factory=int)  # type: ignore[call-overload]


def test_a_slots_record_behaves_as_the_slots_dataclass() -> None:
    ours, theirs = Slim("a", 2, ("x",)), SlimTwin("a", 2, ("x",))
    assert Slim.__slots__ == SlimTwin.__slots__ == ("name", "count", "tags")
    assert not hasattr(ours, "__dict__") and not hasattr(theirs, "__dict__")
    assert repr(ours) == repr(theirs).replace("SlimTwin(", "Slim(", 1)
    assert hash(ours) == hash(theirs) and ours == Slim("a", 2, ("y",))
    assert ours.__getstate__() == theirs.__getstate__() == ["a", 2, ("x",)]
    assert ours.__reduce_ex__(5)[2] == theirs.__reduce_ex__(5)[2]
    back = pickle.loads(pickle.dumps(ours))
    assert back == ours and back.tags == ("x",) and type(back) is Slim
    assert copy.deepcopy(ours) == ours and copy.copy(ours) == ours
    assert dataclasses.replace(ours, count=3) == Slim("a", 3)
    assert Slim.__qualname__ == "Slim" and Slim("b").count == 0
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'name'"):
        ours.name = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del ours.count
    with pytest.raises(TypeError, match="already specifies __slots__"):

        @frozen(slots=True)
        class Twice:  # type: ignore[misc]
            __slots__ = ("a",)
            a: int


def test_a_mutable_record_behaves_as_the_dataclass() -> None:
    ours, theirs = Box("a", ["x"]), BoxTwin("a", ["x"])
    assert repr(ours) == repr(theirs).replace("BoxTwin(", "Box(", 1)
    assert Box.__hash__ is None and BoxTwin.__hash__ is None
    assert ours == Box("a", ["x"]) and ours != Box("a")
    assert Box("b").items == [] and Box("b").items is not Box("c").items
    ours.count = 3
    ours.items.append("y")
    assert ours == Box("a", ["x", "y"], 3)
    del ours.count
    assert ours.count == 0  # the class attribute: the default, as the dataclass leaves it
    assert dataclasses.replace(Box("a"), count=2) == Box("a", count=2)
    assert [f.name for f in dataclasses.fields(Box)] == ["name", "items", "count"]
    sig = [(p.name, repr(p.default)) for p in signature(init_of(Box)).parameters.values()]
    assert sig[1:] == [(p.name, repr(p.default)) for p in signature(BoxTwin).parameters.values()]


def test_what_is_not_supported_is_refused_when_the_class_is_built() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @frozen
        class Bad:
            items: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="inherit"):

        @frozen
        class Child(Twin):
            more: int = 0

    with pytest.raises(TypeError, match="__setattr__"):

        @frozen
        class Own:
            a: int

            def __setattr__(self, name: str, value: Any) -> None:
                pass


def _frozen_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(upgradeplan.__path__, "upgradeplan."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and getattr(value.__setattr__, "__module__", "") == "upgradeplan.frozen"
            ):
                found.append(value)
    return found


def test_every_frozen_class_of_the_package_matches_its_dataclass_twin() -> None:
    classes = _frozen_classes()
    assert len(classes) >= 40
    for cls in classes:
        fields = dataclasses.fields(cls)
        twin: type = dataclass(frozen=True)(
            type(
                cls.__name__,
                (),
                {
                    "__annotations__": {f.name: f.type for f in fields},
                    **{
                        f.name: field(
                            default=f.default,
                            default_factory=f.default_factory,
                            init=f.init,
                            repr=f.repr,
                            hash=f.hash,
                            compare=f.compare,
                        )
                        for f in fields
                    },
                },
            )
        )
        ours = [(p.name, repr(p.default)) for p in signature(init_of(cls)).parameters.values()]
        theirs = [(p.name, repr(p.default)) for p in signature(twin).parameters.values()]
        assert ours[0][0] == "self"
        ours = ours[1:]
        assert ours == theirs, cls


def test_model_objects_hash_and_compare_by_value() -> None:
    source = flag("--fact")
    fact = Fact("installed.x", "1.0.0", source)
    ev = Evidence("p", "d", Truth.TRUE, (fact,))
    assert ev == Evidence("p", "d", Truth.TRUE, (Fact("installed.x", "1.0.0", source),))
    assert hash(ev) == hash(Evidence("p", "d", Truth.TRUE, (fact,)))
    assert {Location("f", 1): 1}[Location("f", 1)] == 1
    assert Location("a", 2) < Location("b", 1)
    assert str(Location("f", 3)) == "f:3"
    with pytest.raises(FrozenInstanceError):
        fact.value = "2.0.0"  # type: ignore[misc]


def test_init_is_compiled_when_the_first_instance_is_made() -> None:
    @frozen
    class Late:
        a: int
        b: str = "x"

    assert Late.__init__.__code__.co_varnames[:3] == ("self", "args", "kwargs")
    assert Late(1) == Late(1, "x") and repr(Late(2, b="y")).endswith(".Late(a=2, b='y')")
    assert Late.__init__.__code__.co_varnames[:3] == ("self", "a", "b")
    with pytest.raises(TypeError):
        Late()  # type: ignore[call-arg]
