"""Cloudflare bindings: the only package that imports js, pyodide or workers."""
