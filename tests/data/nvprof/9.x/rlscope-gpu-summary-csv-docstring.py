    def parse_gpu_summary(self):
        """
        Convert CUDA GPU call times into dataframe:
        start_us,duration_us,name

        # Read (start, duration, name)
        $ nvprof --print-gpu-summary -i profile.nvprof 2>&1
        ======== Profiling result:
        "Type","Time(%)","Time","Calls","Avg","Min","Max","Name"
        ,%,us,,us,us,us,
        "GPU activities",29.820746,6659.683000,510,13.058000,10.944000,22.048000,"volta_sgemm_128x64_nn"
        "GPU activities",8.283205,1849.837000,458,4.038000,3.904000,5.952000,"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)"
        "GPU activities",7.780943,1737.670000,458,3.794000,3.712000,5.504000,"void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<float, float>)"
        ...

        :return:
        """
