"""The TypeScript client's contract is generated from the definitions memvault checks and answers
with: the committed `.d.ts` is what the generator writes now, and the RPC method table it reads is
the one the Worker's entrypoint and the RPC functions follow. The generator's two commands in
docs/typescript.md ("Types generated from memvault's own definitions") are what these tests run."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import typescript_contract  # noqa: E402

from memvault.core.errors import MemvaultError  # noqa: E402
from memvault.runtime import rpc  # noqa: E402


def test_the_committed_contract_is_what_the_generator_writes() -> None:
    assert typescript_contract.TARGET.read_text() == typescript_contract.render(), (
        "clients/typescript/src/contract.d.ts is behind core: run scripts/typescript_contract.py")


def test_the_generator_check_fails_on_a_drifted_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drifted = tmp_path / "contract.d.ts"
    drifted.write_text(typescript_contract.render().replace("messages_accepted: number;", "messages_accepted: string;"))
    monkeypatch.setattr(typescript_contract, "TARGET", drifted)
    assert typescript_contract.main(["--check"]) == 1
    drifted.write_text(typescript_contract.render())
    assert typescript_contract.main(["--check"]) == 0


def test_every_result_field_and_error_of_core_is_in_the_contract() -> None:
    text = typescript_contract.render()
    for method in rpc.METHODS:
        for name, schema in {**method.request_schemas(), **method.result_schemas()}.items():
            body = re.search(rf"export (?:interface|type) {name}\b(.*?)\n(?:}}|export|\n)", text, re.DOTALL)
            assert body, name
            for field in schema.get("properties", {}):
                assert re.search(rf"\n  {field}\??: ", body.group(1)), (name, field)
        assert f"  {method.name}(" in text
    kinds = [MemvaultError, *MemvaultError.__subclasses__()]
    for kind in kinds:
        if kind.__module__ == MemvaultError.__module__:
            assert f"  {kind.__name__}: {kind.status};" in text


def _normal(name: str) -> str:
    return name.replace("_", "").lower()


def test_the_entrypoint_methods_are_the_table() -> None:
    tree = ast.parse((ROOT / "src" / "entry.py").read_text())
    [default] = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Default"]
    methods = {node.name: [a.arg for a in node.args.args[1:]] for node in default.body
               if isinstance(node, ast.AsyncFunctionDef) and node.name not in ("fetch", "scheduled")}
    assert set(methods) == set(rpc.BY_NAME)
    for name, params in methods.items():
        method = rpc.BY_NAME[name]
        expected = [*([method.credential] if method.credential else []),
                    *("payload" if a == method.WHOLE_INPUT else a for a in method.arguments),
                    *(["options"] if method.options else [])]
        assert [_normal(p) for p in params] == [_normal(p) for p in expected], name
