"""The protobuf messages of the OIP and grpc.health.v1 protos, from ``servegate/_generated``.

A wheel ships them, generated when it was built (``setup.py``), so an installed package needs no
protoc and no grpcio-tools. In a checkout they are generated on first import, and again when
``src/proto/grpc_service.proto`` changes (the stamp in the package records the sources' digest);
``python3 -m servegate.build`` does it ahead of time.
"""

import importlib
import os

from servegate import _codegen

_TARGET = os.path.join(_codegen.PKG_DIR, _codegen.GENERATED)


def _ensure_generated():
    protos = None
    try:
        protos = _codegen.sources()
    except FileNotFoundError:
        if _codegen.stamp(_TARGET) is not None:
            return  # an installed wheel: the modules were generated when it was built
        raise
    if _codegen.stamp(_TARGET) != _codegen.digest(protos):
        _codegen.generate(_TARGET, protos)


def load(module="grpc_service"):
    """The generated messages module of ``module``.proto."""
    _ensure_generated()
    return importlib.import_module("servegate.%s.%s_pb2" % (_codegen.GENERATED, module))
