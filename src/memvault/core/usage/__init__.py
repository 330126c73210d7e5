"""Usage accounting and per-key limits: what each memory key's calls cost (``meter``, ``ledger``),
how the key reads it back (``operations``), and the limits a call is admitted under (``limits``)."""
