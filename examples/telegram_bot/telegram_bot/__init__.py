"""A Telegram bot that remembers each chat through memvault: the logic, free of any platform, and
the local ASGI app that runs it over HTTP (the Worker in ../entry.py runs it on Cloudflare)."""
