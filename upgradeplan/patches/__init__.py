"""PLAN -> EDITS: what each migration of a plan becomes where its fact was read.

``build`` turns a plan into a :class:`~upgradeplan.patches.patchset.PatchSet`; ``yamledit``
changes YAML text keeping everything else byte for byte; ``files`` is the
disk side (reading the files the facts name, the hash guard, atomic writes). Rendering a
patch set is :mod:`upgradeplan.render.patches`.
"""
