"""Checking the store: SHACL validation against the shapes, and the coverage audits."""
