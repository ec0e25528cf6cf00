"""Benchmark: `upgradeplan scan` against `kubectl get` on the same fake cluster.

A fake API server (tests/support/fakeapi.py, 127.0.0.1) holds 300 HelmReleases (or
--releases N), 300 OCIRepositories and 100 Deployments, and serves every other type the
reader lists (HelmChart, Harness, AgentTemplate: declared, empty; a few namespaces, nodes and
a storage class). `upgradeplan scan -o json` (the installed console script) and `kubectl get
<the same nine types> -A -o json` run alternately as subprocesses; wall times and the
requests each sent (from the server's request log) are printed, with the median ratio
upgradeplan / kubectl, for kubectl with a warm discovery cache (as a user runs it day to day)
and with a fresh one (a first run: discovery requests included). upgradeplan also reads
/version and the kagent CRDs it has facts about (kubectl would need `kubectl version` and
`kubectl get crd …` for those: one request each).

    python bench/scan.py [--rounds 9] [--releases 5000]
"""

from __future__ import annotations

import argparse
import os
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
# the types the reader lists that the objects above do not bring: served, empty (as on a
# cluster with Flux and kagent installed and no objects of these kinds)
DECLARED = (
    ("source.toolkit.fluxcd.io", "v1", "helmcharts", "HelmChart"),
    ("kagent.dev", "v1alpha3", "harnesses", "Harness"),
    ("kagent.dev", "v1alpha3", "agenttemplates", "AgentTemplate"),
)
# what `upgradeplan scan` lists, for kubectl to list the same
KUBECTL_TYPES = (
    "helmreleases,ocirepositories,helmcharts,harnesses,agenttemplates,deployments,"
    "namespaces,nodes,storageclasses"
)


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
    for group, version, plural, kind in DECLARED:
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
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--releases", type=int, default=300, help="HelmReleases (default 300)")
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    upgradeplan = str(Path(sys.executable).with_name("upgradeplan"))
    if kubectl is None or not os.path.exists(upgradeplan):
        raise SystemExit("needs kubectl and the installed upgradeplan console script")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAPIServer(objects(releases=args.releases), git_version="v1.31.0") as server,
    ):
        kubeconfig = str(write_kubeconfig(Path(tmp) / "kubeconfig", {"bench": server.url}))
        env = {**os.environ, "KUBECONFIG": kubeconfig}
        ours = [upgradeplan, "scan", "-o", "json", "--kubeconfig", kubeconfig]

        def kubectl_cmd(cache: str) -> list[str]:
            get = ["get", KUBECTL_TYPES, "-A", "-o", "json"]
            return [kubectl, "--kubeconfig", kubeconfig, "--cache-dir", cache, *get]

        warm = kubectl_cmd(str(Path(tmp) / "kube-cache"))
        # An installed package runs from bytecode (pip compiles it at install time); compile
        # ours explicitly so the timing does not depend on PYTHONDONTWRITEBYTECODE.
        import compileall

        import upgradeplan as package

        compileall.compile_dir(str(Path(package.__file__).parent), quiet=1)
        timed(ours, env)  # warm-up: page cache, kubectl's discovery cache
        timed(warm, env)
        names = ("upgradeplan", "kubectl-warm", "kubectl-cold")
        times: dict[str, list[float]] = {n: [] for n in names}
        requests: dict[str, list[int]] = {n: [] for n in names}
        for i in range(args.rounds):
            cold = kubectl_cmd(str(Path(tmp) / f"cold-cache-{i}"))  # a first run: discovery
            for name, cmd in zip(names, (ours, warm, cold), strict=True):
                before = len(server.requests)
                times[name].append(timed(cmd, env))
                requests[name].append(len(server.requests) - before)
        for name in names:
            t = times[name]
            print(
                f"{name:13s} median {statistics.median(t) * 1000:7.1f} ms  "
                f"min {min(t) * 1000:7.1f} ms  max {max(t) * 1000:7.1f} ms  "
                f"requests/run {statistics.median(requests[name]):.0f}"
            )
        for other in names[1:]:
            ratios = [u / k for u, k in zip(times["upgradeplan"], times[other], strict=True)]
            median = statistics.median(ratios)
            print(f"ratio upgradeplan/{other}: median {median:.2f} over {args.rounds} rounds")


if __name__ == "__main__":
    main()
