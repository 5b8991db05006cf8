"""The gRPC services of a :class:`~servegate.container.ModelContainer`: OIP and grpc.health.v1."""

import grpc

from servegate import oip, tracing
from servegate.oip import health_pb, pb

PLATFORM = "servegate-python"
_HEALTH_SERVICES = ("", oip.OIP_SERVICE)  # "" is what Kubernetes' grpc probe asks when it names none


class Abort(Exception):
    """Ends a call with ``code`` and ``message``."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class OipService:
    """The OIP methods a model container serves; the repository ones answer UNIMPLEMENTED."""

    def __init__(self, container):
        self.c = container

    def handler(self):
        methods = {name: getattr(self, name) for name in
                   ("ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata", "ModelInfer")}
        # ModelInfer reads the request's raw contents where they arrived (servegate.wire)
        return oip.generic_handler(pb, oip.OIP_SERVICE, methods, raw_methods=("ModelInfer",))

    async def ServerLive(self, request, context):
        return pb.ServerLiveResponse(live=True)

    async def ServerReady(self, request, context):
        return pb.ServerReadyResponse(ready=self.c.ready)

    async def ModelReady(self, request, context):
        await self._require_model(request, context)
        return pb.ModelReadyResponse(ready=self.c.ready)

    async def ServerMetadata(self, request, context):
        from servegate import __version__
        return pb.ServerMetadataResponse(name=PLATFORM, version=__version__)

    async def ModelMetadata(self, request, context):
        await self._require_model(request, context)
        return self.c.metadata()

    async def ModelInfer(self, data, context):
        carrier = tracing.headers(context.invocation_metadata())
        trace = tracing.trace_id(carrier)
        if trace is not None:
            tracing.LOG.debug("ModelInfer trace_id=%s", trace)
        with tracing.server_span(carrier, "inference.GRPCInferenceService/ModelInfer") as span:
            try:
                return await self.c.infer(data)
            except Abort as e:
                tracing.failed(span, trace, "ModelInfer", e.code, e.message)
                await context.abort(e.code, e.message)

    async def _require_model(self, request, context):
        try:
            self.c.require_model(request.name, request.version)
        except Abort as e:
            await context.abort(e.code, e.message)


class HealthService:
    """grpc.health.v1: "" and the OIP service are SERVING exactly while the container is ready."""

    def __init__(self, container):
        self.c = container

    def handler(self):
        return oip.generic_handler(health_pb, oip.HEALTH_SERVICE, {"Check": self.Check, "Watch": self.Watch})

    async def Check(self, request, context):
        if request.service not in _HEALTH_SERVICES:
            await context.abort(grpc.StatusCode.NOT_FOUND, "unknown service '%s'" % bounded(request.service))
        return health_pb.HealthCheckResponse(status=self.c.health_status())

    async def Watch(self, request, context):
        if request.service not in _HEALTH_SERVICES:
            yield health_pb.HealthCheckResponse(status=health_pb.HealthCheckResponse.SERVICE_UNKNOWN)
            return
        while True:
            changed = self.c.health_changed
            yield health_pb.HealthCheckResponse(status=self.c.health_status())
            if self.c.stopping:
                return  # draining: NOT_SERVING was sent; an open stream must not hold up the drain
            await changed.wait()


def bounded(text, limit=200):
    """``text`` for an error message: a name of any length must not make an error of that length."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "...(%d characters)" % len(text)
