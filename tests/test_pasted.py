"""Pasted text read as messages: each shape a tool prints over several lines read whole,
with the numbers of its lines in the paste; a bounded window; binary refused."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan import errors, pasted


def _texts(text: str) -> list[str]:
    return [m.text for m in pasted.normalise(text)]


def test_a_literal_block_is_one_message_with_its_reason() -> None:
    text = (
        "- lastTransitionTime: x\n"
        "  message: |-\n"
        "    Cluster state of release ns/kagent.v3 has drifted from the desired state:\n"
        "    Harness/kagent/kagent removed\n"
        "  reason: DriftDetected\n"
    )
    msg = next(m for m in pasted.normalise(text) if m.text.startswith("message:"))
    assert msg.text.endswith("desired state: Harness/kagent/kagent removed")
    assert msg.lines == (2, 3, 4)
    assert (msg.where, msg.reason) == ("status", "DriftDetected")


def test_quoted_scalars_are_unfolded_and_unescaped() -> None:
    single = "message: 'values don''t meet\n  the schema'\nreason: X\n"
    assert "message: values don't meet the schema" in _texts(single)
    double = 'message: "a \\"quoted\\" word\n  over lines"\n'
    assert 'message: a "quoted" word over lines' in _texts(double)


def test_a_plain_scalar_folded_by_go_yaml_is_joined() -> None:
    text = "    message: Helm upgrade failed for release a/b with chart\n      b@1.0.0\n"
    assert _texts(text)[0] == "message: Helm upgrade failed for release a/b with chart b@1.0.0"


def test_a_block_map_is_also_read_in_flow_form() -> None:
    text = 'matchLabels:\n  a: b\n  c: ""\nother: 1\n'
    flows = [m for m in pasted.normalise(text) if m.text.startswith("matchLabels: {")]
    assert flows[0].text == 'matchLabels: {a: b, c: ""}'
    assert flows[0].lines == (1, 2, 3)


def test_event_rows_take_their_continuation_lines_and_keep_reason_and_object() -> None:
    text = (
        "LAST SEEN   TYPE      REASON          OBJECT          MESSAGE\n"
        "2m          Warning   DriftDetected   helmrelease/x   it drifted:\n"
        "Deployment/ns/x removed\n"
        "1m          Normal    Other           helmrelease/y   fine\n"
    )
    first, second = [m for m in pasted.normalise(text) if m.where == "events"]
    assert first.lines == (2, 3) and first.reason == "DriftDetected" and first.names == ("x",)
    assert second.lines == (4,)


def test_json_log_lines_are_decoded_and_prefixes_stripped() -> None:
    line = (
        '[pod/hc-1/manager] {"level":"error","msg":"Reconciler error","controllerKind":'
        '"HelmRelease","HelmRelease":{"name":"kagent","namespace":"ns"},'
        '"error":"Invalid value: \\"v1alpha2\\"\\nnext"}\n'
        "2026-11-30T10:00:00.123Z E1130 10:00:00.123456       1 file.go:12] plain\n"
    )
    first, second = pasted.normalise(line)
    assert 'Invalid value: "v1alpha2" next' in first.text
    assert first.names == ("kagent",) and first.where == "logs"
    assert second.text == "plain"


def test_names_are_read_from_helm_and_flux_wordings() -> None:
    text = (
        "Helm upgrade failed for release flux/agent-platform-klaus-gateway with chart "
        "klaus-gateway@1.0.3: values don't meet the specifications of the schema(s) in the "
        "following chart(s): klaus-gateway: - at '': additional properties 'crd' not allowed"
    )
    assert pasted.read_names(text) == {"agent-platform-klaus-gateway", "klaus-gateway"}
    assert pasted.read_names("release in-sync with desired state") == set()


def test_the_window_keeps_whole_lines_and_their_numbers() -> None:
    data = b"".join(b"line %d\n" % n for n in range(1, 1001))
    paste = pasted.read_paste(io.BytesIO(data), "x", window=100)
    assert paste.text.startswith(f"line {paste.first_line}\n")
    assert paste.text.endswith("line 1000\n")
    assert paste.skipped_bytes + len(paste.text.encode()) == len(data)
    small = pasted.read_paste(io.BytesIO(b"a\nb\n"), "x", window=100)
    assert (small.first_line, small.skipped_bytes, small.note) == (1, 0, "")


def test_binary_input_is_bad_input() -> None:
    with pytest.raises(errors.BadInput, match="binary input"):
        pasted.read_paste(io.BytesIO(b"text\x00more"), "x")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=" \t-:'\"|>{}[]\\abcAB12/.", max_size=30), max_size=30))
def test_any_text_reads_as_messages_whose_lines_are_its_own(lines: list[str]) -> None:
    text = "\n".join(lines)
    total = len(text.split("\n"))
    for msg in pasted.normalise(text, first_line=5):
        assert msg.lines
        assert all(5 <= n < 5 + total for n in msg.lines)
        assert list(msg.lines) == sorted(set(msg.lines))
        assert "\n" not in msg.text
