-------------------------------------------- ----------------------------------------------------------------- ------- --------------------------------------------------
Identifier                                   Display Name                                                      Enabled Filename                                          
-------------------------------------------- ----------------------------------------------------------------- ------- --------------------------------------------------
C2CLink                                      C2CLink                                                           no      ...sight Compute/2024.1.1/Sections/C2CLink.section
ComputeWorkloadAnalysis                      Compute Workload Analysis                                         no      ...24.1.1/Sections/ComputeWorkloadAnalysis.section
InstructionStats                             Instruction Statistics                                            no      ...2024.1.1/Sections/InstructionStatistics.section
LaunchStats                                  Launch Statistics                                                 yes     ...pute/2024.1.1/Sections/LaunchStatistics.section
MemoryWorkloadAnalysis                       Memory Workload Analysis                                          no      ...024.1.1/Sections/MemoryWorkloadAnalysis.section
MemoryWorkloadAnalysis_Chart                 Memory Workload Analysis Chart                                    no      ...1/Sections/MemoryWorkloadAnalysis_Chart.section
MemoryWorkloadAnalysis_Tables                Memory Workload Analysis Tables                                   no      .../Sections/MemoryWorkloadAnalysis_Tables.section
NumaAffinity                                 NUMA Affinity                                                     no      ... Compute/2024.1.1/Sections/NumaAffinity.section
Nvlink                                       NVLink                                                            no      ...Nsight Compute/2024.1.1/Sections/Nvlink.section
Nvlink_Tables                                NVLink Tables                                                     no      ...Compute/2024.1.1/Sections/Nvlink_Tables.section
Nvlink_Topology                              NVLink Topology                                                   no      ...mpute/2024.1.1/Sections/Nvlink_Topology.section
Occupancy                                    Occupancy                                                         yes     ...ght Compute/2024.1.1/Sections/Occupancy.section
PmSampling                                   PM Sampling                                                       no      ...ht Compute/2024.1.1/Sections/PmSampling.section
PmSampling_WarpStates                        PM Sampling: Warp States                                          no      ...2024.1.1/Sections/PmSampling_WarpStates.section
SchedulerStats                               Scheduler Statistics                                              no      ...e/2024.1.1/Sections/SchedulerStatistics.section
SourceCounters                               Source Counters                                                   no      ...ompute/2024.1.1/Sections/SourceCounters.section
SpeedOfLight                                 GPU Speed Of Light Throughput                                     yes     ... Compute/2024.1.1/Sections/SpeedOfLight.section
SpeedOfLight_HierarchicalDoubleRooflineChart GPU Speed Of Light Hierarchical Roofline Chart (Double Precision) no      ...OfLight_HierarchicalDoubleRooflineChart.section
SpeedOfLight_HierarchicalHalfRooflineChart   GPU Speed Of Light Hierarchical Roofline Chart (Half Precision)   no      ...edOfLight_HierarchicalHalfRooflineChart.section
SpeedOfLight_HierarchicalSingleRooflineChart GPU Speed Of Light Hierarchical Roofline Chart (Single Precision) no      ...OfLight_HierarchicalSingleRooflineChart.section
SpeedOfLight_HierarchicalTensorRooflineChart GPU Speed Of Light Hierarchical Roofline Chart (Tensor Core)      no      ...OfLight_HierarchicalTensorRooflineChart.section
SpeedOfLight_RooflineChart                   GPU Speed Of Light Roofline Chart                                 no      ...1.1/Sections/SpeedOfLight_RooflineChart.section
WarpStateStats                               Warp State Statistics                                             no      ...e/2024.1.1/Sections/WarpStateStatistics.section
WorkloadDistribution                         GPU and Memory Workload Distribution                              yes     .../2024.1.1/Sections/WorkloadDistribution.section
