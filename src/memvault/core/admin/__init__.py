"""The admin surface: the operations that manage the key store (memory keys and brain credentials)
for whoever holds the admin credential, so a deployed instance is usable without touching its
database. HTTP (`/v1/admin/…`) and the CLI hand plain data to ``perform``; every action lands in
the event log."""

from memvault.core.admin.credential import Admin, admin_caller
from memvault.core.admin.operations import (
    CREATE_CREDENTIAL,
    CREATE_KEY,
    LIST_CREDENTIALS,
    LIST_KEYS,
    OPERATIONS,
    REVOKE_CREDENTIAL,
    REVOKE_KEY,
    AdminOperation,
    perform,
)

__all__ = [
    "CREATE_CREDENTIAL",
    "CREATE_KEY",
    "LIST_CREDENTIALS",
    "LIST_KEYS",
    "OPERATIONS",
    "REVOKE_CREDENTIAL",
    "REVOKE_KEY",
    "Admin",
    "AdminOperation",
    "admin_caller",
    "perform",
]
