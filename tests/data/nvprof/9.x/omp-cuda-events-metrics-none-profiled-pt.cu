/*
Sequencial
real    1m11.421s
user    1m10.983s
sys     0m0.232s

Paralelo
real    0m40.724s
user    2m33.424s
sys     0m3.183s

Paralelo - GPU - OpenMP
real    0m4.863s
user    0m3.624s
sys     0m1.211s

Paralelo - GPU - CUDA
real    0m0.442s
user    0m0.174s
sys     0m0.264s

=================================================================================

OpenMP:
    ==8143== Event result:
    Invocations                                Event Name         Min         Max         Avg       Total
    Device "GeForce GT 1030 (0)"
        Kernel: mm$_omp_fn$0
            1                            warps_launched          72          72          72          72

    ==8143== Metric result:
    Invocations                               Metric Name                        Metric Description         Min         Max         Avg
    Device "GeForce GT 1030 (0)"
        Kernel: mm$_omp_fn$0
            1                 warp_execution_efficiency                 Warp Execution Efficiency      86.81%      86.81%      86.81%

CUDA:
    ==8528== Profiling result:
    No events/metrics were profiled.
*/
