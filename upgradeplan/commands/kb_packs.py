"""``upgradeplan kb packs`` and ``kb releases-from-git``, and the lint of a pack's manifest."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import click

from upgradeplan.kb import packs
from upgradeplan.kb.generate import origin_of, read_tags, write_releases
from upgradeplan.kb.loader import load_all
from upgradeplan.kb.packs import available
from upgradeplan.kb.problems import problem
from upgradeplan.model import Location


def manifest_problems(pack_dirs: Sequence[str], use: Sequence[str], bundled: bool) -> list[Any]:
    """KB040 for what is wrong with each linted pack's ``pack.yaml``: a missing field, a
    product the pack does not define, a ``reviewed_through`` other than its product's."""
    if not pack_dirs:
        return []
    kb = load_all(use, bundled=bundled, semantic=False).kb
    out: list[Any] = []
    for path in pack_dirs:
        pack = packs.read(path)
        at = Location(f"{os.path.basename(path)}/pack.yaml", 1)
        own = [
            p.id
            for p in pack.products
            if os.path.isfile(os.path.join(path, "products", f"{p.id}.yaml"))
        ]
        words = packs.manifest_problems(pack, own)
        for p in pack.products:
            product = kb.products.get(p.id)
            if (
                p.id in own
                and product is not None
                and product.reviewed_through != p.reviewed_through
            ):
                words.append(
                    f"product {p.id!r}: reviewed_through {p.reviewed_through!r} here, "
                    f"{product.reviewed_through!r} in products/{p.id}.yaml"
                )
        out.extend(problem("KB040", at, w) for w in words)
    return out


@click.command("releases-from-git")
@click.option(
    "--repo",
    "repo",
    required=True,
    type=click.Path(file_okay=False),
    metavar="CLONE",
    help="A local git clone of the chart's repository (its tags are read, nothing is fetched).",
)
@click.option(
    "--chart-dir",
    "chart_dir",
    required=True,
    metavar="PATH",
    help="The chart's directory in the repository (where its Chart.yaml is).",
)
@click.option(
    "--tag",
    "tag",
    required=True,
    metavar="TEMPLATE",
    help="The chart's tags, with {version} where the version is: 'my-chart-{version}'.",
)
@click.option("--product", "product", required=True, metavar="PRODUCT", help="The product id.")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    metavar="DIRECTORY",
    help="Where the release files go: the pack's releases/<product>/.",
)
@click.pass_context
def releases_from_git_cmd(
    ctx: click.Context, repo: str, chart_dir: str, tag: str, product: str, out_dir: str
) -> None:
    """Release files of a chart from its git tags: version, date, appVersion, kubeVersion.

    Every tag of CLONE matching TEMPLATE is a release: its date is the tag's (the commit's for
    a lightweight tag), its appVersion and kubeVersion those of PATH/Chart.yaml at the tag.
    Each release is written as DIRECTORY/<version>.yaml in the knowledge format (app_version,
    kube_version), with a comment naming this command, the repository and the tag's commit;
    a file whose text would not change is left alone. Hazards, notes and quotes are not
    generated: they are written by hand from the chart's upgrade notes (docs/packs.md).

    \b
    Examples:
      upgradeplan kb releases-from-git --repo /tmp/helm-charts \\
        --chart-dir charts/kube-prometheus-stack --tag 'kube-prometheus-stack-{version}' \\
        --product kube-prometheus-stack \\
        --out packs/kube-prometheus-stack/releases/kube-prometheus-stack
    """
    import shlex

    tagged = read_tags(repo, chart_dir, tag)
    command = shlex.join(
        [
            "upgradeplan",
            "kb",
            "releases-from-git",
            "--repo",
            "CLONE",
            "--chart-dir",
            chart_dir,
            "--tag",
            tag,
            "--product",
            product,
            "--out",
            out_dir,
        ]
    )
    written, unchanged = write_releases(tagged, product, out_dir, origin_of(repo), command)
    click.echo(
        f"{len(tagged)} releases of {product} ({tagged[0].version} to {tagged[-1].version}): "
        f"{written} written, {unchanged} unchanged, in {out_dir}"
    )


@click.command("packs")
@click.option(
    "-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.pass_context
def packs_cmd(ctx: click.Context, output: str) -> None:
    """The knowledge packs shipped with upgradeplan, and which this run enables.

    A pack is opt-in knowledge for one more chart line (docs/packs.md): enable it with
    --pack NAME, UPGRADEPLAN_PACKS=a,b or 'packs: [a, b]' in .upgradeplan.yaml. Each row: name,
    the pack's version, enabled or not, its products with the newest release their sources
    were reviewed through, and how many releases it knows.

    \b
    Examples:
      upgradeplan kb packs
      upgradeplan --pack kube-prometheus-stack kb packs -o json
    """

    enabled = set((ctx.find_root().obj or {}).get("packs", ()))
    rows: list[dict[str, Any]] = [
        {
            "name": p.name,
            "version": p.version,
            "enabled": p.name in enabled,
            "description": p.description,
            "products": [{"id": q.id, "reviewed_through": q.reviewed_through} for q in p.products],
            "releases": p.release_count(),
            "sources": list(p.sources),
        }
        for p in available()
    ]
    if output == "json":
        click.echo(json.dumps({"schema_version": 1, "packs": rows}, indent=2))
        return
    if not rows:
        click.echo("no knowledge packs are installed")
        return
    for r in rows:
        products = ", ".join(
            f"{q['id']} (reviewed through {q['reviewed_through']})" for q in r["products"]
        )
        mark = "enabled" if r["enabled"] else "not enabled"
        click.echo(f"{r['name']} {r['version']}  {mark}  {r['releases']} releases  {products}")
        if r["description"]:
            click.echo(f"  {r['description']}")
