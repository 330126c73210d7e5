"""Durable Object classes of the memvault Worker; ``entry`` imports them so the runtime registers them."""
