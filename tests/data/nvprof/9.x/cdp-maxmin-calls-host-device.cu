/*

 GeForce GTX 1050


CPU: 0.000718 s
maxMin1<<<8192,32>>>: 0.046793 s

 31
 32798
SUPER
==5576== Warning: 12018 records were dropped due to insufficient device buffer space. You can configure the buffer space using advanced options --device-buffer-size, --device-cdp-buffer-size
==5576== Profiling application: a 32
==5576== Profiling result:
            Type  Time(%)      Time  Calls (host)  Calls (device)       Avg       Min       Max  Name
 GPU activities:   35.75%  543.55ms             1           20750  26.194us  1.3440us  36.151ms  maxMin(int*, int*, int*, int*, unsigned int)
                   32.02%  486.95ms             0           24577  19.813us  1.2150us  22.797ms  Min(int*, int*, unsigned int)
                   31.97%  486.11ms             0           24577  19.778us  1.2160us  23.074ms  Max(int*, int*, unsigned int)
                    0.22%  3.3320ms             1               0  3.3320ms  3.3320ms  3.3320ms  maxMin1(int*, int*, int*, int*, unsigned int, dim3)
                    0.04%  651.52us             4               -  162.88us  157.66us  177.79us  [CUDA memcpy HtoD]
                    0.00%  24.064us             4               -  6.0160us  5.7920us  6.2720us  [CUDA memcpy DtoH]
      API calls:   61.06%  254.53ms             4               -  63.632ms  12.900us  254.02ms  cudaMalloc
                   19.98%  83.295ms             2               -  41.648ms  36.603ms  46.692ms  cudaDeviceSynchronize
                   17.92%  74.711ms             1               -  74.711ms  74.711ms  74.711ms  cudaDeviceReset
                    0.55%  2.2850ms             8               -  285.63us  149.20us  467.90us  cudaMemcpy
                    0.15%  643.70us            97               -  6.6360us     200ns  364.00us  cuDeviceGetAttribute
                    0.15%  618.50us             1               -  618.50us  618.50us  618.50us  cudaGetDeviceProperties
                    0.13%  561.50us             4               -  140.38us  29.100us  272.20us  cudaFree
                    0.04%  146.20us             2               -  73.100us  56.000us  90.200us  cudaLaunchKernel
                    0.01%  44.300us             1               -  44.300us  44.300us  44.300us  cuDeviceTotalMem
                    0.00%  15.700us             1               -  15.700us  15.700us  15.700us  cudaSetDevice
                    0.00%  14.200us             1               -  14.200us  14.200us  14.200us  cuDeviceGetPCIBusId
                    0.00%  7.0000us             2               -  3.5000us     400ns  6.6000us  cuDeviceGet
                    0.00%  2.6000us             3               -     866ns     300ns  1.5000us  cuDeviceGetCount
                    0.00%  1.8000us             2               -     900ns     900ns     900ns  cudaGetLastError
                    0.00%  1.6000us             1               -  1.6000us  1.6000us  1.6000us  cuDeviceGetName
                    0.00%     600ns             1               -     600ns     600ns     600ns  cuDeviceGetUuid
                    0.00%     600ns             1               -     600ns     600ns     600ns  cuDeviceGetLuid
					*/
