"""The gateway's trace, continued in the container.

The gateway sends each ModelInfer call's W3C ``traceparent`` in the call's gRPC metadata. The
container logs its trace id with every call that fails (and, at DEBUG, with every call), so that
a failing query can be followed from the gateway's trace into the container's log. Where the
``opentelemetry`` package is installed (it is optional: the SDK never requires it), each call
also gets a server span under the gateway's, exported by whatever tracer provider the container
set up.
"""

import contextlib
import logging
import re

LOG = logging.getLogger("servegate")
# version 00: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")

try:
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _trace
    from opentelemetry.trace import SpanKind as _SpanKind
    from opentelemetry.trace import Status as _Status
    from opentelemetry.trace import StatusCode as _StatusCode
except ImportError:  # not installed: the trace id goes to the log only
    _trace = None


def headers(metadata):
    """A call's metadata (``context.invocation_metadata()``) as a dict of its text entries."""
    return {k: v for k, v in (metadata or ()) if isinstance(v, str)}


def trace_id(carrier):
    """The trace id of the call's well-formed ``traceparent``, else None."""
    match = _TRACEPARENT.fullmatch(carrier.get("traceparent", ""))
    return match.group(1) if match else None


@contextlib.contextmanager
def server_span(carrier, name):
    """A server span under the caller's trace while the call runs, where opentelemetry is installed."""
    if _trace is None or "traceparent" not in carrier:
        yield None
        return
    parent = _propagate.extract(carrier)
    with _trace.get_tracer("servegate").start_as_current_span(
            name, context=parent, kind=_SpanKind.SERVER, record_exception=False,
            set_status_on_exception=False) as span:
        yield span


def failed(span, trace, method, code, message):
    """Logs a failed call with its trace id (when it came with one) and marks its span."""
    if trace is not None:
        LOG.warning("%s failed trace_id=%s: %s %s", method, trace, code.name, message)
    if span is not None:
        span.set_status(_Status(_StatusCode.ERROR, "%s: %s" % (code.name, message)))
