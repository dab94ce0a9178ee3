// Barrier and SIMT-deadlock probes after Wong et al., section IV-D (Listings 4-7), plus
// __syncwarp variants. Each probe is launched on its own, in a child process that the host
// kills if it overruns: a lane waiting in a barrier never reaches a watchdog check, so only
// spinning loops carry an in-kernel watchdog (`budget` cycles of clock64).
//
// Outputs are documented per kernel; -1 marks "never written".

#include "common.cuh"

// Listing 4 (one warp): every lane spins until a shared turn counter equals its lane id, then
// passes the turn on. Under pre-Volta SIMT the lane whose turn it is waits at the loop's
// reconvergence point for lanes that can never leave: deadlock.
// out[lane] = 1 if the lane's watchdog fired; out[32 + lane] = the turn it saw when it left;
// out[64] = the final turn.
extern "C" __global__ void sync_simt_spin(long long *out, long long budget)
{
    __shared__ volatile int turn;
    const int lane = threadIdx.x;
    if (lane == 0) {
        turn = 0;
    }
    __syncthreads();
    const long long start = read_clock64();
    int timed_out = 0;
    while (turn != lane) {
        if (read_clock64() - start > budget) {
            timed_out = 1;
            break;
        }
    }
    if (!timed_out) {
        out[32 + lane] = turn;
        turn = turn + 1;
    }
    out[lane] = timed_out;
    __syncthreads();
    if (lane == 0) {
        out[64] = turn;
    }
}

// Listing 5 (one warp): lanes 0-15 produce into shared memory and call __syncthreads(); lanes
// 16-31 call __syncthreads() on the other branch and then read. out[lane] for lanes 16-31 =
// the value read (producers write 100 + lane; -7 is the old value; -1 means never stored).
extern "C" __global__ void sync_divergent_syncthreads(long long *out)
{
    __shared__ int shared_array[16];
    const int lane = threadIdx.x;
    if (lane < 16) {
        shared_array[lane] = -7;
    }
    __syncthreads();
    if (lane < 16) {
        shared_array[lane] = 100 + lane;
        __syncthreads();
    } else {
        __syncthreads();
        out[lane] = shared_array[lane - 16];
    }
}

// The same with __syncwarp() in both branches.
extern "C" __global__ void sync_divergent_syncwarp(long long *out)
{
    __shared__ int shared_array[16];
    const int lane = threadIdx.x;
    if (lane < 16) {
        shared_array[lane] = -7;
    }
    __syncwarp();
    if (lane < 16) {
        shared_array[lane] = 100 + lane;
        __syncwarp();
    } else {
        __syncwarp();
        out[lane] = shared_array[lane - 16];
    }
}

// Listing 6 (two warps): warp 0 waits in __syncthreads() before it sets a flag; warp 1 spins on
// the flag and never calls __syncthreads(). out[0] = 1 once warp 0 is past its barrier;
// out[1] = 1 if warp 1's watchdog fired; out[2] = cycles warp 1 spun.
extern "C" __global__ void sync_two_warp_spin(long long *out, long long budget)
{
    __shared__ volatile int flag;
    const int tid = threadIdx.x;
    if (tid == 0) {
        flag = 0;
    }
    __syncthreads();
    if (tid < WARP_LANES) {
        __syncthreads();
        if (tid == 0) {
            flag = 1;
            out[0] = 1;
        }
    } else {
        const long long start = read_clock64();
        int timed_out = 0;
        while (flag == 0) {
            if (read_clock64() - start > budget) {
                timed_out = 1;
                break;
            }
        }
        if (tid == WARP_LANES) {
            out[1] = timed_out;
            out[2] = read_clock64() - start;
        }
    }
}

// Listing 7 (two warps): warp 0 diverges into two halves that each call __syncthreads() once
// (blocks 1 and 2); warp 1 calls it twice (barriers 3 and 4). Every lane stamps clock64 when
// it leaves its barrier: out[tid] for warp 0's lanes, out[32 + lane] after barrier 3 and
// out[64 + lane] after barrier 4 for warp 1. Which stamps coincide shows which barrier calls
// were paired. The halves store to different places so the compiler cannot merge them.
extern "C" __global__ void sync_barrier_pairing(long long *out, long long *scratch)
{
    const int tid = threadIdx.x;
    const int lane = tid % WARP_LANES;
    __syncthreads();
    if (tid < WARP_LANES) {
        if (lane < 16) {
            scratch[lane] = lane;
            __syncthreads();
            out[tid] = read_clock64();
        } else {
            scratch[64 + lane] = 2 * lane;
            __syncthreads();
            out[tid] = read_clock64();
        }
    } else {
        __syncthreads();
        out[32 + lane] = read_clock64();
        __syncthreads();
        out[64 + lane] = read_clock64();
    }
}

// __syncwarp() whose mask names lanes that have already exited: lanes 16-31 return at once,
// lanes 0-15 then call __syncwarp(0xffffffff). The PTX manual leaves this undefined; the probe
// records whether the waiting lanes come back. out[lane] = 1 for every lane 0-15 that got past.
extern "C" __global__ void sync_syncwarp_exited(long long *out)
{
    const int lane = threadIdx.x;
    if (lane >= 16) {
        return;
    }
    __syncwarp(0xffffffffu);
    out[lane] = 1;
}
