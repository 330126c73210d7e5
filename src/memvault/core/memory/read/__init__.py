"""The read path of conversation memory, one module per job: ``search`` (the best of a key's
memory for a query, within a budget), ``race`` (each vault against its mirror), ``page`` (a page of
a vault's messages, newest first), ``stats``, ``export`` and ``vaults`` (which vaults a key has)."""
