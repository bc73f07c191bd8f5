  checkElementsAre(7, c, N);

  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

/*
1 prefetch
CUDA Memory Operation Statistics (by time):

 Time(%)  Total Time (ns)  Operations  Average  Minimum  Maximum              Operation            
 -------  ---------------  ----------  -------  -------  -------  ---------------------------------
   100.0         21203394         768  27608.6     1599   160828  [CUDA Unified Memory memcpy DtoH]

CUDA Kernel Statistics:

 Time(%)  Total Time (ns)  Instances   Average    Minimum  Maximum                      Name                    
 -------  ---------------  ---------  ----------  -------  --------  -------------------------------------------
    96.0         40732060          3  13577353.3   619599  20614807  initWith(float, float*, int)               
     4.0          1710960          1   1710960.0  1710960   1710960  addVectorsInto(float*, float*, float*, int)

2 prefetches
CUDA Kernel Statistics:

 Time(%)  Total Time (ns)  Instances   Average   Minimum  Maximum                      Name                    
 -------  ---------------  ---------  ---------  -------  --------  -------------------------------------------
    92.9         22514595          3  7504865.0   620718  21269383  initWith(float, float*, int)               
     7.1          1712015          1  1712015.0  1712015   1712015  addVectorsInto(float*, float*, float*, int)
                 40732060


CUDA Memory Operation Statistics (by time):

 Time(%)  Total Time (ns)  Operations  Average  Minimum  Maximum              Operation            
 -------  ---------------  ----------  -------  -------  -------  ---------------------------------
   100.0         21200406         768  27604.7     1599   160123  [CUDA Unified Memory memcpy DtoH]
                 21203394

3 prefetches
CUDA Kernel Statistics:

 Time(%)  Total Time (ns)  Instances   Average   Minimum  Maximum                     Name                    
 -------  ---------------  ---------  ---------  -------  -------  -------------------------------------------
    52.2          1867563          3   622521.0   618639   624558  initWith(float, float*, int)               
    47.8          1711696          1  1711696.0  1711696  1711696  addVectorsInto(float*, float*, float*, int)
                 40732060


CUDA Memory Operation Statistics (by time):

 Time(%)  Total Time (ns)  Operations  Average  Minimum  Maximum              Operation            
 -------  ---------------  ----------  -------  -------  -------  ---------------------------------
   100.0         21201498         768  27606.1     1599   160028  [CUDA Unified Memory memcpy DtoH]
*/
