"""Python gRPC stubs for the OIP proto, generated on first import and cached (never committed).

The proto is found at ``$SERVEGATE_PROTO``, else at ``src/proto/grpc_service.proto`` in the
repository checkout this package lives in, else at ``servegate/grpc_service.proto`` (where the
Dockerfiles copy it). Stubs are generated with ``grpc_tools.protoc`` into
``<cache>/oip-<sha of the proto>/servegate_oip`` where <cache> is ``$SERVEGATE_STUB_DIR``, else
``servegate/_generated`` next to this file if writable, else ``~/.cache/servegate``. Generation
writes to a temporary directory and renames it into place, so concurrent first imports are safe;
a changed proto gets a new directory. ``python3 -m servegate.build`` does it ahead of time.
The standard ``grpc.health.v1`` proto (``servegate/health.proto``) is generated with it.
"""

import hashlib
import importlib
import os
import shutil
import sys
import tempfile

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_PKG = "servegate_oip"  # the generated modules' package; the proto package stays `inference`


def proto_path():
    """The OIP proto this package serves."""
    env = os.environ.get("SERVEGATE_PROTO")
    if env:
        return env
    here = _PKG_DIR
    for _ in range(6):
        candidate = os.path.join(here, "src", "proto", "grpc_service.proto")
        if os.path.isfile(candidate):
            return candidate
        here = os.path.dirname(here)
    bundled = os.path.join(_PKG_DIR, "grpc_service.proto")
    if os.path.isfile(bundled):
        return bundled
    raise FileNotFoundError("grpc_service.proto not found: set SERVEGATE_PROTO, run from a servegate checkout, "
                            "or copy src/proto/grpc_service.proto to " + bundled)


def _cache_root():
    env = os.environ.get("SERVEGATE_STUB_DIR")
    if env:
        return env
    local = os.path.join(_PKG_DIR, "_generated")
    try:
        os.makedirs(local, exist_ok=True)
        if os.access(local, os.W_OK):
            return local
    except OSError:
        pass
    return os.path.join(os.path.expanduser("~"), ".cache", "servegate")


def generate():
    """Generates the stubs if missing; returns the directory to put on sys.path."""
    proto = proto_path()
    sources = {}
    for name, path in (("grpc_service.proto", proto), ("health.proto", os.path.join(_PKG_DIR, "health.proto"))):
        with open(path, "rb") as f:
            sources[name] = f.read()
    root = _cache_root()
    digest = hashlib.sha256(b"".join(sources[n] for n in sorted(sources))).hexdigest()[:16]
    target = os.path.join(root, "oip-" + digest)
    if os.path.isfile(os.path.join(target, _PKG, "health_pb2_grpc.py")):
        return target
    from grpc_tools import protoc  # build-time dependency, only needed on a cache miss

    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".oip-", dir=root)
    try:
        src = os.path.join(tmp, "src", _PKG)
        out = os.path.join(tmp, "out")
        os.makedirs(src)
        os.makedirs(os.path.join(out, _PKG))
        for name, source in sources.items():
            with open(os.path.join(src, name), "wb") as f:
                f.write(source)
        open(os.path.join(out, _PKG, "__init__.py"), "w").close()
        rc = protoc.main(["grpc_tools.protoc", "-I" + os.path.join(tmp, "src"), "--python_out=" + out,
                          "--grpc_python_out=" + out] + [os.path.join(src, name) for name in sorted(sources)])
        if rc != 0:
            raise RuntimeError("grpc_tools.protoc failed (exit %d) on %s" % (rc, ", ".join(sorted(sources))))
        try:
            os.rename(out, target)
        except OSError:
            if not os.path.isdir(target):  # another process winning the race is fine
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def load(module="grpc_service"):
    """Returns (messages module, grpc module) of the generated stubs of ``module``.proto."""
    directory = generate()
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return (importlib.import_module("%s.%s_pb2" % (_PKG, module)),
            importlib.import_module("%s.%s_pb2_grpc" % (_PKG, module)))
