"""Platform adapters: one package per platform, the same ports in each."""
