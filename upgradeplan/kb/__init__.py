"""The knowledge base: loading, validating and linting the YAML knowledge.

- :mod:`.loader` — ``load`` / ``load_all`` / ``bundled_dir``: YAML -> model objects
- YAML with line numbers for every key and item: :mod:`upgradeplan.yamlload`
- :mod:`.when` — ``when:`` YAML -> :class:`upgradeplan.model.Condition` trees
- :mod:`.schema` — the JSON Schemas (package data) and full validation
- :mod:`.checks` — the coded semantic checks; :mod:`.problems` — ``Problem`` and the catalogue
- :mod:`.lint` — ``lint``: everything above in one run; :mod:`.templating` — the jinja2 env

Nothing heavy is imported here.
"""
