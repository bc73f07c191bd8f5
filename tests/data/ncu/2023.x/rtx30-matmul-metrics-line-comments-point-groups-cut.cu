template <int TILE_M, int TILE_N, int TILE_K, int NUM_THREADS>
void matmul(half *A, half *B, float *C, int M, int N, int K) {
  dim3 grid_dim(M / TILE_M, N / TILE_N);
  dim3 block_dim(NUM_THREADS);
  matmul_kernel<TILE_M, TILE_N, TILE_K, NUM_THREADS><<<grid_dim, block_dim>>>(A, B, C, M, N, K);
}

// bank conflics before:
//   Section: Command line profiler metrics
//   -------------------------------------------------------- ----------- ------------
//   Metric Name                                              Metric Unit Metric Value
//   -------------------------------------------------------- ----------- ------------
//   l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum               25.698.261
//   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum                sector    1.048.576
//   -------------------------------------------------------- ----------- ------------
//
// bank conflicts after:
// Section: Command line profiler metrics
// -------------------------------------------------------- ----------- ------------
// Metric Name                                              Metric Unit Metric Value
// -------------------------------------------------------- ----------- ------------
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum                  524.288
// l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum                sector    1.572.864
// -------------------------------------------------------- ----------- ------------
// cublas has 0 bank conflicts !
// ampere_s16816gemm_fp16_256x128_ldg8_stages_32x3_nn (4, 8, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6
//   Section: Command line profiler metrics
//   -------------------------------------------------------- ----------- ------------
//   Metric Name                                              Metric Unit Metric Value
//   -------------------------------------------------------- ----------- ------------
//   l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum                        0
//   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum                sector      786.432
//   -------------------------------------------------------- ----------- ------------

// Results match!
//
// ========== Benchmark Results ==========
// Matrix dimensions: M=1024, N=1024, K=1024
// Iterations: 100
//
// Custom Kernel:  0.1207 ms  (17.79 TFLOPS)
// cuBLAS:         0.0816 ms  (26.32 TFLOPS)
// Efficiency:     67.59%
// Speedup:        0.68x (slower)
// =======================================
int main() {
  constexpr int TILE_M = 128, TILE_N = 64, TILE_K = 64;
  constexpr int NUM_THREADS = 256;
  const int M = 1024, N = 1024, K = 1024;
  validate_matmul(matmul<TILE_M, TILE_N, TILE_K, NUM_THREADS>, M, N, K);
  benchmark_matmul(matmul<TILE_M, TILE_N, TILE_K, NUM_THREADS>, M, N, K);
}
