package io.servegate.gateway.bench;

import io.servegate.containers.onnx.FashionMnist;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The request bodies of the feedback-throughput benchmark, built from the Fashion-MNIST test
 * images: the JSON of each image is made once, and each body joins its parts.
 */
final class FeedbackBodies {

    private static final float PERTURBATION = 1e-5f;

    private final int size;
    private final int warmImages;
    private final int users;
    /** Per test image: the JSON of {@code "label":L,"input":[}, pixel 0, and {@code ,p1,...,p783]}. */
    private final byte[][] heads;
    private final float[] pixel0;
    private final byte[][] tails;

    FeedbackBodies(FashionMnist data, int warmImages, int users) {
        this.warmImages = warmImages;
        this.users = users;
        size = data.size();
        heads = new byte[size][];
        pixel0 = new float[size];
        tails = new byte[size][];
        for (int i = 0; i < size; i++) {
            float[] px = data.images().get(i);
            heads[i] = ("\"label\":" + data.label(i) + ",\"input\":[").getBytes(StandardCharsets.US_ASCII);
            pixel0[i] = px[0];
            StringBuilder sb = new StringBuilder(px.length * 8);
            for (int k = 1; k < px.length; k++) {
                sb.append(',').append(px[k]);
            }
            tails[i] = sb.append("]}").toString().getBytes(StandardCharsets.US_ASCII);
        }
    }

    /** {@code {"input_batch": [images from..to-1]}}. */
    byte[] batch(int from, int to) {
        ByteArrayOutputStream b = new ByteArrayOutputStream((to - from) * (tails[from].length + 16));
        b.writeBytes("{\"input_batch\":[".getBytes(StandardCharsets.US_ASCII));
        for (int image = from; image < to; image++) {
            b.writeBytes(("[" + pixel0[image]).getBytes(StandardCharsets.US_ASCII));
            b.write(tails[image], 0, tails[image].length - 1); // ",p1,...,p783]" without the closing brace
            b.write(image + 1 < to ? ',' : ']');
        }
        b.write('}');
        return b.toByteArray();
    }

    /** The i-th feedback of cache-hits: app-wide, about one of the warm images. */
    byte[] hit(long i) {
        int image = (int) (i % warmImages);
        return body(null, image, pixel0[image]);
    }

    /** {@code {"input": image}} of the images feedback of cache-hits is about. */
    byte[] predict(long i) {
        int image = (int) (i % warmImages);
        ByteArrayOutputStream b = new ByteArrayOutputStream(tails[image].length + 32);
        b.writeBytes(("{\"input\":[" + pixel0[image]).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(tails[image]);
        return b.toByteArray();
    }

    /** The i-th feedback of cache-hits-per-user: as {@link #hit}, with {@code "uid": i % users}. */
    byte[] perUser(long i) {
        int image = (int) (i % warmImages);
        return body(i % users, image, pixel0[image]);
    }

    /** The j-th input never seen: images warmImages..N-1, then all N again, pass r with pixel 0 + r·1e-5. */
    byte[] miss(long i) {
        long j = warmImages + i;
        int image = (int) (j % size);
        long pass = j / size;
        return body(null, image, pixel0[image] + pass * PERTURBATION);
    }

    private byte[] body(Long uid, int image, float p0) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(heads[image].length + tails[image].length + 32);
        b.write('{');
        if (uid != null) {
            b.writeBytes(("\"uid\":" + uid + ",").getBytes(StandardCharsets.US_ASCII));
        }
        b.writeBytes(heads[image]);
        b.writeBytes(Float.toString(p0).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(tails[image]);
        return b.toByteArray();
    }
}
