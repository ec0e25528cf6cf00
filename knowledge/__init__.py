"""The bundled knowledge base: YAML data only (this file lets it ship as package data)."""
