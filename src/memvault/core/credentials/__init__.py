"""Credentials and access: the key store (memory keys and brain credentials), Cloudflare Access
sign-in and the JWTs it checks, and the one caller resolver every surface hands its tokens to."""
