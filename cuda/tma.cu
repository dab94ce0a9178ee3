// gpubench-arch: compute_90
// The Tensor Memory Accelerator (issue #17; Luo et al. 2024, "Benchmarking and Dissecting the
// Nvidia Hopper GPU Architecture", the TMA section): bulk tensor copies global -> shared
// (cp.async.bulk.tensor) completing on a shared-memory mbarrier, with the tensor map built by the
// driver (cuTensorMapEncodeTiled) and passed as a __grid_constant__ parameter. Built for
// compute_90, the first target with TMA.
//
// tma_touch(const unsigned *data, unsigned long long words, unsigned *sink):
//   every thread of the grid reads a stride of `data` with ld.global.cg, so a chain that fits the
//   L2 is there before a chase (and one that does not leaves the L2 holding its last part).
//
// tma_latency(map, const unsigned *data, long long *out[3], unsigned start, int warm,
//             int steps, int mode):
//   thread 0 follows a chain of TILE_WORDS-word tiles whose first word holds the index of the
//   next tile's first word: mode 0 copies each tile with a 1-D cp.async.bulk.tensor and reads
//   the index from shared memory once the mbarrier completes; mode 1 reads it with
//   ld.global.cg (the L2 load the copy is compared with). out[0] = cycles of `steps` timed
//   steps, out[1] = last index, out[2] = 1 if a copy never completed (the watchdog gave up).
//
// tma_bandwidth(map, long long *stamps[2 * blocks], unsigned *sink[blocks], int tiles,
//               int stages, int box_rows, int tiles_per_row, int total_tiles):
//   thread 0 of every block streams `tiles` 2-D tiles (BOX_COLUMNS x box_rows words) of the
//   tensor into `stages` shared buffers, each on its own mbarrier, keeping every stage in
//   flight: block b takes tiles b, b + grid, b + 2 grid, ... (modulo total_tiles). stamps:
//   clock64 before the first copy and after the last completes.
//
// tma_l2_read(const unsigned *data, unsigned *out[2], unsigned slice_bytes, unsigned slices,
//             int passes, int stages, int shared):
//   the L2 read by non-tensor bulk copies (cp.async.bulk, issue #32). `data` holds `slices`
//   slices of `slice_bytes`, small enough to stay in the L2, each word its own index; thread 0
//   of every block copies slices into `stages` shared buffers, each on its own mbarrier, all in
//   flight, `passes` times over. Lines private to one block (shared = 0): block b copies slices
//   b, b + grid, ... (each slice by one block per pass, as the bandwidth suite's `l2 read`);
//   lines shared by every SM (shared = 1): every block copies every slice, from slice
//   b % slices on. out[0] counts the buffers that did not hold, after the last copy, the first
//   and last word of the slice last copied into them; out[1] the blocks whose copy never
//   completed (the watchdog gave up).
//
// tma_dram_copy(const unsigned char *src, unsigned char *dst, unsigned chunk_bytes,
//               unsigned long long chunks, int stages, int lag, unsigned *stuck,
//               unsigned long long *ticket):
//   a DRAM copy by bulk copies through shared memory (issue #32, item 2): thread 0 of every
//   block takes chunks of `src` in order from `ticket` (zeroed by the host; each block fetches
//   its next chunk's ticket one load ahead) and copies each to the same place in `dst`, loaded
//   into one of `stages` shared buffers (cp.async.bulk, on its own mbarrier) and stored from it
//   (cp.async.bulk.global.shared::cta, one bulk group per chunk). A buffer is loaded again
//   once the store from it has read it, which is waited for `lag` chunks later
//   (cp.async.bulk.wait_group.read lag), so about stages - lag loads and lag stores are in
//   flight. Chunks by ticket rather than b, b + grid, ... per block keep the chunks in flight
//   together and end the copy on no few blocks: on an H100 8 KiB x 8 stages rose from 86 % of
//   the DRAM peak to 90.5 % (scripts/dram-bulk-ticket-probe.cu). stuck counts the blocks whose
//   load never completed (the watchdog gave up).

// tma_tiles(map, long long *stamps[2 * blocks], unsigned *sink[blocks], int tiles, int stages,
//           int rank, int box_x, int box_y, int box_z, int tiles_x, int tiles_y, int tiles_z):
//   tile shapes (issue #74): thread 0 of every block copies `tiles` boxes of box_x x box_y
//   (x box_z where rank is 3) words of a 2-D or 3-D tensor, whose map may swizzle, into
//   `stages` shared buffers, each on its own mbarrier, all in flight. Block b starts at tile
//   b * total / grid (x fastest, then y, then z) and walks on tile by tile, wrapping at the end,
//   so a tensor smaller than what the grid reads is read again (from the L2 where it fits).
//   The buffers start 1024-byte aligned: a 128-byte swizzle's pattern spans 1024 bytes.
//   stamps: clock64 before the first copy and after the last completes (equal if one never did).
//
// async_copy(const uint4 *src, unsigned chunks, long long *stamps[2 * blocks],
//            unsigned *sink[blocks * ASYNC_THREADS], int steps, int depth, int mode):
//   cp.async against synchronous loads (issue #74): every thread of a block of ASYNC_THREADS
//   copies one 16-byte piece of each chunk (ASYNC_THREADS x 16 bytes) from global into shared
//   memory. Block b takes chunks b, b + grid, ... modulo `chunks` (a region smaller than what
//   the grid reads is read again), `steps` of them, `depth` in flight. mode 0, synchronous:
//   each thread loads `depth` pieces with ld.global.cg into registers, stores them to shared
//   memory, and the block synchronises; mode 1: cp.async.cg of 16 bytes into `depth` shared
//   buffers, one commit group per chunk, each chunk waited for `depth` - 1 groups behind. Once a
//   chunk has landed every thread reads a word another thread copied. depth is 1, 2, 4 or 8;
//   steps a multiple of depth. stamps: thread 0's clock64 before the first load and after the
//   last chunk was read.

#include "common.cuh"

#define TILE_WORDS 32
#define BOX_COLUMNS 64
#define MAX_STAGES 8
#define L2_READ_MAX_STAGES 16
#define DRAM_COPY_MAX_STAGES 12
#define TILES_MAX_STAGES 8
#define ASYNC_THREADS 256
// A copy that has not completed after this many cycles (about a second) never will.
#define WATCHDOG_CYCLES (1ll << 31)

struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

__device__ __forceinline__ unsigned smem_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// The shared-window address of `p` as a value ptxas cannot recompute. Left to itself, ptxas
// rematerialises a buffer's or barrier's address inside a copy loop from SR_CgaCtaId (an S2UR
// per use), on the critical path of the one thread that issues every copy: tma_l2_read ran at
// 210 cycles per copy against 180 for the same loop with the address held (an H100, 16 KiB
// copies of lines every SM reads: 20.5 against 23.6 TB/s).
__device__ __forceinline__ unsigned held_smem_address(const void *p)
{
    unsigned a;
    asm volatile("mov.u32 %0, %1;" : "=r"(a) : "r"(smem_address(p)));
    return a;
}

__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void barrier_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

// Whether phase `parity` of `bar` has completed (try_wait may suspend the thread a while first).
__device__ __forceinline__ bool barrier_try(unsigned bar, unsigned parity)
{
    unsigned done;
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}

// Waits for phase `parity` of `bar` to complete; false if the watchdog gave up. The clock is
// read only once the first try has failed: a copy loop whose barrier is usually complete
// already is issue-bound, and a clock read before every wait slowed the bulk copies of
// tma_l2_read by 15 % (77.5 against 90 bytes per clock per SM on an H100).
__device__ __forceinline__ bool barrier_wait(unsigned bar, unsigned parity)
{
    if (barrier_try(bar, parity)) {
        return true;
    }
    const long long start = read_clock64();
    while (!barrier_try(bar, parity)) {
        if (read_clock64() - start > WATCHDOG_CYCLES) {
            return false;
        }
    }
    return true;
}

__device__ __forceinline__ void copy_1d(unsigned dst, const TensorMap *map, int x, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2}], [%3];" ::"r"(dst),
                 "l"(map), "r"(x), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void copy_2d(unsigned dst, const TensorMap *map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"(map), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void copy_3d(unsigned dst, const TensorMap *map, int x, int y, int z,
                                        unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                 "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void barriers_ready()
{
    // The barrier's initialisation visible to the copy engine before its first copy.
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
}

// Thread 0 initialises the first `stages` barriers of `bars`; every thread of the block then
// sees them ready.
__device__ __forceinline__ void stage_barriers_ready(unsigned long long *bars, int stages)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            barrier_init(smem_address(&bars[s]), 1);
        }
    }
    barriers_ready();
}

// Thread 0's stream through `stages` buffers of `tile_bytes` from `first`, each on its own
// barrier from `bar0`: `tiles` copies, each issued by `issue` (which advances its own tile and
// stage), all stages in flight, each waited for in turn and its first word added to `acc`.
// False if a copy never completed (the watchdog gave up).
template <typename Issue>
__device__ __forceinline__ bool stream_stages(int tiles, int stages, unsigned bar0,
                                              const unsigned char *first, unsigned tile_bytes,
                                              unsigned &acc, Issue issue)
{
    for (int k = 0; k < stages && k < tiles; ++k) {
        issue();
    }
    int s = 0;
    unsigned parity = 0;
    bool alive = true;
    for (int k = 0; k < tiles && alive; ++k) {
        alive = barrier_wait(bar0 + 8u * s, parity);
        acc += *(volatile unsigned *)(first + s * tile_bytes);
        if (k + stages < tiles) {
            issue();
        }
        if (++s == stages) {
            s = 0;
            parity ^= 1u;
        }
    }
    return alive;
}

extern "C" __global__ void tma_touch(const unsigned *data, unsigned long long words, unsigned *sink)
{
    unsigned acc = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        acc ^= __ldcg(data + i);
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The chase's chain on the device from its compact form: word w is next[w / tile_words] *
// tile_words at the start of each tile and 0 elsewhere (what experiments::chain builds on the
// host), so the host uploads one word per tile rather than the whole footprint.
extern "C" __global__ void tma_chain_fill(unsigned *data, const unsigned *next, unsigned long long words,
                                          unsigned tile_words)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
        const unsigned long long tile = w / tile_words;
        data[w] = w == tile * tile_words ? next[tile] * tile_words : 0u;
    }
}

extern "C" __global__ void tma_latency(const __grid_constant__ TensorMap map, const unsigned *data,
                                       long long *out, unsigned start, int warm, int steps, int mode)
{
    __shared__ alignas(128) unsigned tile[TILE_WORDS];
    __shared__ alignas(8) unsigned long long bar_word;
    const unsigned bar = smem_address(&bar_word);
    if (threadIdx.x == 0) {
        barrier_init(bar, 1);
    }
    barriers_ready();
    if (threadIdx.x != 0) {
        return;
    }
    unsigned p = start;
    long long cycles = 0;
    if (mode == 0) {
        const unsigned dst = smem_address(tile);
        unsigned parity = 0;
        bool alive = true;
        auto step = [&](unsigned q) {
            barrier_expect(bar, TILE_WORDS * 4);
            copy_1d(dst, &map, (int)q, bar);
            alive = alive && barrier_wait(bar, parity);
            parity ^= 1;
            return alive ? *(volatile unsigned *)tile : q;
        };
        cycles = timed_chase(p, warm, steps, step);
        out[2] = alive ? 0 : 1;
    } else {
        cycles = timed_chase(p, warm, steps, [&](unsigned q) { return __ldcg(data + q); });
        out[2] = 0;
    }
    out[0] = cycles;
    out[1] = p;
}

extern "C" __global__ void tma_bandwidth(const __grid_constant__ TensorMap map, long long *stamps,
                                         unsigned *sink, int tiles, int stages, int box_rows,
                                         int tiles_per_row, int total_tiles)
{
    extern __shared__ __align__(128) unsigned char buffers[];
    __shared__ alignas(8) unsigned long long bar_words[MAX_STAGES];
    const unsigned tile_bytes = BOX_COLUMNS * 4u * box_rows;
    stage_barriers_ready(bar_words, stages);
    if (threadIdx.x != 0) {
        return;
    }
    // Copies are issued in order k = 0, 1, 2, ...: copy k takes tile (b + k * grid) modulo
    // total_tiles, at column (t % tiles_per_row) and row (t / tiles_per_row). The tile and the
    // stage advance by additions: a 64-bit modulo and two divisions per copy in this one
    // issuing thread cost hundreds of cycles per copy, enough to hold a copy engine that
    // completes a 4 KiB copy every ~200 cycles (scripts/l2-bulk-read-probe.cu).
    const int rows = total_tiles / tiles_per_row;
    const int step_col = (int)(gridDim.x % (unsigned)tiles_per_row);
    const int step_row = (int)(gridDim.x / (unsigned)tiles_per_row);
    int col = (int)(blockIdx.x % (unsigned)tiles_per_row);
    int row = (int)(blockIdx.x / (unsigned)tiles_per_row) % rows;
    int next_stage = 0;
    const unsigned dst0 = held_smem_address(buffers);
    const unsigned bar0 = held_smem_address(bar_words);
    auto issue = [&]() {
        const int s = next_stage;
        const unsigned bar = bar0 + 8u * s;
        barrier_expect(bar, tile_bytes);
        copy_2d(dst0 + s * tile_bytes, &map, col * BOX_COLUMNS, row * box_rows, bar);
        next_stage = s + 1 == stages ? 0 : s + 1;
        col += step_col;
        row += step_row;
        if (col >= tiles_per_row) {
            col -= tiles_per_row;
            row += 1;
        }
        while (row >= rows) {
            row -= rows;
        }
    };
    unsigned acc = 0;
    const long long begin = read_clock64();
    const bool alive = stream_stages(tiles, stages, bar0, buffers, tile_bytes, acc, issue);
    const long long end = read_clock64();
    stamps[2 * blockIdx.x] = begin;
    // A block whose copy never completed reports no span.
    stamps[2 * blockIdx.x + 1] = alive ? end : begin;
    sink[blockIdx.x] = acc;
}

extern "C" __global__ void tma_l2_read(const unsigned *data, unsigned *out, unsigned slice_bytes,
                                       unsigned slices, int passes, int stages, int shared)
{
    extern __shared__ __align__(128) unsigned char buffers[];
    __shared__ alignas(8) unsigned long long bar_words[L2_READ_MAX_STAGES];
    stage_barriers_ready(bar_words, stages);
    if (threadIdx.x != 0) {
        return;
    }
    const unsigned char *bytes = (const unsigned char *)data;
    const unsigned step = shared ? 1u : gridDim.x;
    const unsigned first = blockIdx.x % slices;
    const unsigned per_pass = shared ? slices : (slices - first + step - 1) / step;
    const unsigned long long total = (unsigned long long)per_pass * (unsigned)passes;
    const unsigned dst0 = held_smem_address(buffers);
    const unsigned bar0 = held_smem_address(bar_words);
    unsigned last[L2_READ_MAX_STAGES];
    // Stage, use of the stage, place in the pass and slice advance by additions: this one
    // thread issues every copy, and a division per copy would hold the copies back (see
    // tma_bandwidth).
    unsigned st = 0, use = 0, j = 0, s = first;
    bool alive = true;
    for (unsigned long long k = 0; k < total && alive; ++k) {
        const unsigned bar = bar0 + 8 * st;
        if (use > 0) {
            alive = barrier_wait(bar, (use - 1) & 1u);
        }
        barrier_expect(bar, slice_bytes);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1], %2, [%3];" ::"r"(dst0 + st * slice_bytes),
                     "l"(bytes + (size_t)s * slice_bytes), "r"(slice_bytes), "r"(bar)
                     : "memory");
        last[st] = s;
        if (++st == (unsigned)stages) {
            st = 0;
            ++use;
        }
        if (++j == per_pass) {
            j = 0;
            s = first;
        } else if ((s += step) >= slices) {
            s -= slices;
        }
    }
    const unsigned long long from = total > (unsigned long long)stages ? total - stages : 0;
    for (unsigned long long k = from; k < total && alive; ++k) {
        alive = barrier_wait(bar0 + 8 * (unsigned)(k % stages), (unsigned)(k / stages) & 1u);
    }
    if (!alive) {
        atomicAdd(out + 1, 1u);
        return;
    }
    const unsigned words = slice_bytes / 4;
    for (int i = 0; i < stages && (unsigned long long)i < total; ++i) {
        const volatile unsigned *w = (const volatile unsigned *)(buffers + i * slice_bytes);
        if (w[0] != last[i] * words || w[words - 1] != last[i] * words + words - 1) {
            atomicAdd(out, 1u);
        }
    }
}

// Waits until every bulk store group but the newest `lag` has read its shared memory (the
// instruction takes its count as an immediate).
__device__ __forceinline__ void stores_read_but(int lag)
{
    switch (lag) {
    case 1: asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.bulk.wait_group.read 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.bulk.wait_group.read 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.bulk.wait_group.read 5;" ::: "memory"); break;
    default: asm volatile("cp.async.bulk.wait_group.read 6;" ::: "memory"); break;
    }
}

extern "C" __global__ void tma_dram_copy(const unsigned char *src, unsigned char *dst, unsigned chunk_bytes,
                                         unsigned long long chunks, int stages, int lag, unsigned *stuck,
                                         unsigned long long *ticket)
{
    extern __shared__ __align__(128) unsigned char buffers[];
    __shared__ alignas(8) unsigned long long bar_words[DRAM_COPY_MAX_STAGES];
    // The chunk each buffer holds; `chunks` or more: none, and none after it.
    __shared__ unsigned long long chunk_in[DRAM_COPY_MAX_STAGES];
    stage_barriers_ready(bar_words, stages);
    if (threadIdx.x != 0) {
        return;
    }
    const unsigned buf0 = held_smem_address(buffers);
    const unsigned bar0 = held_smem_address(bar_words);
    // By address, so the loop does not read the block's shared window again for every chunk.
    const unsigned in0 = held_smem_address(chunk_in);
    auto chunk_of = [&](unsigned s) {
        unsigned long long c;
        asm volatile("ld.shared.u64 %0, [%1];" : "=l"(c) : "r"(in0 + 8 * s) : "memory");
        return c;
    };
    // The chunk the next load takes, fetched a load ahead: the atomic's round trip overlaps
    // the copies in flight.
    unsigned long long ahead = atomicAdd(ticket, 1ull);
    auto load = [&](unsigned s) {
        asm volatile("st.shared.u64 [%0], %1;" ::"r"(in0 + 8 * s), "l"(ahead) : "memory");
        if (ahead >= chunks) {
            return;
        }
        const unsigned bar = bar0 + 8 * s;
        barrier_expect(bar, chunk_bytes);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1], %2, [%3];" ::"r"(buf0 + s * chunk_bytes),
                     "l"(src + ahead * chunk_bytes), "r"(chunk_bytes), "r"(bar)
                     : "memory");
        ahead = atomicAdd(ticket, 1ull);
    };
    for (int s = 0; s < stages; ++s) {
        load((unsigned)s);
    }
    // Buffers are used in turn and tickets only grow, so the first empty buffer ends the copy.
    unsigned s = 0, parity = 0, refill = 0;
    bool alive = true;
    for (unsigned long long k = 0; chunk_of(s) < chunks; ++k) {
        alive = barrier_wait(bar0 + 8 * s, parity);
        if (!alive) {
            break;
        }
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                         dst + chunk_of(s) * chunk_bytes),
                     "r"(buf0 + s * chunk_bytes), "r"(chunk_bytes)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (k >= (unsigned long long)lag) {
            // Chunk k - lag's buffer takes the next chunk once its store has read it.
            if (ahead < chunks) {
                stores_read_but(lag);
            }
            load(refill);
            refill = refill + 1 == (unsigned)stages ? 0 : refill + 1;
        }
        if (++s == (unsigned)stages) {
            s = 0;
            parity ^= 1u;
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    if (!alive) {
        atomicAdd(stuck, 1u);
    }
}

extern "C" __global__ void tma_tiles(const __grid_constant__ TensorMap map, long long *stamps, unsigned *sink,
                                     int tiles, int stages, int rank, int box_x, int box_y, int box_z,
                                     int tiles_x, int tiles_y, int tiles_z)
{
    extern __shared__ __align__(128) unsigned char buffers[];
    __shared__ alignas(8) unsigned long long bar_words[TILES_MAX_STAGES];
    const unsigned tile_bytes = 4u * (unsigned)(box_x * box_y * box_z);
    stage_barriers_ready(bar_words, stages);
    if (threadIdx.x != 0) {
        return;
    }
    // The host gives 1024 bytes more than the buffers need, for this alignment.
    const unsigned offset = ((smem_address(buffers) + 1023u) & ~1023u) - smem_address(buffers);
    const unsigned dst0 = held_smem_address(buffers + offset);
    const unsigned bar0 = held_smem_address(bar_words);
    // The start by division once; then the tile advances by additions (see tma_bandwidth).
    const long long total = (long long)tiles_x * tiles_y * tiles_z;
    const int t = (int)((long long)blockIdx.x * total / gridDim.x);
    int x = t % tiles_x;
    int y = (t / tiles_x) % tiles_y;
    int z = t / (tiles_x * tiles_y);
    int next_stage = 0;
    auto issue = [&]() {
        const int s = next_stage;
        const unsigned bar = bar0 + 8u * s;
        barrier_expect(bar, tile_bytes);
        if (rank == 3) {
            copy_3d(dst0 + s * tile_bytes, &map, x * box_x, y * box_y, z * box_z, bar);
        } else {
            copy_2d(dst0 + s * tile_bytes, &map, x * box_x, y * box_y, bar);
        }
        next_stage = s + 1 == stages ? 0 : s + 1;
        if (++x == tiles_x) {
            x = 0;
            if (++y == tiles_y) {
                y = 0;
                if (++z == tiles_z) {
                    z = 0;
                }
            }
        }
    };
    unsigned acc = 0;
    const long long begin = read_clock64();
    const bool alive = stream_stages(tiles, stages, bar0, buffers + offset, tile_bytes, acc, issue);
    const long long end = read_clock64();
    stamps[2 * blockIdx.x] = begin;
    stamps[2 * blockIdx.x + 1] = alive ? end : begin;
    sink[blockIdx.x] = acc;
}

// The next chunk of this block: `grid` on, wrapping (the host keeps chunks >= grid).
__device__ __forceinline__ unsigned next_chunk(unsigned c, unsigned chunks)
{
    c += gridDim.x;
    return c >= chunks ? c - chunks : c;
}

// Synchronous loads, DEPTH pieces per thread in registers at once.
template <int DEPTH>
__device__ __forceinline__ unsigned sync_chunks(const uint4 *src, unsigned chunks, int steps, uint4 *buf)
{
    const unsigned tid = threadIdx.x;
    const unsigned other = (tid + 1) % ASYNC_THREADS;
    unsigned c = blockIdx.x;
    unsigned acc = 0;
    for (int k = 0; k < steps; k += DEPTH) {
        uint4 v[DEPTH];
#pragma unroll
        for (int j = 0; j < DEPTH; ++j) {
            v[j] = __ldcg(src + (size_t)c * ASYNC_THREADS + tid);
            c = next_chunk(c, chunks);
        }
#pragma unroll
        for (int j = 0; j < DEPTH; ++j) {
            buf[j * ASYNC_THREADS + tid] = v[j];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < DEPTH; ++j) {
            acc += ((volatile uint4 *)buf)[j * ASYNC_THREADS + other].x;
        }
        __syncthreads();
    }
    return acc;
}

// cp.async of 16 bytes (L2 only, as ld.global.cg), DEPTH chunks in flight.
template <int DEPTH>
__device__ __forceinline__ unsigned async_chunks(const uint4 *src, unsigned chunks, int steps, uint4 *buf)
{
    const unsigned tid = threadIdx.x;
    const unsigned other = (tid + 1) % ASYNC_THREADS;
    const unsigned dst0 = smem_address(buf + tid);
    unsigned c = blockIdx.x;
    auto issue = [&](int s) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst0 + s * ASYNC_THREADS * 16u),
                     "l"(src + (size_t)c * ASYNC_THREADS + tid)
                     : "memory");
        c = next_chunk(c, chunks);
    };
    for (int s = 0; s < DEPTH; ++s) {
        issue(s);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    unsigned acc = 0;
    int s = 0;
    for (int k = 0; k < steps; ++k) {
        // Chunk k is the oldest of DEPTH groups committed.
        asm volatile("cp.async.wait_group %0;" ::"n"(DEPTH - 1) : "memory");
        __syncthreads();
        acc += ((volatile uint4 *)buf)[s * ASYNC_THREADS + other].x;
        __syncthreads();
        if (k + DEPTH < steps) {
            issue(s);
        }
        // An empty group past the end keeps the count the wait above relies on.
        asm volatile("cp.async.commit_group;" ::: "memory");
        s = s + 1 == DEPTH ? 0 : s + 1;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    return acc;
}

extern "C" __global__ void __launch_bounds__(ASYNC_THREADS)
    async_copy(const uint4 *src, unsigned chunks, long long *stamps, unsigned *sink, int steps, int depth,
               int mode)
{
    extern __shared__ __align__(128) unsigned char buffers[];
    uint4 *buf = (uint4 *)buffers;
    __syncthreads();
    const long long begin = read_clock64();
    unsigned acc = 0;
    bool known = true;
    switch (mode * 16 + depth) {
    case 1: acc = sync_chunks<1>(src, chunks, steps, buf); break;
    case 2: acc = sync_chunks<2>(src, chunks, steps, buf); break;
    case 4: acc = sync_chunks<4>(src, chunks, steps, buf); break;
    case 8: acc = sync_chunks<8>(src, chunks, steps, buf); break;
    case 17: acc = async_chunks<1>(src, chunks, steps, buf); break;
    case 18: acc = async_chunks<2>(src, chunks, steps, buf); break;
    case 20: acc = async_chunks<4>(src, chunks, steps, buf); break;
    case 24: acc = async_chunks<8>(src, chunks, steps, buf); break;
    default: known = false; break;
    }
    __syncthreads();
    const long long end = read_clock64();
    if (threadIdx.x == 0) {
        stamps[2 * blockIdx.x] = begin;
        // An unknown mode or depth reports no span.
        stamps[2 * blockIdx.x + 1] = known ? end : begin;
    }
    sink[blockIdx.x * ASYNC_THREADS + threadIdx.x] = acc;
}
