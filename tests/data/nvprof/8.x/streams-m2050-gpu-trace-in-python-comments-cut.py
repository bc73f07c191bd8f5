import numpy as np
import matplotlib.pyplot as plt
import sys
import os

class Task:
    def __init__(self, start, elapsed, lbl):
        self.start = start
        self.elapsed = elapsed
        self.lbl = lbl

    def normalize_start(self, min_time):
        self.start = self.start - min_time

#    Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput           Device   Context    Stream  Name
#    254.96ms  1.0502ms                    -               -         -         -         -  6.2915MB  5.9908GB/s  Tesla M2050 (0)         1        13  [CUDA memcpy HtoD]
#    256.01ms  1.0527ms                    -               -         -         -         -  6.2915MB  5.9766GB/s  Tesla M2050 (0)         1        14  [CUDA memcpy HtoD]
#    257.07ms  1.0522ms                    -               -         -         -         -  6.2915MB  5.9792GB/s  Tesla M2050 (0)         1        15  [CUDA memcpy HtoD]
#    258.13ms  1.0526ms                    -               -         -         -         -  6.2915MB  5.9772GB/s  Tesla M2050 (0)         1        16  [CUDA memcpy HtoD]
#    259.18ms  1.0518ms                    -               -         -         -         -  6.2915MB  5.9817GB/s  Tesla M2050 (0)         1        13  [CUDA memcpy HtoD]
#    260.24ms  1.0527ms                    -               -         -         -         -  6.2915MB  5.9765GB/s  Tesla M2050 (0)         1        14  [CUDA memcpy HtoD]
#    261.30ms  1.0521ms                    -               -         -         -         -  6.2915MB  5.9799GB/s  Tesla M2050 (0)         1        15  [CUDA memcpy HtoD]
#    262.35ms  1.0524ms                    -               -         -         -         -  6.2915MB  5.9783GB/s  Tesla M2050 (0)         1        16  [CUDA memcpy HtoD]
#    263.41ms  1.0518ms                    -               -         -         -         -  6.2915MB  5.9816GB/s  Tesla M2050 (0)         1        13  [CUDA memcpy HtoD]
#    264.46ms  1.0556ms                    -               -         -         -         -  6.2915MB  5.9602GB/s  Tesla M2050 (0)         1        14  [CUDA memcpy HtoD]
#    264.47ms  1.3106ms          (49152 1 1)       (128 1 1)        13        0B        0B         -           -  Tesla M2050 (0)         1        13  vector_add(int*, int*, int*, int, int) [118]
#    265.52ms  1.0532ms                    -               -         -         -         -  6.2915MB  5.9737GB/s  Tesla M2050 (0)         1        15  [CUDA memcpy HtoD]
#    265.78ms  1.3132ms          (49152 1 1)       (128 1 1)        13        0B        0B         -           -  Tesla M2050 (0)         1        14  vector_add(int*, int*, int*, int, int) [125]
#    266.58ms  1.0551ms                    -               -         -         -         -  6.2915MB  5.9629GB/s  Tesla M2050 (0)         1        16  [CUDA memcpy HtoD]
#    267.09ms  1.3019ms          (49152 1 1)       (128 1 1)        13        0B        0B         -           -  Tesla M2050 (0)         1        15  vector_add(int*, int*, int*, int, int) [132]
#    268.39ms  1.2832ms          (49152 1 1)       (128 1 1)        13        0B        0B         -           -  Tesla M2050 (0)         1        16  vector_add(int*, int*, int*, int, int) [139]
#    269.68ms  972.68us                    -               -         -         -         -  6.2915MB  6.4682GB/s  Tesla M2050 (0)         1        13  [CUDA memcpy DtoH]
#    270.66ms  973.51us                    -               -         -         -         -  6.2915MB  6.4627GB/s  Tesla M2050 (0)         1        14  [CUDA memcpy DtoH]
#    271.64ms  972.45us                    -               -         -         -         -  6.2915MB  6.4697GB/s  Tesla M2050 (0)         1        15  [CUDA memcpy DtoH]
#    272.61ms  972.90us                    -               -         -         -         -  6.2915MB  6.4667GB/s  Tesla M2050 (0)         1        16  [CUDA memcpy DtoH]

colors = [ 'r', 'y', 'b', 'g', 'c', 'm' ]
