"""The OIP (KServe v2) and grpc.health.v1 messages, with gRPC client stubs and server handlers
made from their service descriptors.

Code that grpcio-tools generates for services checks the grpcio version it was generated for,
which would tie the package to the build machine's grpcio; the descriptors say everything the
stubs need, so they are built here, for any grpcio from 1.51 on.
"""

import grpc

from servegate import _stubs

pb = _stubs.load()
health_pb = _stubs.load("health")
OIP_SERVICE = "inference.GRPCInferenceService"
HEALTH_SERVICE = "grpc.health.v1.Health"


def _service(messages, full_name):
    return messages.DESCRIPTOR.services_by_name[full_name.rsplit(".", 1)[1]]


def _classes(messages, method):
    return getattr(messages, method.input_type.name), getattr(messages, method.output_type.name)


def stub_class(messages, full_name):
    """A client stub class: one multi-callable attribute per method of the service, as generated stubs have."""
    service = _service(messages, full_name)

    def __init__(self, channel):
        for method in service.methods:
            request, response = _classes(messages, method)
            factory = channel.unary_stream if method.server_streaming else channel.unary_unary
            setattr(self, method.name, factory("/%s/%s" % (service.full_name, method.name),
                                               request_serializer=request.SerializeToString,
                                               response_deserializer=response.FromString))

    return type(service.name + "Stub", (), {"__init__": __init__, "__doc__": "Client stub of " + service.full_name})


def generic_handler(messages, full_name, implementations, raw_methods=()):
    """A handler serving ``implementations`` ({method name: function}); other methods of the service
    get UNIMPLEMENTED. Methods in ``raw_methods`` take the request's bytes and return the response's
    bytes themselves."""
    service = _service(messages, full_name)
    handlers = {}
    for name, function in implementations.items():
        method = service.methods_by_name[name]
        request, response = _classes(messages, method)
        deserialize, serialize = (None, None) if name in raw_methods else (request.FromString, response.SerializeToString)
        make = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
        handlers[name] = make(function, request_deserializer=deserialize, response_serializer=serialize)
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


GRPCInferenceServiceStub = stub_class(pb, OIP_SERVICE)
HealthStub = stub_class(health_pb, HEALTH_SERVICE)
