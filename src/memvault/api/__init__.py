"""The HTTP surface: FastAPI app factory, auth and options dependencies, routes, provider codecs."""
