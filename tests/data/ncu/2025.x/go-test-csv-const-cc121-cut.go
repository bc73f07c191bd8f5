// Real ncu output, trimmed: a progress line ahead of the table, one
// unsupported metric reporting n/a, and repeated launches to reduce.
const sampleCSV = `==PROF== Profiling "saxpy" - 0: 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","19963","plain","127.0.0.1","saxpy","1","7","(256, 1, 1)","(16384, 1, 1)","0","12.1","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","","n/a"
"0","19963","plain","127.0.0.1","saxpy","1","7","(256, 1, 1)","(16384, 1, 1)","0","12.1","Command line profiler metrics","gpu__time_duration.sum","us","211.94"
"1","19963","plain","127.0.0.1","saxpy","1","7","(256, 1, 1)","(16384, 1, 1)","0","12.1","Command line profiler metrics","gpu__time_duration.sum","us","203.02"
"2","19963","plain","127.0.0.1","saxpy","1","7","(256, 1, 1)","(16384, 1, 1)","0","12.1","Command line profiler metrics","gpu__time_duration.sum","us","1,205.00"
`
