"""The SDK as a user gets it: a wheel built here (its stubs generated at build time) installs into a
fresh virtualenv outside the checkout, and a model served from it answers over gRPC, on protobuf's
C++ and pure-Python runtimes (check_install.sh does the installing and serving)."""

import glob
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

SDK = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CHECK = os.path.join(SDK, "check_install.sh")


def build_wheel(out, **env):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation", "--no-deps", "-w",
                    str(out), SDK], check=True, env=dict(os.environ, **env), cwd=str(out.parent))
    for leftover in ("build", "servegate.egg-info"):  # setuptools' work files in the source tree
        shutil.rmtree(os.path.join(SDK, leftover), ignore_errors=True)
    (wheel,) = glob.glob(os.path.join(str(out), "servegate-*.whl"))
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("dist"))


def test_the_wheel_carries_generated_stubs_without_a_runtime_gate(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert {"servegate/_generated/grpc_service_pb2.py", "servegate/_generated/health_pb2.py"} <= set(names)
        assert not any(n.endswith("_pb2_grpc.py") for n in names), "service stubs come from the descriptors"
        assert b"ValidateProtobufRuntimeVersion" not in z.read("servegate/_generated/grpc_service_pb2.py")


@pytest.mark.parametrize("implementation", ["cpp", "python"])
def test_installed_wheel_serves_outside_the_checkout(wheel, implementation):
    done = subprocess.run(["bash", CHECK, wheel, sys.executable], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=implementation))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check_install: OK (pip install into a virtualenv" in done.stdout
    assert "(%s)" % implementation in done.stdout and "/venv/lib/" in done.stdout


def test_stubs_from_a_current_protoc_load_here_too(tmp_path):
    """protoc 26+ writes a gate refusing older protobuf runtimes; the build removes it. Maven's protoc
    (downloaded by the Java build) is such a protoc."""
    mavens = glob.glob(os.path.expanduser("~/.m2/repository/com/google/protobuf/protoc/*/protoc-*-linux-x86_64.exe"))
    if not mavens:
        pytest.skip("no protoc downloaded by Maven yet (the Java build fetches it)")
    protoc = tmp_path / "protoc"
    shutil.copyfile(sorted(mavens)[-1], protoc)
    protoc.chmod(0o755)
    (tmp_path / "dist").mkdir()
    wheel = build_wheel(tmp_path / "dist", PROTOC=str(protoc))
    with zipfile.ZipFile(wheel) as z:
        assert b"NO CHECKED-IN PROTOBUF GENCODE" in z.read("servegate/_generated/grpc_service_pb2.py")
    done = subprocess.run(["bash", CHECK, wheel, sys.executable], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "check_install: OK" in done.stdout, done.stdout + done.stderr
