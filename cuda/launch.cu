// Launch overhead and small kernels (`gpubench launch`). Three entry points, all on one stream:
//   launch_empty()                       does nothing: the kernel whose launches are timed
//                                        (one block of 32 threads);
//   launch_hold(ns)                      one thread spins on %globaltimer for `ns` nanoseconds,
//                                        so that the launches queued behind it start back to
//                                        back on the GPU, whatever the host's pace;
//   launch_scale(x, y, n, a)             y[i] = a * x[i] for i < n, grid-stride over n floats
//                                        (x and y hold n floats each): the streaming kernel
//                                        whose time against its volume is fitted.
// Nothing here waits on another thread, so nothing can hang.

extern "C" __global__ void launch_empty() {}

extern "C" __global__ void launch_hold(unsigned long long ns)
{
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start)::"memory");
    unsigned long long now = start;
    while (now - start < ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)::"memory");
    }
}

extern "C" __global__ void launch_scale(const float *__restrict__ x, float *__restrict__ y,
                                        unsigned long long n, float a)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        y[i] = a * x[i];
    }
}
