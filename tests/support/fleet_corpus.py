"""Generated fleets: the eight reference scenarios' states with varied names and versions.

Each scenario's cluster fixture (tests/fixtures/cluster/sN) is the seed. A generated member
moves the scenario's product to another release (a known one, or one the knowledge does not
know; every occurrence of the version in the objects, so chart, pin, image tag and values move
together) and is written in one of the forms a fleet meets: upgradeplan's own snapshot (YAML
or JSON), a plain kubectl dump (a ``List`` in YAML or JSON, with ``kubectl version`` output
appended), gzip-compressed or not.
The delegate scenarios also vary the Kubernetes version, and some own-format snapshots state
the Harness CD platform version (a cluster read cannot give it).

Shared by tests/test_fleet*.py and bench/fleet.py (which puts tests/ on sys.path).
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CLUSTER_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cluster"

# scenario -> (the product it moves, the version its fixture runs); the versions it moves to
# are the product's known releases from MOVE_FROM on (read from the knowledge, so the corpus
# follows it), plus one version the knowledge does not know.
SCENARIOS: dict[str, tuple[str, str]] = {
    "s1": ("agent-platform", "4.7.18"),
    "s2": ("agent-platform", "4.7.18"),
    "s3": ("agent-platform", "4.7.18"),
    "s4": ("agent-platform", "4.8.0"),
    "s5": ("agent-platform", "4.7.18"),
    "s6": ("harness-delegate", "0.29.0"),
    "s7": ("harness-delegate", "0.31.2"),
    "s8": ("harness-delegate", "0.29.0"),
}
MOVE_FROM = {"agent-platform": "4.7.0", "harness-delegate": "0.0.0"}
UNKNOWN_VERSION = {"agent-platform": "4.7.99", "harness-delegate": "0.29.7"}
KUBERNETES = ("v1.27.3", "v1.28.9", "v1.31.4", "v1.35.0")
REGIONS = ("eu-west", "us-east", "ap-south", "sa-east", "eu-central")
FORMS = ("state-yaml", "state-yaml", "state-json", "kubectl-yaml", "kubectl-json")

# Five members no reader can take, each with what its reason must say.
MALFORMED: dict[str, tuple[bytes, str]] = {
    "broken-yaml.yaml": (b"kind: upgradeplan-state\nfacts: {installed.x: [\n", "malformed YAML"),
    "not-a-snapshot.yaml": (b"kind: Pod\nmetadata: {name: p}\n", "not a snapshot"),
    "future-schema.json": (
        b'{"kind": "upgradeplan-state", "schema_version": 7, "facts": {}}',
        "schema_version 7 is not supported",
    ),
    "truncated.yaml.gz": (gzip.compress(b"kind: List\nitems: []\n")[:12], "gzip"),
    "binary.yaml": (b"\xff\xfe\x00\x01\x80\x81 not text", "not UTF-8"),
}


@dataclass(frozen=True)
class Generated:
    path: Path
    scenario: str
    version: str
    form: str
    gz: bool


def _fixture_text(scenario: str) -> str:
    return (CLUSTER_FIXTURES / scenario / "objects.yaml").read_text(encoding="utf-8")


def _server_version(scenario: str) -> str:
    doc = yaml.safe_load((CLUSTER_FIXTURES / scenario / "server.yaml").read_text("utf-8"))
    return str(doc["gitVersion"])


def _moved(text: str, old: str, new: str) -> str:
    return text.replace(old, new)


_DOCUMENTS: dict[tuple[str, str], dict[str, Any]] = {}


def _state_document(kb: Any, objects_text: str, git_version: str, name: str) -> dict[str, Any]:
    """The snapshot ``upgradeplan snapshot`` writes of these objects (read once per state)."""
    from upgradeplan.readers import snapshot

    key = (objects_text, git_version)
    if key not in _DOCUMENTS:
        text = objects_text + f"\n---\nserverVersion:\n  gitVersion: {git_version}\n"
        [state] = snapshot.states_of(text, "cluster", kb)
        _DOCUMENTS[key] = snapshot.to_document(state)
    doc = copy.deepcopy(_DOCUMENTS[key])
    doc["name"] = name
    for fact in doc["facts"].values():
        fact["source"] = str(fact["source"]).replace("cluster", f"cluster {name}", 1)
        if fact.get("from", {}).get("origin") == "cluster":  # the fields the text is made of
            fact["from"]["origin"] = f"cluster {name}"
    return doc


def _versions(kb: Any, product: str) -> tuple[str, ...]:
    from upgradeplan.versions import Version

    low = Version.parse(MOVE_FROM[product])
    known = tuple(
        r.version
        for r in kb.releases[product]
        if r.version != "next" and r.withdrawn is None and Version.parse(r.version) >= low
    )
    return (*known, UNKNOWN_VERSION[product])


def generate(
    kb: Any, directory: Path, count: int, *, seed: int = 17, malformed: bool = True
) -> list[Generated]:
    """Write ``count`` varied snapshots (and, with ``malformed``, the five bad files) into
    ``directory``; returns what was written, in name order."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    texts = {s: _fixture_text(s) for s in SCENARIOS}
    out: list[Generated] = []
    names = sorted(SCENARIOS)
    moves = {p: _versions(kb, p) for p in MOVE_FROM}
    for i in range(count):
        scenario = names[i % len(names)]
        product, old = SCENARIOS[scenario]
        version = rng.choice(moves[product])
        form = FORMS[rng.randrange(len(FORMS))]
        gz = rng.random() < 0.2
        git_version = _server_version(scenario)
        if scenario in ("s6", "s7", "s8"):
            git_version = rng.choice(KUBERNETES)
        name = f"{scenario}-{rng.choice(REGIONS)}-{i:04d}"
        objects_text = _moved(texts[scenario], old, version)
        if form.startswith("state"):
            doc = _state_document(kb, objects_text, git_version, name)
            if scenario in ("s6", "s7") and rng.random() < 0.7:
                doc["facts"]["installed.harness-cd"] = {
                    "value": "24.12.0",
                    "source": "stated by support",
                }
            if form == "state-json":
                body = json.dumps(doc, indent=2)
                suffix = ".json"
            else:
                body = yaml.safe_dump(doc, sort_keys=False)
                suffix = ".yaml"
        elif form == "kubectl-yaml":
            body = objects_text + f"---\nserverVersion:\n  gitVersion: {git_version}\n"
            suffix = ".yaml"
        else:
            listed = yaml.safe_load(objects_text)
            body = json.dumps([listed, {"serverVersion": {"gitVersion": git_version}}], indent=2)
            suffix = ".json"
        data = body.encode("utf-8")
        if gz:
            data = gzip.compress(data, mtime=0)
            suffix += ".gz"
        path = directory / f"{name}{suffix}"
        path.write_bytes(data)
        out.append(Generated(path, scenario, version, form, gz))
    if malformed:
        for file, (data, _) in MALFORMED.items():
            (directory / file).write_bytes(data)
    return sorted(out, key=lambda g: g.path.name)


def readable_copy(g: Generated, tmp: Path) -> Path:
    """A path ``check --snapshot`` reads: the file itself, or its gunzipped copy."""
    if not g.gz:
        return g.path
    plain = tmp / g.path.name[: -len(".gz")]
    plain.write_bytes(gzip.decompress(g.path.read_bytes()))
    return plain
