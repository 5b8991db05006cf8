"""Servegate's Python model-container SDK: serve ``predict_batch`` as an Open Inference Protocol
(KServe v2) gRPC server that the Servegate gateway, or any OIP client, can call."""

__version__ = "0.1.0"

from servegate.container import (BATCH_SIZE, OUTPUT_NAME, PLATFORM, SERVICE_TIME_NS,  # noqa: E402
                                 ModelContainer, serve)
from servegate.tensor import (BYTES, DOUBLES, FLOATS, INTS, STRINGS, TensorFormatError,  # noqa: E402
                              tensor_type)

__all__ = ["serve", "ModelContainer", "tensor_type", "TensorFormatError", "INTS", "FLOATS", "DOUBLES", "BYTES",
           "STRINGS", "SERVICE_TIME_NS", "BATCH_SIZE", "OUTPUT_NAME", "PLATFORM", "__version__"]
