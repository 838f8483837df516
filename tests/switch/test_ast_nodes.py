"""subtree: the fast scan the fused function's passes use instead of ast.walk."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from p4switch.ast_nodes import subtree

SOURCES = sorted((Path(__file__).parents[2] / "p4switch").glob("*.py"))


@pytest.mark.parametrize("path", SOURCES[:12], ids=lambda p: p.name)
def test_subtree_holds_the_nodes_ast_walk_yields_each_after_its_holder(path):
    tree = ast.parse(path.read_text())
    walked = [n for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
    scanned = subtree(tree)
    assert len(scanned) == len(walked)
    assert {id(n) for n in scanned} == {id(n) for n in walked}
    position = {id(n): i for i, n in enumerate(scanned)}
    for node in walked:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):
                assert position[id(node)] < position[id(child)]


def test_subtree_of_a_part_is_that_part_only():
    fn = ast.parse("def f(a):\n    for x in a:\n        y = x\n    return y\n").body[0]
    loop = fn.body[0]
    names = {n.id for n in subtree(loop) if isinstance(n, ast.Name)}
    assert names == {"x", "a", "y"}
    assert subtree(loop)[0] is loop
