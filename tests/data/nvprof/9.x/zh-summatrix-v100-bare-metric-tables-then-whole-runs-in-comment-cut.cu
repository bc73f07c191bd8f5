    // reset device
    CHECK(cudaDeviceReset());

     
}

/*
1.
$./sumMatrix 32 32
sumMatrixOnHost elapsed 0.320475 s
sumMatrixOnGPU2D <<<(512,512), (32,32)>>> elapsed 0.004041 s

Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                        achieved_occupancy                        Achieved Occupancy    0.849480    0.849480    0.849480

2.
$./sumMatrix 32 16
sumMatrixOnHost elapsed 0.317903 s
sumMatrixOnGPU2D <<<(512,1024), (32,16)>>> elapsed 0.003921 s

Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                        achieved_occupancy                        Achieved Occupancy    0.878777    0.878777    0.878777

3.
$./sumMatrix 16 32
sumMatrixOnHost elapsed 0.315567 s
sumMatrixOnGPU2D <<<(1024,512), (16,32)>>> elapsed 0.004092 s

Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                        achieved_occupancy                        Achieved Occupancy    0.879418    0.879418    0.879418

4.
$./sumMatrix 16 16
sumMatrixOnHost elapsed 0.315000 s
sumMatrixOnGPU2D <<<(1024,1024), (16,16)>>> elapsed 0.003950 s

Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                        achieved_occupancy                        Achieved Occupancy    0.912735    0.912735    0.912735




第二种情况中的block 数量比 第一种情况的多，所以device 就可以有更多活跃的线程束。
其原因可能是第二种情况与第一种情况相比有更高的可实现占用率和更好的性能。

第四种情况有最高的可实现占用率，但它不是最快的。因此更高的占用率不一定意味着更高的性能。
肯定有其他因素限制 GPU 的性能。
*/

/*
用 nvprof 检测内存操作:
    // 每次计算有3个内存操作：两个内存加载和一个内存存储。-》 内存操作的瓶颈更大概率在
        C[idx] = A[idx] + B[idx];

用 gld_throught 指标检查kernel的内存读取效率，从而可以得到每个执行配置的差异：
1.
==60430== NVPROF is profiling process 60430, command: ./sumMatrix 32 32
sumMatrixOnHost elapsed 0.318364 s
sumMatrixOnGPU2D <<<(512,512), (32,32)>>> elapsed 0.016019 s
==60430== Profiling application: ./sumMatrix 32 32
==60430== Profiling result:
==60430== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                            gld_throughput                    Global Load Throughput  504.88GB/s  504.88GB/s  504.88GB/s


2. 
==63607== NVPROF is profiling process 63607, command: ./sumMatrix 32 16
sumMatrixOnHost elapsed 0.311272 s
sumMatrixOnGPU2D <<<(512,1024), (32,16)>>> elapsed 0.016073 s
==63607== Profiling application: ./sumMatrix 32 16
==63607== Profiling result:
==63607== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                            gld_throughput                    Global Load Throughput  520.66GB/s  520.66GB/s  520.66GB/s

3.
==69042== NVPROF is profiling process 69042, command: ./sumMatrix 16 32
sumMatrixOnHost elapsed 0.311878 s
sumMatrixOnGPU2D <<<(1024,512), (16,32)>>> elapsed 0.015969 s
==69042== Profiling application: ./sumMatrix 16 32
==69042== Profiling result:
==69042== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                            gld_throughput                    Global Load Throughput  495.90GB/s  495.90GB/s  495.90GB/s

4. 
==78613== NVPROF is profiling process 78613, command: ./sumMatrix 16 16
sumMatrixOnHost elapsed 0.310917 s
sumMatrixOnGPU2D <<<(1024,1024), (16,16)>>> elapsed 0.016071 s
==78613== Profiling application: ./sumMatrix 16 16
==78613== Profiling result:
==78613== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: sumMatrixOnGPU2D(float*, float*, float*, int, int)
          1                            gld_throughput                    Global Load Throughput  515.42GB/s  515.42GB/s  515.42GB/s

第二种情况达到了最大的内存吞吐量，但是差距很小，更高的load 吞吐量不一定意味着更高的性能
*/
