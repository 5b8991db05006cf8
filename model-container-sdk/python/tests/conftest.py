import os
import sys

# the SDK is used from the checkout, not installed
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import pytest  # noqa: E402

from oip_testing import Server  # noqa: E402


@pytest.fixture
def server_factory():
    servers = []

    def make(predict_batch, **kw):
        s = Server(predict_batch, **kw)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()
