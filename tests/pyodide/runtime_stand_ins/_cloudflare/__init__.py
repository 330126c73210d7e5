"""Stand-in for the Python Workers runtime's own ``_cloudflare`` package, in the Pyodide tier only:
just what the SDK's package patches (``_workers_sdk_package_patches``) import."""
