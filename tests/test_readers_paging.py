"""readers/kube/paging: each next page asked for as soon as the one before has arrived.

The token is read from the raw answer before it is parsed (:func:`paging.peek_continue`);
it must never be a wrong one, and a read with pages asked for ahead must send exactly the
requests, and give exactly the state, of a read page after page — also under the faults
that end or restart a list.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fakeapi import FakeAPIFactory, Faults, fake_api, load_documents
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan.model import KnowledgeBase
from upgradeplan.readers.kube import cluster, listing, paging, session
from upgradeplan.readers.snapshot import to_document

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

# --------------------------------------------------------------------------- the token


def test_the_token_of_a_typed_list_whose_metadata_comes_first() -> None:
    body = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"continue": "abc"}, "items": []}
    assert paging.peek_continue(json.dumps(body).encode()) == "abc"
    assert paging.peek_continue(json.dumps(body, separators=(",", ":")).encode()) == "abc"


def test_the_token_of_a_custom_resource_list_whose_metadata_comes_last() -> None:
    items = [{"metadata": {"name": "a", "continue": "not-this"}}]
    body = {"apiVersion": "x/v1", "items": items, "kind": "XList", "metadata": {"continue": "t"}}
    compact = json.dumps(body, separators=(",", ":")) + "\n"  # as Go's encoder writes it
    assert paging.peek_continue(compact.encode()) == "t"


def test_no_token_on_the_last_page_and_none_where_it_cannot_be_told() -> None:
    last = {"kind": "L", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": []}
    assert paging.peek_continue(json.dumps(last).encode()) == ""
    nested = {"apiVersion": "v1", "items": [{"metadata": {"continue": "x"}}], "kind": "L"}
    assert paging.peek_continue(json.dumps(nested).encode()) is None
    in_text = {"kind": "L", "items": [], "note": '"metadata": {"continue": "x"}}'}
    assert paging.peek_continue(json.dumps(in_text).encode()) is None
    assert paging.peek_continue(b'{"kind": "L", "metadata": {"continue": ') is None
    assert paging.peek_continue(b"<html>502</html>") is None


words = st.sampled_from(["metadata", "continue", "items", "kind", "a", "{", "[", '"', "}"])
trees = st.recursive(
    st.one_of(st.none(), st.integers(), words, st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(words, inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(
    items=st.lists(trees, max_size=4),
    meta=st.dictionaries(words, trees, max_size=3),
    extra=st.dictionaries(words, trees, max_size=2),
    sort=st.booleans(),
    compact=st.booleans(),
)
def test_a_token_read_early_is_never_a_wrong_one(
    items: list[Any], meta: dict[str, Any], extra: dict[str, Any], sort: bool, compact: bool
) -> None:
    body: dict[str, Any] = {**extra, "kind": "XList", "metadata": meta, "items": items}
    separators = (",", ":") if compact else None
    data = json.dumps(body, sort_keys=sort, separators=separators).encode()
    parsed = json.loads(data)["metadata"]
    truth = str(parsed.get("continue") or "") if isinstance(parsed, dict) else None
    early = paging.peek_continue(data)
    assert early is None or early == truth


# --------------------------------------------------------------------------- the reads

HR_GROUP = "helm.toolkit.fluxcd.io/v2"


def releases(n: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": HR_GROUP,
            "kind": "HelmRelease",
            "metadata": {"name": f"app-{i:04d}", "namespace": f"team-{i % 3}"},
            "spec": {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "x"}},
            "status": {"history": [{"chartName": "x", "chartVersion": f"1.{i}.0"}]},
        }
        for i in range(n)
    ]


def read_twice(
    kb: KnowledgeBase,
    fake_api: FakeAPIFactory,
    monkeypatch: pytest.MonkeyPatch,
    faults: Faults | None = None,
) -> tuple[list[tuple[Counter[str], dict[str, Any] | None, str | None]], int]:
    """The requests and the state of a read page after page, then with pages asked ahead."""
    objects = load_documents(sorted((CLUSTER_FIXTURES / "s2").glob("*.yaml"))) + releases(450)
    monkeypatch.setattr(listing, "PAGE_SIZE", 50)
    out = []
    asked_ahead: list[paging._Fetch] = []

    class Counted(paging._Fetch):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            asked_ahead.append(self)

    monkeypatch.setattr(paging, "_Fetch", Counted)
    written: list[str] = []  # requests written before the page naming them was parsed
    send = session.Session.send

    def counted_send(self: session.Session, path: str, query: Any = None) -> Any:
        sent = send(self, path, query)
        if sent is not None:
            written.append(sent.path)
        return sent

    monkeypatch.setattr(session.Session, "send", counted_send)
    # never ahead; ahead after every page of HelmReleases (50 are about 10 kB; a page
    # without items is far smaller than the floor, as in the reader's own MIN_BYTES)
    for min_bytes in (1 << 40, 2_000):
        monkeypatch.setattr(paging, "MIN_BYTES", min_bytes)
        server = fake_api.start(objects, faults=copy.deepcopy(faults))  # counters afresh
        kubeconfig = fake_api.kubeconfig({"c": server}, name=f"kc-{min_bytes}")
        [res] = cluster.read_contexts(kb, kubeconfig, [], False, timeout=5)
        sent = Counter(
            r.path + "?" + "&".join(f"{k}={v[0]}" for k, v in sorted(r.query.items()))
            for r in server.requests
        )
        assert res.requests == len(server.requests)
        out.append((sent, to_document(res.state) if res.state else None, res.error))
        if min_bytes > 2_000:
            assert not asked_ahead and not written
    assert len(written) == len(asked_ahead)  # each page asked ahead was written at once
    ahead = len(asked_ahead)
    return out, ahead


def test_pages_asked_ahead_send_the_same_requests_and_give_the_same_state(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    (plain, ahead), asked_ahead = read_twice(kb, fake_api, monkeypatch)
    assert plain == ahead
    assert asked_ahead == 9  # every page after the first was asked for ahead
    sent, doc, _ = ahead
    assert doc is not None and "installed.agent-platform" in doc["facts"]
    assert "helmrelease.app-0449.namespace" in doc["facts"]
    pages = [p for p in sent if "/helmreleases?" in p]
    assert len(pages) == 10 and sum(sent[p] for p in pages) == 10  # each page asked for once


@pytest.mark.parametrize(
    "faults",
    [
        Faults(gone_on_continue=1),  # an expired token: the list starts again
        Faults(always_gone={"helmreleases"}),
        Faults(repeat_continue={"helmreleases"}),
        Faults(empty_pages={"helmreleases"}),
        Faults(forbidden={"helmreleases"}),
        Faults(errors_500={"helmreleases": 2}),
        Faults(truncated={"helmreleases"}),
    ],
    ids=["410-once", "410-always", "repeated", "empty", "403", "500-twice", "truncated"],
)
def test_the_same_requests_and_state_when_a_fault_ends_or_restarts_the_list(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch, faults: Faults
) -> None:
    (plain, ahead), _ = read_twice(kb, fake_api, monkeypatch, faults)
    assert plain == ahead
    _, doc, _ = ahead
    if doc is not None and faults.gone_on_continue == 0 and not faults.errors_500:
        assert "helmrelease" in doc.get("unreadable", {})  # unknown, never "none there"
