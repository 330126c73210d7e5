"""Each brain operation's input is parsed in exactly one place: one parser in core (a parse_*
function, or the shared checker over an input class whose fields say everything), named by the
operation table and called nowhere else; every surface (HTTP, RPC, MCP, scripts) hands plain data
to ``Operation.perform`` and neither checks fields itself nor calls an operation around it."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from test_import_rule import ROOT, SRC, imported_modules, module_name, python_files

from memvault.core.brain import OPERATIONS, commands, fact_input, skill_proposal_input

BRAIN = SRC / "memvault" / "core" / "brain"
TABLE = BRAIN / "operations.py"
# Where a brain operation is reached from outside core.
SURFACES = [
    SRC / "memvault" / "api" / "routes" / "brain.py",
    SRC / "memvault" / "api" / "brain_http.py",
    SRC / "memvault" / "api" / "brain_schemas.py",
    SRC / "memvault" / "api" / "mcp" / "brain_tools.py",
    SRC / "memvault" / "runtime" / "rpc.py",
    SRC / "memvault" / "core" / "operations" / "maintenance.py",
    ROOT / "scripts" / "brain_sync.py",
    *sorted((ROOT / "scripts" / "brain_folder").glob("*.py")),
]
# The modules that declare an operation's input and its parser, and the checker they share.
PARSING = {"memvault.core.brain.commands", "memvault.core.brain.fact_input", "memvault.core.brain.skill_proposal_input",
           "memvault.core.brain.wire"}
# What a surface may not reach for: the inputs and their parsers, and pydantic's checks.
FORBIDDEN_IMPORTS = ("memvault.core.brain.commands", "memvault.core.brain.fact_input",
                     "memvault.core.brain.skill_proposal_input",
                     "memvault.core.brain.wire.parse_fields", "pydantic")


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def called_names(node: ast.AST) -> list[str]:
    names = []
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            names.append(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def parsers_named_by_the_table() -> dict[str, str]:
    """Operation constant -> the parser its ``Operation(...)`` names: a parse_* function, or the
    input class that ``_fields`` checks."""
    found = {}
    for node in tree(TABLE).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Call):
            parse = node.value.args[4]
            if isinstance(parse, ast.Call) and ast.unparse(parse.func) == "_fields":
                (cls,) = parse.args
                assert isinstance(cls, ast.Attribute), ast.dump(parse)
                found[ast.unparse(node.target)] = cls.attr
                continue
            names = [n.attr for n in ast.walk(parse) if isinstance(n, ast.Attribute) and n.attr.startswith("parse_")]
            assert len(names) == 1, ast.dump(parse)
            found[ast.unparse(node.target)] = names[0]
    return found


def test_every_operation_names_one_parser_defined_once_in_core() -> None:
    parsers = parsers_named_by_the_table()
    assert len(parsers) == len(OPERATIONS)
    definitions: dict[str, list[str]] = {}
    for path in python_files():
        # A class name need only be one in the brain; a parser's name is one everywhere.
        kinds = ast.FunctionDef | ast.ClassDef if path.is_relative_to(BRAIN) else ast.FunctionDef
        for node in ast.walk(tree(path)):
            if isinstance(node, kinds) and node.name in parsers.values():
                definitions.setdefault(node.name, []).append(module_name(path))
    homes = (["memvault.core.brain.commands"], ["memvault.core.brain.fact_input"],
             ["memvault.core.brain.skill_proposal_input"])
    assert all(modules in homes for modules in definitions.values()), definitions
    assert set(definitions) == set(parsers.values())


def test_a_parser_is_called_by_the_operation_table_alone() -> None:
    parsers = {name for name in parsers_named_by_the_table().values() if name.startswith("parse_")} | {"parse_fields"}
    callers: dict[str, set[str]] = {}
    for path in python_files():
        module = module_name(path)
        for name in called_names(tree(path)):
            if name in parsers:
                callers.setdefault(name, set()).add(module)
    # parse_fields is the checker the parsers share; nothing beside them and the table parses an input.
    assert callers.pop("parse_fields") <= {*PARSING, "memvault.core.brain.operations"}
    assert all(modules <= {"memvault.core.brain.commands", "memvault.core.brain.skill_proposal_input"}
               for modules in callers.values()), callers


def test_each_operation_runs_on_the_command_its_parser_returns() -> None:
    for name, parser in parsers_named_by_the_table().items():
        op = OPERATIONS[name.lower()]
        found = (getattr(commands, parser, None) or getattr(skill_proposal_input, parser, None)
                 or getattr(fact_input, parser))
        returned = found if isinstance(found, type) else typing.get_type_hints(found)["return"]
        run = typing.get_type_hints(op.run)
        (command,) = [hint for param, hint in run.items() if param not in ("deps", "credential", "return")]
        assert command is returned, name
        assert run["return"] == op.output, name


def brain_part(path: Path) -> ast.AST:
    """What of a surface reaches the brain: all of it, or in ``runtime/rpc.py`` (which serves
    conversation memory too) its brain methods and their helpers, and ``invoke``, which every RPC
    method goes through."""
    module = tree(path)
    if path.name != "rpc.py":
        return module
    part = [node for node in module.body if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
            and node.name.lstrip("_").startswith(("brain", "given", "invoke"))]
    assert len(part) >= 4
    return ast.Module(body=part, type_ignores=[])


def test_surfaces_hand_plain_data_to_perform_and_check_nothing_themselves() -> None:
    operations = {op.run.__name__ for op in OPERATIONS.values()}
    parsers = {*parsers_named_by_the_table().values(), "parse_fields", "check_item", "check_batch", "check_skill"}
    for path in SURFACES:
        imports = imported_modules(path)
        assert not {name for name in imports if name.startswith(FORBIDDEN_IMPORTS)}, path.name
        part = brain_part(path)
        calls = called_names(part)
        assert not set(calls) & operations, (path.name, set(calls) & operations)
        assert not set(calls) & parsers, path.name
        raised = {ast.unparse(node.exc) for node in ast.walk(part) if isinstance(node, ast.Raise) and node.exc}
        assert not {text for text in raised if "InvalidInput" in text}, path.name
    assert "perform" in called_names(tree(SURFACES[0]))
