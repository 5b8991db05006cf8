"""``python3 -m servegate.build``: generates the protobuf modules of a checkout now (e.g. before
copying it to a machine without protoc) and prints where they are."""

from servegate import _codegen

if __name__ == "__main__":
    import os

    target = os.path.join(_codegen.PKG_DIR, _codegen.GENERATED)
    print(_codegen.generate(target))
