"""Package discovery, the one thing pyproject.toml cannot say on its own.

Every ``upgradeplan*`` package is found automatically, so a new sub-package installs with a
plain ``pip install .``; the bundled knowledge base lives at the top of the repository
(``knowledge/``) and ships as ``upgradeplan.knowledge``, the knowledge packs (``packs/``) as
``upgradeplan.packs`` (see ``package-dir`` in pyproject.toml). Everything else about the build is in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["upgradeplan", "upgradeplan.*"]), "upgradeplan.knowledge",
        "upgradeplan.packs",
    ]
)
