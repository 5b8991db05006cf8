"""pytest support for the Python containers: start a container's serve.py as a real child process
on a free loopback port and call it through a real gRPC client."""

import os
import subprocess
import sys

import grpc
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "model-container-sdk", "python"))

import fashion_mnist  # noqa: E402
from servegate.oip import GRPCInferenceServiceStub, pb  # noqa: E402

HELDOUT = 2000  # the first 2,000 test images, as the Java ONNX accuracy test uses


class ContainerProcess:
    def __init__(self, script, env):
        full_env = dict(os.environ, HOST="127.0.0.1", PORT="0", **env)
        self.process = subprocess.Popen([sys.executable, script], env=full_env, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("READY port="):
            self.process.kill()
            raise AssertionError("%s did not become ready: %r" % (script, line))
        self.port = int(line.strip().split("=")[1])
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.port)
        self.stub = GRPCInferenceServiceStub(self.channel)

    def predict(self, model, images):
        """Labels (as text) for a batch of [n, 784] float images, in one ModelInfer call."""
        req = pb.ModelInferRequest(model_name=model)
        req.inputs.add(name="input", datatype="FP32", shape=list(images.shape))
        req.raw_input_contents.append(np.ascontiguousarray(images, "<f4").tobytes())
        resp = self.stub.ModelInfer(req, timeout=60)
        assert resp.outputs[0].datatype == "BYTES" and list(resp.outputs[0].shape) == [len(images)]
        raw, out, pos = resp.raw_output_contents[0], [], 0
        while pos < len(raw):
            n = int.from_bytes(raw[pos:pos + 4], "little")
            out.append(raw[pos + 4:pos + 4 + n].decode())
            pos += 4 + n
        return out

    def close(self):
        self.channel.close()
        self.process.terminate()
        assert self.process.wait(30) == 0


@pytest.fixture
def start_container():
    started = []

    def start(script, **env):
        c = ContainerProcess(script, env)
        started.append(c)
        return c

    yield start
    for c in started:
        c.close()


@pytest.fixture(scope="session")
def heldout():
    x, y = fashion_mnist.load("test")
    return x[:HELDOUT], y[:HELDOUT]


class Plant:
    """Unpickling this calls open(marker, "w"): the file appears exactly when the pickle's code runs."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


@pytest.fixture
def planted_pickle(tmp_path):
    """(a pickle in its own directory that creates a marker file when loaded, the marker's path)."""
    import pickle

    directory = tmp_path / "planted"
    directory.mkdir()
    marker = tmp_path / "code-ran"
    path = directory / "model.bin"
    path.write_bytes(pickle.dumps(Plant(str(marker))))
    return path, marker


def run_to_exit(script, timeout=120, **env):
    """Runs a container that is expected to refuse to start: (exit code, stdout + stderr)."""
    full_env = dict(os.environ, HOST="127.0.0.1", PORT="0", **env)
    done = subprocess.run([sys.executable, script], env=full_env, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr
