// Register-file allocation (Wong et al., section IV-E, Fig. 9): a kernel that keeps LIVE
// values in flight, loaded again and again with the JIT option CU_JIT_MAX_REGISTERS set to a
// different cap, so that ptxas gives it exactly as many registers as the cap allows (spilling
// the rest). The host then finds the largest block that launches at each register count.
// out[global thread] = a fold of the live values, so none can be dropped.

#define LIVE 250

extern "C" __global__ void regs_pressure(unsigned *out, unsigned seed)
{
    unsigned v[LIVE];
#pragma unroll
    for (int i = 0; i < LIVE; ++i) {
        v[i] = seed * (i + 1) + threadIdx.x;
    }
#pragma unroll
    for (int round = 0; round < 3; ++round) {
#pragma unroll
        for (int i = 0; i < LIVE; ++i) {
            v[i] = v[i] * v[(i + 7) % LIVE] + round;
        }
    }
    unsigned acc = 0;
#pragma unroll
    for (int i = 0; i < LIVE; ++i) {
        acc ^= v[i] + i;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
