"""Click subcommands, imported lazily by :mod:`upgradeplan.cli`."""
