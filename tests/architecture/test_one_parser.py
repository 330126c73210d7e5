"""Each operation of conversation memory has its input parsed in exactly one place (ARCHITECTURE.md
section 2): its parser in ``core/memory/commands.py``, called by ``perform`` alone; the surfaces
(HTTP, RPC, MCP, the CLI, the client) hand what they received to ``perform`` and check no field
themselves. Credentials and the session id are read from headers in one module, and only core
tells what kind of token a caller presented."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_import_rule import SRC, imported_modules, module_name, python_files
from test_routes_are_thin import names_used

from memvault.core.memory import commands, operations
from memvault.core.receipts import commands as receipt_commands

MEMVAULT = SRC / "memvault"
# Where the memory operations meet a transport.
SURFACES = [
    MEMVAULT / "api" / "routes" / "memory.py",
    MEMVAULT / "api" / "mcp" / "memory_tools.py",
    MEMVAULT / "runtime" / "rpc.py",
    MEMVAULT / "cli" / "memory.py",
]
CLIENT = sorted((MEMVAULT / "client").glob("*.py"))
# The field-level rules and normalisers: core's parsers use them, surfaces never do.
FIELD_PARSERS = {
    "memvault.core.memory.messages", "memvault.core.memory.commands", "memvault.core.times",
    *(f"memvault.core.contract.{name}" for name in (
        "Rule", "Text", "Choice", "WholeNumber", "Flag", "Moment", "Identifier", "IdList", "JsonObject", "ObjectList",
        "Spec", "check_id",
    )),
}
# What the operations run: reached through ``perform`` only.
INTERNALS = {
    "store_conversation", "search_memory", "read_memory", "forget", "clear_memory", "purge_old_memory",
    "memory_stats", "export_memory", "messages_from", "message_from", "parse_time", "require_time",
}
PARSERS = {name for module in (commands, receipt_commands) for name in vars(module) if name.startswith("parse_")}
CREDENTIAL_HEADERS = {"authorization", "x-memory-key", "x-memvault-brain-token", "cf-access-jwt-assertion",
                      "x-session-id"}


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def internals_reached(path: Path) -> set[str]:
    """The operations' internals a module imports by name or calls on core's ``memory`` package."""
    imported = {name.rsplit(".", 1)[1] for name in imported_modules(path) if name.startswith("memvault.core.")}
    on_package = {
        call.func.attr for call in ast.walk(tree(path))
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name) and call.func.value.id == "memory"
    }
    return (imported | on_package) & INTERNALS


def called(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        found.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return found


def test_every_operation_has_one_parser_and_a_result() -> None:
    assert [op.name for op in operations.OPERATIONS] == [
        "store", "search", "read", "forget", "clear", "purge", "stats", "export", "receipt", "receipts"]
    assert {op.parse.__name__ for op in operations.OPERATIONS} <= PARSERS | {"parse"}
    assert len({id(op.parse) for op in operations.OPERATIONS}) == len(operations.OPERATIONS)
    assert len({op.request.name for op in operations.OPERATIONS}) == len(operations.OPERATIONS)


def test_the_parsers_are_reached_through_perform_alone() -> None:
    for path in python_files():
        module = module_name(path)
        if module in {"memvault.core.memory.commands", "memvault.core.memory.operations", "memvault.core.receipts.commands"}:
            continue
        assert not names_used(tree(path)) & PARSERS, f"{module} names an operation's parser"
    source = tree(MEMVAULT / "core" / "memory" / "operations.py")
    callers = [f.name for f in ast.walk(source) if isinstance(f, ast.AsyncFunctionDef | ast.FunctionDef)
               and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "parse"
                       for c in ast.walk(f))]
    assert callers == ["perform"]


@pytest.mark.parametrize("path", SURFACES + CLIENT, ids=lambda p: module_name(p))
def test_surfaces_check_no_field_themselves_and_call_no_internals(path: Path) -> None:
    imported = imported_modules(path)
    assert not {name for name in imported if name in FIELD_PARSERS or name.rsplit(".", 1)[0] in FIELD_PARSERS}
    assert not internals_reached(path)
    # Besides the operations, only `memvault import` reaches core's memory: the records of an export
    # have their own parser there (``transfer.held_from``).
    allowed = {
        "memvault.core.memory.operations": {"perform", "Operation", *(op.name.upper() for op in operations.OPERATIONS)},
        "memvault.core.memory.transfer": {"held_from", "store_held", "HeldMessage"},
    }
    reached = {name for name in imported if name.startswith("memvault.core.memory.")}
    assert reached <= {*allowed, *(f"{module}.{name}" for module, names in allowed.items() for name in names)}


@pytest.mark.parametrize("path", SURFACES, ids=lambda p: module_name(p))
def test_each_memory_surface_runs_the_operations_through_perform(path: Path) -> None:
    assert "perform" in called(tree(path))


def header_reads(path: Path) -> list[str]:
    """``….get("<credential or session header>")`` calls in a module."""
    found = []
    for call in (n for n in ast.walk(tree(path)) if isinstance(n, ast.Call)):
        if isinstance(call.func, ast.Attribute) and call.func.attr == "get" and call.args:
            first = call.args[0]
            if isinstance(first, ast.Constant) and str(first.value).lower() in CREDENTIAL_HEADERS:
                found.append(str(first.value))
    return found


def test_credentials_and_the_session_are_read_from_headers_in_one_place() -> None:
    readers = {module_name(path): header_reads(path) for path in python_files()}
    assert {module: reads for module, reads in readers.items() if reads} == {}
    source = (MEMVAULT / "api" / "dependencies.py").read_text()
    assert 'headers.get(name.lower())' in source  # the one reader every name goes through


def test_only_core_tells_what_kind_of_token_a_caller_presented() -> None:
    for path in python_files():
        module = module_name(path)
        if module.startswith("memvault.core."):
            continue
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
                argument = node.args[0] if node.args else None
                assert not (isinstance(argument, ast.Constant) and str(argument.value).startswith(("mk_", "bt_"))), module
        assert "memvault.core.credentials.keys.PREFIX" not in imported_modules(path), module
