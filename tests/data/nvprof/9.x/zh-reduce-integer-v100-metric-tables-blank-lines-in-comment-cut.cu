    CHECK(cudaDeviceReset());

    // check the results
    bResult = (gpu_sum == cpu_sum);

    if(!bResult) printf("Test failed!\n");

    return EXIT_SUCCESS;

    /*
    具体来说，上述三种实现方式性能如下：
    ./reduceInteger starting reduction at device 0: Tesla V100-SXM2-16GB     with array size 16777216  grid 32768 block 512
cpu reduce      elapsed 0.057573 sec cpu_sum: 2139353471
gpu Neighbored  elapsed 0.000599 sec gpu_sum: 2139353471 <<<grid 32768 block 512>>>
gpu NeighboredLess elapsed 0.000325 sec gpu_sum: 2139353471 <<<grid 32768 block 512>>>
gpu Interleaved elapsed 0.000283 sec gpu_sum: 2139353471 <<<grid 32768 block 512>>>
Interleaved 相比于 NeighboredLess 主要性能改进体现在对于global_memory的 load/store效率的上升，这是因为读取内存由离散到连续，效率提升
后续会详细研究

观察每个warp执行的指令的数量（原始版本 Neighbore是两个优化版本的两倍多，这是因为分化后，不符合条件的指令也要被阻塞然后执行，这样一来，导致指令数量翻倍）：
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                             inst_per_warp                     Instructions per warp  319.875000  319.875000  319.875000

    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                             inst_per_warp                     Instructions per warp  124.125000  124.125000  124.125000
    
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                             inst_per_warp                     Instructions per warp  142.375000  142.375000  142.375000
    
观察分支效率：如之前所述，NeighboredLess 和 Interleaved本质上分支分化效率一致，均来自于stride < 32 的最后5次reduce
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                         branch_efficiency                         Branch Efficiency      77.83%      77.83%      77.83%

    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                         branch_efficiency                         Branch Efficiency      98.25%      98.25%      98.25%
    
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                         branch_efficiency                         Branch Efficiency      98.25%      98.25%      98.25%

最后观察 load 吞吐量说明 Interleaved的优化：
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                            gld_throughput                    Global Load Throughput  914.26GB/s  914.26GB/s  914.26GB/s
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                            gld_throughput                    Global Load Throughput  1732.7GB/s  1732.7GB/s  1732.7GB/s
    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                            gld_throughput                    Global Load Throughput  518.37GB/s  518.37GB/s  518.37GB/s

首先，Neighbored 和 NeighboredLess 本质上均是在离散的index 上面操作global memory，所以其行为模式一致，但是 NeighboredLess可以取得更高的效率，因此性能更优秀
对于 InterLeaved，显然，因为连续存取，优化了加载/存储的效率，使其访存量大量下降，虽然表面上吞吐量下降， 但是其load 效率取得了显著提升：
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
   
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                            gld_efficiency             Global Memory Load Efficiency      25.02%      25.02%      25.02%
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                            gld_efficiency             Global Memory Load Efficiency      25.02%      25.02%      25.02%
    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                            gld_efficiency             Global Memory Load Efficiency      96.15%      96.15%      96.15%

同理，在store 方面也出现了类似的趋势：
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                            gst_throughput                   Global Store Throughput  457.86GB/s  457.86GB/s  457.86GB/s
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                            gst_throughput                   Global Store Throughput  869.12GB/s  869.12GB/s  869.12GB/s
    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                            gst_throughput                   Global Store Throughput  261.07GB/s  261.07GB/s  261.07GB/s


Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    
    Kernel: reduceNeighbored(int*, int*, unsigned int)
          1                            gst_efficiency            Global Memory Store Efficiency      25.00%      25.00%      25.00%
    Kernel: reduceNeighboredLess(int*, int*, unsigned int)
          1                            gst_efficiency            Global Memory Store Efficiency      25.00%      25.00%      25.00%
    Kernel: reduceInterleaved(int*, int*, unsigned int)
          1                            gst_efficiency            Global Memory Store Efficiency      95.52%      95.52%      95.52%

    */

}
