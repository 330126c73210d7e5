"""Receipts: the record of what one routed call or one memory search recalled (``model``), kept in
the shared database per memory key and day (``store``), read through one parser (``commands``).
A receipt names memories by id only; their texts stay in the vaults, where forgetting reaches them."""
