"""Sources: their printed text is the outputs' wording, and a snapshot gives them back typed."""

from __future__ import annotations

import pytest

from upgradeplan.provenance import (
    ObjectRef,
    Source,
    default_of,
    derived_from_pin,
    flag,
    in_file,
    moved,
    read_from,
    recorded,
    release_default,
    supposed,
    text,
)

BOM = in_file("clusters/prod/bom.yaml", 12)
HR_VALUES = read_from(
    "HelmRelease ns-a/agent spec.values.delegateVersion",
    "cluster prod",
    obj=ObjectRef("HelmRelease", "ns-a", "agent"),
    path="spec.values.delegateVersion",
)

PRINTED: list[tuple[Source, str]] = [
    (BOM, "clusters/prod/bom.yaml:12"),
    (in_file("values.yaml"), "values.yaml"),
    (flag("--installed"), "flag --installed"),
    (HR_VALUES, "cluster prod: HelmRelease ns-a/agent spec.values.delegateVersion"),
    (read_from("/version gitVersion v1.29.3"), "/version gitVersion v1.29.3"),
    (supposed("plan: agent-platform@4.8.0"), "plan: agent-platform@4.8.0"),
    (derived_from_pin(BOM), "derived: exact pin (clusters/prod/bom.yaml:12)"),
    (
        moved(BOM, "4.8.0", "agent-platform@4.8.0"),
        "clusters/prod/bom.yaml:12 (moved to 4.8.0 with agent-platform@4.8.0)",
    ),
    (
        moved(None, "4.8.0", "agent-platform@4.8.0"),
        "agent-platform@4.8.0 (moved to 4.8.0 with agent-platform@4.8.0)",
    ),
    (
        default_of("bom.yaml", 4, "kagent", "agent-platform 4.8.0 (oci.yaml:9) defaults it to x"),
        "derived: bom.yaml:4 sets no driftDetection for kagent; "
        "agent-platform 4.8.0 (oci.yaml:9) defaults it to x",
    ),
    (
        release_default("agent-platform@4.8.0", "components.kagent.versionRange"),
        "default of agent-platform@4.8.0 (components.kagent.versionRange)",
    ),
    (release_default("agent-platform@4.8.0"), "default of agent-platform@4.8.0"),
    (text("example: clusters/prod/bom.yaml:9"), "example: clusters/prod/bom.yaml:9"),
]


@pytest.mark.parametrize(("source", "printed"), PRINTED, ids=[p for _, p in PRINTED])
def test_a_source_prints_as_the_outputs_say(source: Source, printed: str) -> None:
    assert str(source) == printed


@pytest.mark.parametrize(
    "source",
    [
        BOM,
        flag("--pin"),
        HR_VALUES,
        derived_from_pin(BOM),
        derived_from_pin(flag("--pin")),
        default_of("bom.yaml", 4, "kagent", "agent-platform 4.8.0 (oci.yaml:9) defaults it to x"),
        release_default("agent-platform@4.8.0", "components.kagent.versionRange"),
        release_default("agent-platform@4.8.0"),
        text("example: clusters/prod/bom.yaml:9"),
    ],
    ids=str,
)
def test_what_a_snapshot_records_reads_back_as_the_same_source(source: Source) -> None:
    assert recorded(str(source)) == source


def test_only_a_file_line_is_a_place_to_edit() -> None:
    assert BOM.file_line == ("clusters/prod/bom.yaml", 12)
    assert in_file("values.yaml").file_line is None
    assert derived_from_pin(BOM).file_line is None
    assert recorded("cluster prod: HelmRelease ns/x status.history[0]").file_line is None
    assert recorded("flag --fact").file_line is None


def test_moved_and_derived_sources_lead_back_to_where_the_pin_is_written() -> None:
    twice = moved(moved(BOM, "4.7.19", "a@4.7.19"), "4.8.0", "a@4.8.0")
    assert twice.unmoved() == BOM
    assert str(twice) == "clusters/prod/bom.yaml:12 (moved to 4.8.0 with a@4.8.0)"
    assert derived_from_pin(BOM).underived() == BOM
    assert BOM.unmoved() == BOM and BOM.underived() == BOM
