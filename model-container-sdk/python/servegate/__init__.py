"""Servegate's Python model-container SDK: serve ``predict_batch`` as an Open Inference Protocol
(KServe v2) gRPC server that the Servegate gateway, or any OIP client, can call."""

__version__ = "0.2.0"

from servegate.container import (BATCH_SIZE, INPUT_BYTES, MAX_BATCH_SIZE, OUTPUT_NAME,  # noqa: E402
                                 SERVICE_TIME_NS, ModelContainer, serve)
from servegate.model_files import ModelPathError, model_path  # noqa: E402
from servegate.oip import GRPCInferenceServiceStub, HealthStub  # noqa: E402
from servegate.rows import ROW_ERRORS, InvalidInput  # noqa: E402
from servegate.services import PLATFORM  # noqa: E402
from servegate.tensor import (BYTES, DOUBLES, FLOATS, INTS, STRINGS, BytesBatch, TensorFormatError,  # noqa: E402
                              tensor_type)

__all__ = ["serve", "ModelContainer", "tensor_type", "TensorFormatError", "BytesBatch", "INTS", "FLOATS", "DOUBLES",
           "BYTES", "STRINGS", "SERVICE_TIME_NS", "BATCH_SIZE", "MAX_BATCH_SIZE", "INPUT_BYTES", "OUTPUT_NAME",
           "PLATFORM", "GRPCInferenceServiceStub", "HealthStub", "model_path", "ModelPathError", "InvalidInput",
           "ROW_ERRORS", "__version__"]
