package io.servegate.containers.onnx;

/** Where ONNX Runtime executes the model. */
public enum Device {
    /** ONNX Runtime's default CPU execution provider (the {@code onnxruntime} artifact). */
    CPU,
    /**
     * The CUDA execution provider, with the CPU provider as fallback for unsupported nodes. Needs
     * the {@code onnxruntime_gpu} artifact ({@code -Donnxruntime.artifact=onnxruntime_gpu}).
     */
    CUDA
}
