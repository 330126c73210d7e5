"""Contract suites: plain async checks per port, run by pytest on CPython and by the Pyodide harness."""
