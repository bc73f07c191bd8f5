  // File format looks like:
#if 0
  // ==> profile.process_15562.nvprof.api_trace.csv <==
// ======== Profiling result:
// "Start","Duration","Name","Correlation_ID"
// us,us,,
// 0.000000,2.866000,"cuDeviceGetPCIBusId",1
// 35863.518000,0.952000,"cuDeviceGetCount",2
//
// ==> profile.process_15562.nvprof.gpu_trace.csv <==
// ======== Profiling result:
// "Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream","Name","Correlation_ID"
// us,us,,,,,,,,KB,KB,KB,GB/s,,,,,,,
// 0.000000,1.888000,,,,,,,,,,1.003906,0.507097,"Device",,"GeForce RTX 2080 Ti (0)","1","7","[CUDA memset]",272
// 4643.346000,1.536000,,,,,,,,,,0.125000,0.077610,"Pinned","Device","GeForce RTX 2080 Ti (0)","1","22","[CUDA memcpy HtoD]",316
#endif
