"""PLAN -> EDITS: what each migration of a plan becomes where its fact was read.

``build`` turns a plan into a patch set; ``files`` is the disk side (reading the files the
facts name, the hash guard and atomic writes).
"""
