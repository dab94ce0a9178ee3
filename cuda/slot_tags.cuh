// Branch tagging for lane-slot accounting (Gupta & Datta, "intrinsic" and "extrinsic"
// branches). A tagged kernel carries a SlotState through its control flow: the lanes of the
// warp that the last deactivating branch left idle, by kind, as the paper's thread-status
// tables keep them. Everything is template-switched on TAGGED so the same kernel compiles
// with the tags gone, to measure their cost.
//
//   SlotState s = slot_start<TAGGED>();
//   const SlotState outer = s;
//   if (slot_branch<TAGGED>(&s, counters, 0, SLOT_EXTRINSIC, tid == 0)) {
//       slot_region<TAGGED>(s, counters);   // once per basic block worth one slot per lane
//   }
//   s = outer;                               // where the paths reconverge
//
// A loop condition is tagged in place: while (slot_branch<T>(&s, c, id, kind, i < n)) {...};
// lanes that leave stay marked with the loop's kind until the state is restored after it.
//
// Counters (unsigned long long, laid out by the host, src/experiments/slots.rs):
//   branch b at [b * 6 + 0..6]: dynamic count (warp executions), instances (active lanes at
//   the branch), taken lanes, paths run (1 or 2 per execution), kind + 1, divergent executions;
//   slot totals at [SLOT_TOTALS + 0..4]: slots, active, idle through extrinsic, idle through
//   intrinsic. Lanes idle for no tagged reason (none in our workloads) are slots minus the rest.
#pragma once

#define SLOT_EXTRINSIC 0
#define SLOT_INTRINSIC 1
#define SLOT_MAX_BRANCHES 16
#define SLOT_BRANCH_FIELDS 6
#define SLOT_TOTALS (SLOT_MAX_BRANCHES * SLOT_BRANCH_FIELDS)
#define SLOT_COUNTERS (SLOT_TOTALS + 4)

struct SlotState {
    unsigned extrinsic; // lanes idle because of an extrinsic branch
    unsigned intrinsic; // lanes idle because of an intrinsic branch
};

template <bool TAGGED> __device__ __forceinline__ SlotState slot_start()
{
    SlotState s = {0u, 0u};
    return s;
}

__device__ __forceinline__ bool slot_leader(unsigned active)
{
    return (threadIdx.x & 31) == (unsigned)(__ffs(active) - 1);
}

// Records the branch and returns cond. On each side, the active lanes that went the other way
// become idle through this branch's kind.
template <bool TAGGED>
__device__ __forceinline__ bool slot_branch(SlotState *s, unsigned long long *counters, int id,
                                            int kind, bool cond)
{
    if (!TAGGED) {
        return cond;
    }
    const unsigned active = __activemask();
    const unsigned taken = __ballot_sync(active, cond);
    const unsigned other = cond ? (active & ~taken) : taken;
    if (kind == SLOT_EXTRINSIC) {
        s->extrinsic |= other;
    } else {
        s->intrinsic |= other;
    }
    if (slot_leader(active)) {
        unsigned long long *b = counters + id * SLOT_BRANCH_FIELDS;
        const bool divergent = taken != 0 && taken != active;
        atomicAdd(b + 0, 1ull);
        atomicAdd(b + 1, (unsigned long long)__popc(active));
        atomicAdd(b + 2, (unsigned long long)__popc(taken));
        atomicAdd(b + 3, divergent ? 2ull : 1ull);
        b[4] = (unsigned long long)(kind + 1);
        if (divergent) {
            atomicAdd(b + 5, 1ull);
        }
    }
    return cond;
}

// One slot per lane of the warp: active lanes, and idle ones by the kind that idled them.
template <bool TAGGED>
__device__ __forceinline__ void slot_region(SlotState s, unsigned long long *counters)
{
    if (!TAGGED) {
        return;
    }
    const unsigned active = __activemask();
    if (slot_leader(active)) {
        unsigned long long *t = counters + SLOT_TOTALS;
        atomicAdd(t + 0, 32ull);
        atomicAdd(t + 1, (unsigned long long)__popc(active));
        atomicAdd(t + 2, (unsigned long long)__popc(s.extrinsic & ~active));
        atomicAdd(t + 3, (unsigned long long)__popc(s.intrinsic & ~active & ~s.extrinsic));
    }
}
