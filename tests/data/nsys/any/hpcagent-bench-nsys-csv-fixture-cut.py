#: One `nsys stats --format csv --output -` stdout carrying all four reports, in the shape nsys
#: 2024.x emits: a progress line, then a `** Title (report_id):` banner per report. Two kernels,
#: two transfer directions, and a trace whose first row is a memcpy (no grid dimensions) -- the row
#: that must NOT be read as a launch.
NSYS_STATS = """Processing [gpu-profile.sqlite] with [/opt/nvidia/reports/cuda_gpu_kern_sum.py]...

 ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):

Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
88.7,10650240,24,443760.0,443520,441120,449280,2048.5,"gemm_fp64_kernel(double *, double *, int)"
11.3,1357824,24,56576.0,56512,56320,57344,301.2,"scale_kernel(double *, int)"
0.1,12288,24,512.0,512,480,544,12.1,"zero_kernel(double *, int)"

 ** CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum):

Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation
71.4,2411520,48,50240.0,50176,49920,51200,320.1,[CUDA memcpy Host-to-Device]
28.6,965632,24,40234.6,40192,39936,41216,290.7,[CUDA memcpy Device-to-Host]

 ** CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum):

Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation
402.653,48,8.389,8.389,8.389,8.389,0.000,[CUDA memcpy Host-to-Device]
201.327,24,8.389,8.389,8.389,8.389,0.000,[CUDA memcpy Device-to-Host]

 ** CUDA GPU Trace (cuda_gpu_trace):

Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),\
Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name
1000,50240,101,,,,,,,,,,8.389,167.0,Pageable,Device,NVIDIA A100 (0),1,7,[CUDA memcpy Host-to-Device]
60000,443520,102,64,64,1,256,1,1,64,0.001,0.000,,,,,NVIDIA A100 (0),1,7,\
"gemm_fp64_kernel(double *, double *, int)"
510000,443520,104,64,64,1,256,1,1,64,0.001,0.000,,,,,NVIDIA A100 (0),1,7,\
"gemm_fp64_kernel(double *, double *, int)"
960000,56512,103,32,1,1,100,1,1,24,0.000,0.000,,,,,NVIDIA A100 (0),1,7,"scale_kernel(double *, int)"
"""
