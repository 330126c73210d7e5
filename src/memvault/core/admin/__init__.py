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
    REVOKE_CREDENTIAL,
    REVOKE_KEY,
    AdminOperation,
    perform,
)
from memvault.core.admin.operations import OPERATIONS as KEY_STORE_OPERATIONS
from memvault.core.admin.provider_keys import (
    DELETE_PROVIDER_KEY,
    LIST_PROVIDER_KEYS,
    PROVIDER_KEY_OPERATIONS,
    RESEAL_PROVIDER_KEYS,
    SET_PROVIDER_KEY,
)

OPERATIONS = (*KEY_STORE_OPERATIONS, *PROVIDER_KEY_OPERATIONS)

__all__ = [
    "CREATE_CREDENTIAL",
    "CREATE_KEY",
    "DELETE_PROVIDER_KEY",
    "LIST_CREDENTIALS",
    "LIST_KEYS",
    "LIST_PROVIDER_KEYS",
    "OPERATIONS",
    "RESEAL_PROVIDER_KEYS",
    "REVOKE_CREDENTIAL",
    "REVOKE_KEY",
    "SET_PROVIDER_KEY",
    "Admin",
    "AdminOperation",
    "admin_caller",
    "perform",
]
