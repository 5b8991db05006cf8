"""Builds the servegate wheel with its protobuf modules generated from the repository's
src/proto/grpc_service.proto and servegate/health.proto (servegate/_codegen.py), so that an
installed package needs neither the protos nor protoc."""

import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _codegen():
    # by path: importing the servegate package would need its run-time dependencies
    spec = importlib.util.spec_from_file_location("servegate_codegen", os.path.join(HERE, "servegate", "_codegen.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        codegen = _codegen()
        target = os.path.join(self.build_lib, "servegate", codegen.GENERATED)
        codegen.generate(target)
        self.announce("generated %s" % target, level=2)


setup(cmdclass={"build_py": BuildWithStubs})
