"""Benchmark: `upgradeplan scan` against kubectl reading the same resources, same fake cluster.

A fake API server (tests/support/fakeapi.py, 127.0.0.1) holds 300 HelmReleases (or
--releases N), 300 OCIRepositories and 100 Deployments, and serves every other type the
reader lists (the custom resources of `listing.resources(kb)` that no object brings are
declared by a CRD and empty, as on a cluster with Flux, kagent and the declared kinds
installed; a few namespaces, nodes and a storage class).

A warm-up run of `upgradeplan scan -o json` (the installed console script) is taken apart
request by request, and kubectl is made to read exactly the same: one `kubectl get
<every type upgradeplan listed, at the version it listed> -A -o json`, `kubectl get crd
<names> --ignore-not-found -o json` when upgradeplan read CustomResourceDefinitions,
`kubectl get secret -n NS <names>` for Secrets read by name, and `kubectl version -o json`
when upgradeplan asked for /version. A request of upgradeplan's that kubectl has no
counterpart for (a list answered 404 and the group probe after it) stops the bench: the
cluster must serve every listed type. Then, alternately, round after round: upgradeplan;
those kubectl commands one after the other with a warm discovery cache (as a user runs
them day to day); the same with a fresh cache (a first run: discovery included); and the
one `kubectl get` of the lists alone, warm (the stricter figure of before). Wall times and
the requests each side sent (counted in the server's request log) are printed, with the
median ratios upgradeplan / kubectl of the paired rounds.

With ``--other PATH`` (the ``upgradeplan`` console script of another install, say the
commit before a change) that install runs in the same rounds too, so before and after are
compared alternately, under the same load; its output must be the same bytes.

    python bench/scan.py [--rounds 9] [--releases 5000] [--other /tmp/before/bin/upgradeplan]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.fakeapi import FakeAPIServer, write_kubeconfig  # type: ignore[import-not-found,unused-ignore]  # noqa: E402

NS = "flux-giantswarm"
BUILTIN_GROUPS = ("", "apps", "storage.k8s.io")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
LIST = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))/(?P<plural>[a-z0-9]+)$"
)
SECRET = re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/secrets/(?P<name>[^/]+)$")


def declared() -> list[tuple[str, str, str, str]]:
    """(group, version, plural, kind) of every custom resource type the installed reader
    lists (RESOURCES and the kinds the bundled knowledge declares)."""
    from upgradeplan import api
    from upgradeplan.readers.kube.listing import resources

    return [
        (res.group, res.versions[0], res.plural, res.kind)
        for res in resources(api.load_kb([]))
        if res.group not in BUILTIN_GROUPS
    ]


def objects(
    releases: int = 300, repositories: int = 300, deployments: int = 100
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(repositories):
        out.append(
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": f"component-{i:03d}", "namespace": NS},
                "spec": {
                    "url": f"oci://registry.example/charts/component-{i:03d}",
                    "ref": {"semver": ">=1.0.0 <2.0.0"},
                },
                "status": {"artifact": {"revision": f"1.{i}.0@sha256:{'ab' * 32}"}},
            }
        )
    for i in range(releases):
        out.append(
            {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": f"component-{i:03d}", "namespace": NS},
                "spec": {
                    "interval": "10m",
                    "chartRef": {"kind": "OCIRepository", "name": f"component-{i:03d}"},
                    "values": {"replicas": 2, "image": {"tag": f"1.{i}.0"}},
                },
                "status": {
                    "history": [
                        {
                            "chartName": f"component-{i:03d}",
                            "chartVersion": f"1.{i}.0+0a1b2c3d4e5f",
                            "status": "deployed",
                            "version": 3,
                        }
                    ]
                },
            }
        )
    brought = {obj["kind"] for obj in out}
    for group, version, plural, kind in declared():
        if kind in brought:
            continue
        out.append(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{plural}.{group}"},
                "spec": {
                    "group": group,
                    "names": {"plural": plural, "kind": kind, "singular": kind.lower()},
                    "scope": "Namespaced",
                    "versions": [{"name": version, "served": True, "storage": True}],
                },
            }
        )
    for name in (NS, *(f"team-{t}" for t in range(10))):
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for n in range(3):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{n}"},
                "status": {"nodeInfo": {"kubeletVersion": "v1.31.0"}},
            }
        )
    out.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "standard"},
            "provisioner": "example.invalid/disk",
        }
    )
    for i in range(deployments):
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": f"app-{i:03d}",
                    "namespace": f"team-{i % 10}",
                    "labels": {"app": f"app-{i:03d}"},
                },
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": f"app-{i:03d}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"app-{i:03d}"}},
                        "spec": {
                            "containers": [
                                {"name": "app", "image": f"registry.example/app-{i:03d}:1.0.{i}"}
                            ]
                        },
                    },
                },
            }
        )
    return out


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} … failed ({proc.returncode}): {proc.stderr[-500:]}")
    return elapsed


def kubectl_reads(requests: list[Any]) -> tuple[list[list[str]], list[str]]:
    """The kubectl commands (arguments after ``kubectl``) that read what ``requests`` read,
    and the list types among them; SystemExit on a request kubectl has no counterpart for."""
    types: list[str] = []
    crds: list[str] = []
    secrets: dict[str, list[str]] = {}
    version = False
    for req in requests:
        if req.path == "/version":
            version = True
        elif req.path.startswith(CRD_PATH):
            crds.append(req.path[len(CRD_PATH) :])
        elif (secret := SECRET.match(req.path)) is not None:
            secrets.setdefault(secret["ns"], []).append(secret["name"])
        elif (listed := LIST.match(req.path)) is not None and req.status == 200:
            if "continue" not in req.query:  # the pages after the first come by themselves
                group, plural = listed["group"], listed["plural"]
                types.append(f"{plural}.{listed['version']}.{group}" if group else plural)
        else:
            raise SystemExit(
                f"upgradeplan asked {req.path} (HTTP {req.status}), which kubectl reading the "
                "same resources has no counterpart for: serve every type the reader lists"
            )
    commands = [["get", ",".join(sorted(types)), "-A", "-o", "json"]]
    if crds:
        commands.append(["get", "crd", *sorted(set(crds)), "--ignore-not-found", "-o", "json"])
    for ns, names in sorted(secrets.items()):
        commands.append(["get", "secret", "-n", ns, *sorted(set(names)), "--ignore-not-found"])
    if version:
        commands.append(["version", "-o", "json"])
    return commands, types


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--releases", type=int, default=300, help="HelmReleases (default 300)")
    parser.add_argument("--other", help="another install's upgradeplan script, run alike")
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    upgradeplan = str(Path(sys.executable).with_name("upgradeplan"))
    if kubectl is None or not os.path.exists(upgradeplan):
        raise SystemExit("needs kubectl and the installed upgradeplan console script")
    # An installed package runs from bytecode (pip compiles it at install time); compile
    # ours explicitly so the timing does not depend on PYTHONDONTWRITEBYTECODE.
    import compileall

    import upgradeplan as package

    compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAPIServer(objects(releases=args.releases), git_version="v1.31.0") as server,
    ):
        kubeconfig = str(write_kubeconfig(Path(tmp) / "kubeconfig", {"bench": server.url}))
        env = {**os.environ, "KUBECONFIG": kubeconfig}
        ours = [upgradeplan, "scan", "-o", "json", "--kubeconfig", kubeconfig]
        timed(ours, env)  # warm-up (page cache); its requests say what kubectl must read
        reads, types = kubectl_reads(list(server.requests))
        other = [args.other, *ours[1:]] if args.other else None
        if other is not None:
            got = [subprocess.run(c, capture_output=True, env=env, timeout=300, check=False)
                   for c in (ours, other)]  # fmt: skip
            if got[0].stdout != got[1].stdout:
                raise SystemExit(f"{args.other} does not print what {upgradeplan} prints")
        print(f"upgradeplan lists {len(types)} types: {', '.join(types)}")
        print("kubectl reading the same: " + " && ".join("kubectl " + " ".join(c) for c in reads))

        def kubectl_runs(cache: str, commands: list[list[str]]) -> list[list[str]]:
            base = [kubectl, "--kubeconfig", kubeconfig, "--cache-dir", cache]
            return [[*base, *command] for command in commands]

        warm_cache = str(Path(tmp) / "kube-cache")
        for cmd in kubectl_runs(warm_cache, reads):  # warm-up: kubectl's discovery cache
            timed(cmd, env)
        names: tuple[str, ...] = ("upgradeplan", "kubectl-warm", "kubectl-cold", "kubectl-lists")
        if other is not None:
            names = ("upgradeplan", "other", *names[1:])
        times: dict[str, list[float]] = {n: [] for n in names}
        requests: dict[str, list[int]] = {n: [] for n in names}
        for i in range(args.rounds):
            runs = {
                "upgradeplan": [ours],
                "kubectl-warm": kubectl_runs(warm_cache, reads),
                # a first run: discovery requests included
                "kubectl-cold": kubectl_runs(str(Path(tmp) / f"cold-cache-{i}"), reads),
                "kubectl-lists": kubectl_runs(warm_cache, reads[:1]),
            }
            if other is not None:
                runs["other"] = [other]
            for name in names:
                before = len(server.requests)
                times[name].append(sum(timed(cmd, env) for cmd in runs[name]))
                requests[name].append(len(server.requests) - before)
        for name in names:
            t = times[name]
            print(
                f"{name:13s} median {statistics.median(t) * 1000:7.1f} ms  "
                f"min {min(t) * 1000:7.1f} ms  max {max(t) * 1000:7.1f} ms  "
                f"requests/run {statistics.median(requests[name]):.0f}"
            )
        sides = ["upgradeplan", "other"] if other is not None else ["upgradeplan"]
        for side in sides:
            for peer in (n for n in names if n.startswith("kubectl") or n == "other"):
                if peer == side:
                    continue
                ratios = [u / k for u, k in zip(times[side], times[peer], strict=True)]
                median = statistics.median(ratios)
                print(f"ratio {side}/{peer}: median {median:.2f} over {args.rounds} rounds")


if __name__ == "__main__":
    main()
