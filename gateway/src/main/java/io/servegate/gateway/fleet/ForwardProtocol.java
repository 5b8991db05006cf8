package io.servegate.gateway.fleet;

import com.google.protobuf.ByteString;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.servegate.core.scheduling.Priority;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.registry.Names;
import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The gateways' internal hop: {@code servegate.fleet.Forward/Predict}, one query for a model
 * version its owner schedules ({@code PredictMany}: several, {@link #PREDICT_MANY}), in the Open
 * Inference Protocol's own messages. The request carries
 * one input row (raw contents) and, as parameters, the forwarding member and the owner and epoch
 * it routed by, and the app the query is for ({@value #TENANT}); the call's gRPC deadline is what remains of the query's, and its metadata the
 * fleet's secret ({@link FleetSecret}). The answer is always a response (transport failures,
 * refused secrets and invalid input aside): the output, or the dispatch failure the owner's
 * scheduler gave, and the member that scheduled it; a receiver that does not own the version says
 * so ({@link #STALE_ROUTE}), and the sender reads the fleet again and routes once more.
 */
final class ForwardProtocol {

    static final String SERVICE = "servegate.fleet.Forward";

    static final MethodDescriptor<ModelInferRequest, ModelInferResponse> PREDICT =
            MethodDescriptor.<ModelInferRequest, ModelInferResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Predict"))
                    .setRequestMarshaller(ProtoUtils.marshaller(ModelInferRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(ModelInferResponse.getDefaultInstance()))
                    .build();

    /**
     * Several queries for one model version, coalesced by the sender ({@link ForwardBatcher}):
     * the request's input holds their rows ({@code [N, ...]}) and a second input,
     * {@value #REMAINING}, each row's remaining deadline, and the parameter {@value #TENANTS} each
     * row's app; the answer is a stream of one response
     * per row, in the order they are answered, each naming its row ({@value #ROW}).
     */
    static final MethodDescriptor<ModelInferRequest, ModelInferResponse> PREDICT_MANY =
            PREDICT.toBuilder().setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "PredictMany")).build();

    /** The most rows a {@link #PREDICT_MANY} request holds. */
    static final int MAX_ROWS = 256;

    /** Request of {@link #PREDICT_MANY}: INT64 [N], each row's time left to its deadline, in nanoseconds. */
    static final String REMAINING = "servegate_remaining_nanos";
    /** Response of {@link #PREDICT_MANY}: the row (0-based) the response answers. */
    static final String ROW = "servegate_row";

    /**
     * Request of {@link #PREDICT}: the app the query is for, as {@code priority:weight:app}
     * ({@code critical:5:fraud}); absent for {@link Tenant#DEFAULT}, as older gateways send it.
     */
    static final String TENANT = "servegate_tenant";
    /**
     * Request of {@link #PREDICT_MANY}: each row's app, as for {@value #TENANT}, separated by
     * {@code ,}; absent when every row is for {@link Tenant#DEFAULT}.
     */
    static final String TENANTS = "servegate_tenants";

    /** Request: the forwarding member. */
    static final String FROM = "servegate_from";
    /** Request: the member the sender believes owns the version, and the epoch of that belief. */
    static final String OWNER = "servegate_owner";
    static final String EPOCH = "servegate_epoch";
    /** Request: how many gateways the query has been forwarded through before this one (1 or 2). */
    static final String HOPS = "servegate_hops";
    /** Response: the member that scheduled (or refused) the query. */
    static final String SCHEDULED_BY = "servegate_scheduled_by";
    /** Response: the {@link DispatchFailure} name when there is no output. */
    static final String FAILURE = "servegate_failure";
    /** Response: what failed, for the default's explanation. */
    static final String DETAIL = "servegate_detail";
    /** Response: the receiver does not own the version as its own view of the fleet says; the sender's view is stale. */
    static final String STALE_ROUTE = "servegate_stale_route";

    private ForwardProtocol() {
    }

    static ModelInferRequest request(String model, String version, TensorType<?> type, Object input, Tenant tenant,
            String from, Route.Remote to, int hops) {
        ModelInferRequest.Builder request = routed(model, version, type, List.of(input), from, to, hops);
        if (!tenant.equals(Tenant.DEFAULT)) {
            request.putParameters(TENANT, InferParameter.newBuilder().setStringParam(wire(tenant)).build());
        }
        return request.build();
    }

    /** A {@link #PREDICT_MANY} request: {@code inputs}' rows, each with its app and its time left in nanoseconds. */
    static ModelInferRequest requestMany(String model, String version, TensorType<?> type, List<Object> inputs,
            List<Tenant> tenants, long[] remainingNanos, String from, Route.Remote to) {
        ByteBuffer remaining = ByteBuffer.allocate(8 * remainingNanos.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long r : remainingNanos) {
            remaining.putLong(r);
        }
        ModelInferRequest.Builder request = routed(model, version, type, inputs, from, to, 1);
        if (tenants.stream().anyMatch(t -> !t.equals(Tenant.DEFAULT))) {
            request.putParameters(TENANTS, InferParameter.newBuilder()
                    .setStringParam(String.join(",", tenants.stream().map(ForwardProtocol::wire).toList())).build());
        }
        return request
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName(REMAINING).setDatatype("INT64")
                        .addShape(remainingNanos.length))
                .addRawInputContents(ByteString.copyFrom(remaining.flip()))
                .build();
    }

    /** {@code inputs} as the request's input tensor, with the forwarding member and the route it took. */
    @SuppressWarnings("unchecked")
    private static ModelInferRequest.Builder routed(String model, String version, TensorType<?> type,
            List<Object> inputs, String from, Route.Remote to, int hops) {
        EncodedTensor tensor = ((TensorType<Object>) type).encode(inputs);
        return ModelInferRequest.newBuilder().setModelName(model).setModelVersion(version)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input")
                        .setDatatype(tensor.datatype()).addAllShape(tensor.shape()))
                .addRawInputContents(tensor.raw())
                .putParameters(FROM, InferParameter.newBuilder().setStringParam(from).build())
                .putParameters(OWNER, InferParameter.newBuilder().setStringParam(to.member()).build())
                .putParameters(EPOCH, InferParameter.newBuilder().setInt64Param(to.epoch()).build())
                .putParameters(HOPS, InferParameter.newBuilder().setInt64Param(hops).build());
    }

    /**
     * The rows of a {@link #PREDICT_MANY} request, decoded, at most {@code maxRows}.
     *
     * @throws IllegalArgumentException when the request is not rows of {@code type} with a time left each
     */
    static List<?> rows(ModelInferRequest request, TensorType<?> type, int maxRows) {
        if (request.getInputsCount() != 2 || request.getRawInputContentsCount() != 2
                || !REMAINING.equals(request.getInputs(1).getName())) {
            throw new IllegalArgumentException("forwarded queries have their rows and '" + REMAINING
                    + "' in raw_input_contents");
        }
        ModelInferRequest.InferInputTensor tensor = request.getInputs(0);
        long n = tensor.getShapeCount() == 0 ? -1 : tensor.getShape(0);
        if (n < 1 || n > maxRows || !request.getInputs(1).getShapeList().equals(List.of(n))
                || request.getRawInputContents(1).size() != 8 * n) {
            throw new IllegalArgumentException("forwarded queries have 1 to " + maxRows + " rows and a time left "
                    + "each, got shapes " + tensor.getShapeList() + " and " + request.getInputs(1).getShapeList());
        }
        return type.decode(tensor.getDatatype(), tensor.getShapeList(), request.getRawInputContents(0));
    }

    /** Each row's time left, in nanoseconds, of a request {@link #rows} accepted. */
    static long[] remainingNanos(ModelInferRequest request) {
        ByteBuffer raw = request.getRawInputContents(1).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        long[] remaining = new long[raw.remaining() / 8];
        for (int i = 0; i < remaining.length; i++) {
            remaining[i] = raw.getLong();
        }
        return remaining;
    }

    /** {@code response} marked as the answer to row {@code row} of a {@link #PREDICT_MANY} call. */
    static ModelInferResponse forRow(ModelInferResponse response, int row) {
        return response.toBuilder().putParameters(ROW, InferParameter.newBuilder().setInt64Param(row).build()).build();
    }

    /** The row a {@link #PREDICT_MANY} response answers, or -1. */
    static long row(ModelInferResponse response) {
        InferParameter p = response.getParametersOrDefault(ROW, null);
        return p == null ? -1 : p.getInt64Param();
    }

    /**
     * The one input row of a forwarded request, decoded (its checks against the limits are the
     * receiver's, as for any public request).
     *
     * @throws IllegalArgumentException when the request does not hold exactly one row of {@code type}
     */
    static Object input(ModelInferRequest request, TensorType<?> type) {
        if (request.getInputsCount() != 1 || request.getRawInputContentsCount() != 1) {
            throw new IllegalArgumentException("a forwarded query has one input tensor in raw_input_contents");
        }
        ModelInferRequest.InferInputTensor tensor = request.getInputs(0);
        // checked before decoding, which would otherwise make an object per claimed row first
        if (tensor.getShapeCount() == 0 || tensor.getShape(0) != 1) {
            throw new IllegalArgumentException("a forwarded query has one input row, its shape is "
                    + tensor.getShapeList());
        }
        return type.decode(tensor.getDatatype(), tensor.getShapeList(), request.getRawInputContents(0)).get(0);
    }

    /**
     * The app a {@link #PREDICT} request's query is for; {@link Tenant#DEFAULT} when it names none.
     *
     * @throws IllegalArgumentException when it names one that is not a valid tenant
     */
    static Tenant tenant(ModelInferRequest request) {
        InferParameter p = request.getParametersOrDefault(TENANT, null);
        return p == null ? Tenant.DEFAULT : tenant(p.getStringParam());
    }

    /**
     * The app each of {@code rows} rows of a {@link #PREDICT_MANY} request is for; all
     * {@link Tenant#DEFAULT} when it names none.
     *
     * @throws IllegalArgumentException when it names another number of tenants, or one that is not valid
     */
    static List<Tenant> tenants(ModelInferRequest request, int rows) {
        InferParameter p = request.getParametersOrDefault(TENANTS, null);
        if (p == null) {
            return Collections.nCopies(rows, Tenant.DEFAULT);
        }
        String[] wire = p.getStringParam().split(",", rows + 1);
        if (wire.length != rows) {
            throw new IllegalArgumentException("'" + TENANTS + "' names one tenant per row, " + rows
                    + " in all, got " + (wire.length > rows ? "more" : String.valueOf(wire.length)));
        }
        List<Tenant> tenants = new ArrayList<>(rows);
        for (String t : wire) {
            tenants.add(tenant(t));
        }
        return tenants;
    }

    private static String wire(Tenant t) {
        return t.priority().wireName() + ":" + t.weight() + ":" + t.app();
    }

    /** A tenant's {@link #wire} form, checked: a known tier, a weight in range, an empty or valid app name. */
    private static Tenant tenant(String wire) {
        String[] parts = wire.split(":", 3);
        if (parts.length != 3) {
            throw new IllegalArgumentException("a forwarded tenant is 'priority:weight:app', got '" + wire + "'");
        }
        Priority priority = Priority.parse(parts[0]);
        int weight;
        try {
            weight = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            weight = 0;
        }
        if (weight < 1 || weight > Tenant.MAX_WEIGHT) {
            throw new IllegalArgumentException("a forwarded tenant's weight is an integer in 1.." + Tenant.MAX_WEIGHT
                    + ", got '" + parts[1] + "'");
        }
        if (!parts[2].isEmpty()) {
            Names.requireValid("app", parts[2]);
        }
        return new Tenant(parts[2], priority, weight);
    }

    /** The owner and epoch the sender routed by. */
    static Claim claim(ModelInferRequest request) {
        return new Claim(request.getParametersOrDefault(FROM, InferParameter.getDefaultInstance()).getStringParam(),
                request.getParametersOrDefault(OWNER, InferParameter.getDefaultInstance()).getStringParam(),
                request.getParametersOrDefault(EPOCH, InferParameter.getDefaultInstance()).getInt64Param());
    }

    /** The hops the request says it took, at least 1 (a sender cannot buy itself more relays). */
    static int hops(ModelInferRequest request) {
        long hops = request.getParametersOrDefault(HOPS, InferParameter.getDefaultInstance()).getInt64Param();
        return (int) Math.max(1, Math.min(hops, Integer.MAX_VALUE));
    }

    static ModelInferResponse answer(String output, String scheduledBy) {
        EncodedTensor tensor = TensorType.STRINGS.encode(List.of(output));
        return ModelInferResponse.newBuilder()
                .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder().setName("output")
                        .setDatatype(tensor.datatype()).addAllShape(tensor.shape()))
                .addRawOutputContents(tensor.raw())
                .putParameters(SCHEDULED_BY, InferParameter.newBuilder().setStringParam(scheduledBy).build())
                .build();
    }

    static ModelInferResponse failed(DispatchFailure failure, String detail, String scheduledBy) {
        return ModelInferResponse.newBuilder()
                .putParameters(FAILURE, InferParameter.newBuilder().setStringParam(failure.name()).build())
                .putParameters(DETAIL, InferParameter.newBuilder().setStringParam(detail == null ? "" : detail).build())
                .putParameters(SCHEDULED_BY, InferParameter.newBuilder().setStringParam(scheduledBy).build())
                .build();
    }

    /** A refusal by a receiver that, by its own view of the fleet, does not schedule the version. */
    static ModelInferResponse notOwner(String detail, String receiver) {
        return failed(DispatchFailure.FORWARD_FAILED, detail, receiver).toBuilder()
                .putParameters(STALE_ROUTE, InferParameter.newBuilder().setBoolParam(true).build()).build();
    }

    /** Whether the response is a {@link #notOwner} refusal: the sender should read the fleet again and re-route. */
    static boolean staleRoute(ModelInferResponse response) {
        return response.getParametersOrDefault(STALE_ROUTE, InferParameter.getDefaultInstance()).getBoolParam();
    }

    /** The output a response carries, or the {@link DispatchException} it reports. */
    static String output(ModelInferResponse response) {
        String failure = response.getParametersOrDefault(FAILURE, InferParameter.getDefaultInstance())
                .getStringParam();
        if (!failure.isEmpty()) {
            String detail = response.getParametersOrDefault(DETAIL, InferParameter.getDefaultInstance())
                    .getStringParam();
            throw new DispatchException(DispatchFailure.valueOf(failure), detail + " (at gateway "
                    + scheduledBy(response) + ")");
        }
        return TensorType.STRINGS.decode("BYTES", List.of(1L), response.getRawOutputContents(0)).get(0);
    }

    static String scheduledBy(ModelInferResponse response) {
        return response.getParametersOrDefault(SCHEDULED_BY, InferParameter.getDefaultInstance()).getStringParam();
    }
}
