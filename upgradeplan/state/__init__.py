"""STATE: what an installation runs and pins, as facts (docs/state-format.md).

- :mod:`~upgradeplan.state.keys`: the fact-key table (pattern, value type, how to supply it)
- :mod:`~upgradeplan.state.merge`: several inputs' states as one (the later wins per key)
- :mod:`~upgradeplan.state.derive`: the facts that follow from others (an exact pin gives the
  installed version; a release's published ranges pin what the installation does not)
"""
