//      NSIGHT COMPUTE PERFORMANCE ANALYSIS RESULTS

/*
    sudo <Path To ncu> --section SpeedOfLight --section MemoryWorkloadAnalysis ./matrix_sumHW3
    ******************************************************************************************

    row_sums(const float *, float *, unsigned long) (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- -------------
    Metric Name             Metric Unit  Metric Value
    ----------------------- ----------- -------------
    DRAM Frequency                  Ghz          5.99
    SM Frequency                    Ghz          1.46
    Elapsed Cycles                cycle    33,013,637
    Memory Throughput                 %         40.67
    DRAM Throughput                   %         29.99
    Duration                         ms         22.57
    L1/TEX Cache Throughput           %         48.35
    L2 Cache Throughput               %         23.77
    SM Active Cycles              cycle 27,765,064.05
    Compute (SM) Throughput           %          2.54
    ----------------------- ----------- -------------

    OPT   This kernel grid is too small to fill the available resources on this device, resulting in only 0.5 full      
          waves across all SMs. Look at Launch Statistics for more details.                                             

    Section: Memory Workload Analysis
    ---------------------------- ----------- ------------
    Metric Name                  Metric Unit Metric Value
    ---------------------------- ----------- ------------
    Memory Throughput                Gbyte/s        57.47
    Mem Busy                               %        40.67
    Max Bandwidth                          %        29.99
    L1/TEX Hit Rate                        %        81.24
    L2 Compression Success Rate            %            0
    L2 Compression Ratio                                0
    L2 Compression Input Sectors      sector            0
    L2 Hit Rate                            %        21.78
    Mem Pipes Busy                         %         2.54
    ---------------------------- ----------- ------------

  column_sums(const float *, float *, unsigned long) (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Frequency                  Ghz         5.99
    SM Frequency                    Ghz         1.46
    Elapsed Cycles                cycle    8,390,821
    Memory Throughput                 %        97.75
    DRAM Throughput                   %        97.75
    Duration                         ms         5.74
    L1/TEX Cache Throughput           %        20.03
    L2 Cache Throughput               %        26.35
    SM Active Cycles              cycle 8,375,517.05
    Compute (SM) Throughput           %        10.00
    ----------------------- ----------- ------------

    INF   This workload is utilizing greater than 80.0% of the available compute or memory performance of the device.   
          To further improve performance, work will likely need to be shifted from the most utilized to another unit.   
          Start by analyzing DRAM in the Memory Workload Analysis section.                                              

    Section: Memory Workload Analysis
    ---------------------------- ----------- ------------
    Metric Name                  Metric Unit Metric Value
    ---------------------------- ----------- ------------
    Memory Throughput                Gbyte/s       187.33
    Mem Busy                               %        26.35
    Max Bandwidth                          %        97.75
    L1/TEX Hit Rate                        %            0
    L2 Compression Success Rate            %            0
    L2 Compression Ratio                                0
    L2 Compression Input Sectors      sector            0
    L2 Hit Rate                            %         0.02
    Mem Pipes Busy                         %        10.00
    ---------------------------- ----------- ------------
*/

/*
    sudo <Path To ncu> --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum ./matrix_sumHW3
    *******************************************************************************************************************************************

    row_sums(const float *, float *, unsigned long) (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6
    Section: Command line profiler metrics
    ----------------------------------------------- ----------- ------------
    Metric Name                                     Metric Unit Metric Value
    ----------------------------------------------- ----------- ------------
    l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum                8,388,608
    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum       sector  268,162,682
    ----------------------------------------------- ----------- ------------

  column_sums(const float *, float *, unsigned long) (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6
    Section: Command line profiler metrics
    ----------------------------------------------- ----------- ------------
    Metric Name                                     Metric Unit Metric Value
    ----------------------------------------------- ----------- ------------
    l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum                8,388,608
    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum       sector   33,554,432
    ----------------------------------------------- ----------- ------------
*/
