"""``python3 -m servegate.build``: generates the OIP stubs now (e.g. in a Dockerfile) and prints where."""

from servegate import _stubs

if __name__ == "__main__":
    print(_stubs.generate())
