    def parse_api_trace(self, debug=False):
        """
        Convert CUDA API call times into dataframe:
        start_us,duration_us,name

        # Read (start, duration, api)
        $ nvprof --print-api-trace -i profile.nvprof 2>&1

        ======== Profiling result:
           Start  Duration  Name
             0ns  2.4150us  cuDeviceGetPCIBusId
        38.829ms  2.4050us  cuDeviceGetCount
        38.833ms     180ns  cuDeviceGetCount
        39.293ms     621ns  cuDeviceGet
        39.295ms     912ns  cuDeviceGetAttribute
        39.303ms     241ns  cuDeviceGetAttribute
        39.303ms     521ns  cuDeviceGetAttribute
        39.317ms     441ns  cuDeviceGetCount
        ...

        :return:
        """
