  cudaFree(x);

  return 0;
}

/* Compilation step and profiler output
**
** Look for HtoD PCIe transfers to find the memory address and transfer size to understand the prefetch semantics. 
**
** nvcc -g -Wno-deprecated-gpu-targets -gencode arch=compute_35,code=[compute_35,sm_35] -gencode arch=compute_61,code=[compute_61,sm_61] getHWPrefetcherP1.cu -lcudart -o getHWPrefetcherP1
**
** nvprof --print-gpu-trace ./getHWPrefetcherP1
==4231== NVPROF is profiling process 4231, command: ./getHWPrefetcherP1
A 2MB large page allocation is accessed in the following order of 64Kb basic blocks
x[0*BB]: 0x7f246e000000, x[1*BB]: 0x7f246e010000, x[2*BB]: 0x7f246e020000, x[4*BB]: 0x7f246e040000, x[8*BB]: 0x7f246e080000, x[16*BB]: 0x7f246e100000
After kernel launch the values are:
x[0*BB] = a, x[1*BB] = b, x[2*BB] = c, x[4*BB] = d, x[8*BB] = e, x[16*BB] = f
==4231== Profiling application: ./getHWPrefetcherP1
==4231== Profiling result:
   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*           Device   Context    Stream        Unified Memory  Virtual Address  Name
681.75ms         -                    -               -         -         -         -                -         -         -           PC 0x400b82   0x7f246e000000  [Unified Memory CPU page faults]
682.02ms         -                    -               -         -         -         -                -         -         -           PC 0x400b82   0x7f246e010000  [Unified Memory CPU page faults]
688.94ms  183.74us                    -               -         -         -         -  GeForce GTX 108         -         -                     1   0x7f246e000000  [Unified Memory GPU page faults]
688.96ms  540.28us              (1 1 1)        (32 1 1)         9        0B        0B  GeForce GTX 108         1         7                     -                -  getHWPrefetch(int, char*, int) [108]
689.11ms  1.7280us                    -               -         -         -         -  GeForce GTX 108         -         -            4.000000KB   0x7f246e000000  [Unified Memory Memcpy HtoD]
689.11ms  5.7600us                    -               -         -         -         -  GeForce GTX 108         -         -           60.000000KB   0x7f246e001000  [Unified Memory Memcpy HtoD]
689.13ms  25.216us                    -               -         -         -         -  GeForce GTX 108         -         -                     1   0x7f246e010000  [Unified Memory GPU page faults]
689.39ms  86.400us                    -               -         -         -         -  GeForce GTX 108         -         -            0.996094MB   0x7f246e101000  [Unified Memory Memcpy HtoD]
689.51ms         -                    -               -         -         -         -                -         -         -           PC 0x400c90   0x7f246e100000  [Unified Memory CPU page faults]
689.54ms  1.0560us                    -               -         -         -         -  GeForce GTX 108         -         -            4.000000KB   0x7f246e100000  [Unified Memory Memcpy DtoH]
689.85ms  5.6960us                    -               -         -         -         -  GeForce GTX 108         -         -           64.000000KB   0x7f246e030000  [Unified Memory Memcpy DtoH]

Regs: Number of registers used per CUDA thread. This number includes registers used internally by the CUDA driver and/or tools and can be more than what the compiler shows.
SSMem: Static shared memory allocated per CUDA block.
DSMem: Dynamic shared memory allocated per CUDA block.
*/
