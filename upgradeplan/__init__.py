"""upgradeplan: safe upgrade paths for Helm charts run through Flux.

The command line is a thin layer over :mod:`upgradeplan.api`; everything it does is
callable from Python.
"""

__version__ = "0.2.0"
