"""The installed package: typing markers present, and the stubs describing exactly what the
compiled module exposes."""

import ast
import inspect
import os

import strata
import strata._strata as core

PACKAGE_DIR = os.path.dirname(strata.__file__)


def stub_tree():
    with open(os.path.join(PACKAGE_DIR, "_strata.pyi")) as f:
        return ast.parse(f.read())


def test_package_is_typed():
    assert os.path.exists(os.path.join(PACKAGE_DIR, "py.typed"))
    assert os.path.exists(os.path.join(PACKAGE_DIR, "_strata.pyi"))


def test_extension_uses_the_stable_abi():
    assert core.__file__.endswith(".abi3.so")


def test_stubs_match_the_module():
    tree = stub_tree()
    stub_classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    stub_functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    runtime = {name for name in dir(core) if not name.startswith("_")}
    assert set(stub_classes) | stub_functions == runtime
    for name, node in stub_classes.items():
        cls = getattr(core, name)
        assert inspect.isclass(cls)
        stub_members = {
            item.name for item in node.body if isinstance(item, ast.FunctionDef)
        }
        for member in stub_members:
            assert hasattr(cls, member), (name, member)
        if not issubclass(cls, BaseException):
            public = {m for m in vars(cls) if not m.startswith("_")}
            assert public <= stub_members, (name, public - stub_members)


def test_package_reexports_everything():
    for name in strata.__all__:
        assert hasattr(strata, name)
    assert strata.DB is core.DB
