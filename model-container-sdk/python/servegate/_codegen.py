"""Generates the protobuf message modules of the SDK's two protos with ``protoc`` (standard library
only: the wheel build imports this file on its own, before the package's dependencies exist).

The output must load on every protobuf runtime from 4.21 to 7.x, so it comes from a protoc of
3.20 or later (the builder-style code that all of them import) with the runtime-version gate
of protoc 26+ removed: that gate refuses any runtime older than the protoc, which would tie a
wheel to the protobuf of the machine that built it. The gRPC service glue needs no generated
code (see ``_services``), so no grpc plugin is involved.

protoc is ``$PROTOC``, else the newest of those at hand that is 3.20 or later: the one bundled
with ``grpcio-tools``, ``protoc`` on the PATH, and the newest one Maven has downloaded to
``~/.m2/repository/com/google/protobuf/protoc`` for the Java build.
"""

import glob
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
GENERATED = "_generated"  # the package, inside servegate, that holds the generated modules
STAMP = "SOURCE_SHA256"
HEALTH_PROTO = os.path.join(PKG_DIR, "health.proto")
MIN_PROTOC = (3, 20)

_GATE_IMPORT = re.compile(r"^from google\.protobuf import runtime_version as _runtime_version\n", re.M)
_GATE_CALL = re.compile(r"^_runtime_version\.ValidateProtobufRuntimeVersion\((?:.|\n)*?^\)\n", re.M)


def oip_proto():
    """The OIP proto: ``$SERVEGATE_PROTO``, else ``src/proto/grpc_service.proto`` of the checkout
    this package lives in, else a copy beside this file; None when there is none (an installed
    wheel carries only the generated modules)."""
    env = os.environ.get("SERVEGATE_PROTO")
    if env:
        return env
    here = PKG_DIR
    for _ in range(4):
        here = os.path.dirname(here)
        candidate = os.path.join(here, "src", "proto", "grpc_service.proto")
        if os.path.isfile(candidate):
            return candidate
    bundled = os.path.join(PKG_DIR, "grpc_service.proto")
    return bundled if os.path.isfile(bundled) else None


def sources():
    """{file name: proto source bytes} of the protos to generate; FileNotFoundError without the OIP one."""
    proto = oip_proto()
    if proto is None:
        raise FileNotFoundError("grpc_service.proto not found: build from a servegate checkout, set SERVEGATE_PROTO, "
                                "or copy src/proto/grpc_service.proto to " + os.path.join(PKG_DIR, "grpc_service.proto"))
    result = {}
    for name, path in (("grpc_service.proto", proto), ("health.proto", HEALTH_PROTO)):
        with open(path, "rb") as f:
            result[name] = f.read()
    return result


def digest(protos):
    return hashlib.sha256(b"".join(protos[n] for n in sorted(protos))).hexdigest()


def _version(command):
    try:
        out = subprocess.run(command + ["--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _new_enough(version):
    # protoc numbered 3.x until 3.21, then 22, 23, ... (the "4.x" of Maven's artifacts is the Java runtime's)
    return version is not None and (version[0] > 3 or version >= MIN_PROTOC)


def _maven_protocs():
    pattern = os.path.join(os.path.expanduser("~"), ".m2", "repository", "com", "google", "protobuf", "protoc", "*",
                           "protoc-*-linux-x86_64.exe")

    def key(path):
        return [int(p) for p in re.findall(r"\d+", os.path.basename(os.path.dirname(path)))]

    return sorted(glob.glob(pattern), key=key, reverse=True)


def find_protoc(work_dir):
    """A protoc command (list of arguments) that writes builder-style Python: ``$PROTOC``, else the
    newest of grpcio-tools' own, ``protoc`` on the PATH and Maven's (the newest writes the code the
    newest protobuf runtimes expect; the gate removed, older runtimes load it too). RuntimeError
    naming the places tried when none is 3.20 or later."""
    env = os.environ.get("PROTOC")
    if env:
        return [env]
    candidates, tried = [], []
    bundled = [sys.executable, "-m", "grpc_tools.protoc"]
    candidates.append(("grpcio-tools", bundled, _version(bundled)))
    path = shutil.which("protoc")
    candidates.append(("protoc on PATH", [path] if path else None, _version([path]) if path else None))
    mavens = _maven_protocs()
    if mavens:
        exe = os.path.join(work_dir, "protoc")  # Maven leaves it without the execute bit
        shutil.copyfile(mavens[0], exe)
        os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
        candidates.append(("Maven's protoc", [exe], _version([exe])))
    else:
        candidates.append(("Maven's protoc", None, None))
    usable = [(version, command) for _, command, version in candidates if command and _new_enough(version)]
    if usable:
        return max(usable, key=lambda c: c[0])[1]
    for name, _, version in candidates:
        tried.append("%s (%s)" % (name, ".".join(map(str, version)) if version else "absent"))
    raise RuntimeError("no protoc >= 3.20 to generate the servegate stubs with; tried " + ", ".join(tried)
                       + ". Install one (Debian: apt-get install protobuf-compiler; pip: grpcio-tools) or set PROTOC")


def generate(target, protos=None):
    """Writes the package ``target`` (a directory): ``grpc_service_pb2``, ``health_pb2``, and a stamp
    with the sources' digest. Written beside and renamed into place, so a reader never sees half."""
    protos = protos if protos is not None else sources()
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".servegate-gen-", dir=parent)
    try:
        src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
        os.makedirs(src)
        os.makedirs(out)
        for name, text in protos.items():
            with open(os.path.join(src, name), "wb") as f:
                f.write(text)
        protoc = find_protoc(tmp)
        run = subprocess.run(protoc + ["-I" + src, "--python_out=" + out] + [os.path.join(src, n) for n in sorted(protos)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError("%s failed (exit %d): %s" % (" ".join(protoc), run.returncode, run.stderr.strip()))
        for name in os.listdir(out):
            path = os.path.join(out, name)
            with open(path) as f:
                code = f.read()
            with open(path, "w") as f:
                f.write(_GATE_CALL.sub("", _GATE_IMPORT.sub("", code)))
        with open(os.path.join(out, "__init__.py"), "w") as f:
            f.write('"""Protobuf messages of the OIP and grpc.health.v1 protos, generated at build time."""\n')
        with open(os.path.join(out, STAMP), "w") as f:
            f.write(digest(protos) + "\n")
        if stamp(target) == digest(protos):
            return target  # another process generated the same meanwhile
        if os.path.isdir(target):
            shutil.rmtree(target)
        try:
            os.rename(out, target)
        except OSError:
            if not os.path.isdir(target):  # another process winning the race is fine
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def stamp(target):
    try:
        with open(os.path.join(target, STAMP)) as f:
            return f.read().strip()
    except OSError:
        return None
