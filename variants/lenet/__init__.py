"""LeNet-5 inference on 28x28 handwritten digits, from a naive CUDA baseline to a fused,
stream-overlapped version."""
