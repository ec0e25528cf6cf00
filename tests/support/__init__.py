"""Test support: builders, fakes and scenario tables, written once."""
