"""Composition roots: build the deps of one platform and hand them to the one app factory."""
