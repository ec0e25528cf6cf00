"""The knowledge packs: one directory per pack, YAML data only (this file ships them as package data)."""
