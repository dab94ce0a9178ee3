// Workloads for lane-slot accounting (Gupta & Datta, section V and Fig. 8), each a small
// kernel in the spirit of the Rodinia set the paper tagged, with every branch tagged as
// intrinsic (the algorithm's own decision) or extrinsic (forced by the mapping onto a GPU:
// bound checks, one thread doing serial work, tree reductions). Each is compiled twice, as
// NAME_tagged and NAME_plain (tags compiled out), so the tags' cost can be measured.
// Branch ids are listed beside each kernel and named on the host (src/experiments/slots.rs).

#include "slot_tags.cuh"

#define EXT SLOT_EXTRINSIC
#define INT SLOT_INTRINSIC

// Dot product with the reduction in one thread (the paper's Fig. 2). One block of blockDim.x
// threads. Branches: 0 element loop (int), 1 tid == 0 (ext), 2 serial sum loop (int).
template <bool T>
__device__ void dot(const float *a, const float *b, int n, float *partial, float *out,
                    unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = threadIdx.x;
    float sum = 0.0f;
    {
        const SlotState outer = s;
        for (int i = tid; slot_branch<T>(&s, c, 0, INT, i < n); i += blockDim.x) {
            slot_region<T>(s, c);
            sum += a[i] * b[i];
        }
        s = outer;
    }
    partial[tid] = sum;
    __syncthreads();
    const SlotState outer = s;
    if (slot_branch<T>(&s, c, 1, EXT, tid == 0)) {
        float total = 0.0f;
        const SlotState before_loop = s;
        for (int k = 0; slot_branch<T>(&s, c, 2, INT, k < (int)blockDim.x); ++k) {
            slot_region<T>(s, c);
            total += partial[k];
        }
        s = before_loop;
        out[0] = total;
    }
    s = outer;
}

// BFS, Rodinia's two kernels per level. Kernel 1 branches: 0 tid < n (ext), 1 in frontier
// (int), 2 edge loop (int), 3 neighbour unvisited (int). Kernel 2: 4 tid < n (ext), 5 updated
// this level (int).
template <bool T>
__device__ void bfs_expand(const int *offsets, const int *edges, bool *frontier, bool *updating,
                           const bool *visited, int *cost, int n, unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    slot_region<T>(s, c);
    if (slot_branch<T>(&s, c, 0, EXT, tid < n)) {
        const SlotState outer = s;
        if (slot_branch<T>(&s, c, 1, INT, frontier[tid])) {
            slot_region<T>(s, c);
            frontier[tid] = false;
            const SlotState before_loop = s;
            for (int e = offsets[tid]; slot_branch<T>(&s, c, 2, INT, e < offsets[tid + 1]); ++e) {
                slot_region<T>(s, c);
                const int next = edges[e];
                const SlotState inner = s;
                if (slot_branch<T>(&s, c, 3, INT, !visited[next])) {
                    slot_region<T>(s, c);
                    cost[next] = cost[tid] + 1;
                    updating[next] = true;
                }
                s = inner;
            }
            s = before_loop;
        }
        s = outer;
    }
}

template <bool T>
__device__ void bfs_update(bool *frontier, bool *updating, bool *visited, int *again, int n,
                           unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    slot_region<T>(s, c);
    if (slot_branch<T>(&s, c, 4, EXT, tid < n)) {
        if (slot_branch<T>(&s, c, 5, INT, updating[tid])) {
            slot_region<T>(s, c);
            frontier[tid] = true;
            visited[tid] = true;
            *again = 1;
            updating[tid] = false;
        }
    }
}

// Gaussian elimination, Rodinia's Fan1 (multipliers) and Fan2 (update) for step t. Fan1:
// 0 row in range (ext). Fan2 (2-D): 1 column in range (ext), 2 row in range (ext), 3 first
// column also updates b (ext).
template <bool T>
__device__ void gauss_fan1(const float *a, float *m, int size, int t, unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    slot_region<T>(s, c);
    if (slot_branch<T>(&s, c, 0, EXT, tid < size - 1 - t)) {
        slot_region<T>(s, c);
        m[size * (tid + t + 1) + t] = a[size * (tid + t + 1) + t] / a[size * t + t];
    }
}

template <bool T>
__device__ void gauss_fan2(float *a, float *b, const float *m, int size, int t,
                           unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int x = blockIdx.x * blockDim.x + threadIdx.x; // row offset below t
    const int y = blockIdx.y * blockDim.y + threadIdx.y; // column offset from t
    slot_region<T>(s, c);
    if (slot_branch<T>(&s, c, 1, EXT, x < size - 1 - t)) {
        if (slot_branch<T>(&s, c, 2, EXT, y < size - t)) {
            slot_region<T>(s, c);
            const int row = x + 1 + t;
            a[size * row + y + t] -= m[size * row + t] * a[size * t + y + t];
            if (slot_branch<T>(&s, c, 3, EXT, y == 0)) {
                slot_region<T>(s, c);
                b[row] -= m[size * row + t] * b[t];
            }
        }
    }
}

// Backprop forward layer (Rodinia bpnn_layerforward): 16 x 16 blocks, block by takes 16 inputs,
// thread (tx, ty) multiplies input ty by weight (ty, tx), a tree reduction over ty sums them.
// Branches: 0 tx == 0 loads the input (ext), 1 reduction step loop (int), 2 ty % power == 0
// (ext: the reduction is the mapping's), 3 ty == 0 writes the partial sum (ext).
template <bool T>
__device__ void backprop(const float *input, const float *weights, float *partial, int hidden,
                         unsigned long long *c)
{
    __shared__ float node[16];
    __shared__ float product[16][16];
    SlotState s = slot_start<T>();
    const int tx = threadIdx.x, ty = threadIdx.y, by = blockIdx.y;
    const int row = by * 16 + ty;
    slot_region<T>(s, c);
    {
        const SlotState outer = s;
        if (slot_branch<T>(&s, c, 0, EXT, tx == 0)) {
            slot_region<T>(s, c);
            node[ty] = input[row];
        }
        s = outer;
    }
    __syncthreads();
    product[ty][tx] = weights[row * hidden + tx] * node[ty];
    slot_region<T>(s, c);
    __syncthreads();
    {
        const SlotState outer = s;
        for (int power = 2; slot_branch<T>(&s, c, 1, INT, power <= 16); power *= 2) {
            const SlotState inner = s;
            if (slot_branch<T>(&s, c, 2, EXT, ty % power == 0)) {
                slot_region<T>(s, c);
                product[ty][tx] += product[ty + power / 2][tx];
            }
            s = inner;
            __syncthreads();
        }
        s = outer;
    }
    if (slot_branch<T>(&s, c, 3, EXT, ty == 0)) {
        slot_region<T>(s, c);
        partial[by * hidden + tx] = product[0][tx];
    }
}

// LU decomposition without pivoting (Doolittle, in place), one block over an n x n matrix.
// Branches: 0 pivot step loop (int), 1 row below the pivot (int), 2 element loop (ext: the
// strided mapping of elements to threads), 3 element in the trailing submatrix (int).
template <bool T>
__device__ void lu(float *a, int n, unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = threadIdx.x;
    const SlotState outer = s;
    for (int k = 0; slot_branch<T>(&s, c, 0, INT, k < n); ++k) {
        const SlotState step = s;
        if (slot_branch<T>(&s, c, 1, INT, tid > k && tid < n)) {
            slot_region<T>(s, c);
            a[tid * n + k] /= a[k * n + k];
        }
        s = step;
        __syncthreads();
        for (int e = tid; slot_branch<T>(&s, c, 2, EXT, e < n * n); e += blockDim.x) {
            const int i = e / n, j = e % n;
            const SlotState inner = s;
            if (slot_branch<T>(&s, c, 3, INT, i > k && j > k)) {
                slot_region<T>(s, c);
                a[i * n + j] -= a[i * n + k] * a[k * n + j];
            }
            s = inner;
        }
        s = step;
        __syncthreads();
    }
    s = outer;
}

// B+-tree search: every thread looks one key up in a static tree of fanout 8 (7 keys a node),
// all leaves at one depth. Branches: 0 tid < queries (ext), 1 level loop (int), 2 key scan in
// an inner node (int), 3 leaf scan (int), 4 key found (int).
template <bool T>
__device__ void btree(const int *counts, const int *keys, const int *children, const int *values,
                      int root, int depth, const int *queries, int *found, int q,
                      unsigned long long *c)
{
    SlotState s = slot_start<T>();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    slot_region<T>(s, c);
    if (slot_branch<T>(&s, c, 0, EXT, tid < q)) {
        const int key = queries[tid];
        int node = root;
        const SlotState outer = s;
        for (int level = 0; slot_branch<T>(&s, c, 1, INT, level < depth); ++level) {
            slot_region<T>(s, c);
            int i = 0;
            const SlotState scan = s;
            while (slot_branch<T>(&s, c, 2, INT, i < counts[node] && key >= keys[node * 7 + i])) {
                slot_region<T>(s, c);
                ++i;
            }
            s = scan;
            node = children[node * 8 + i];
        }
        s = outer;
        int result = -1;
        for (int i = 0; slot_branch<T>(&s, c, 3, INT, i < counts[node]); ++i) {
            slot_region<T>(s, c);
            const SlotState inner = s;
            if (slot_branch<T>(&s, c, 4, INT, keys[node * 7 + i] == key)) {
                slot_region<T>(s, c);
                result = values[node * 7 + i];
            }
            s = inner;
        }
        s = outer;
        found[tid] = result;
    }
}

#define BOTH(NAME, PARAMS, ARGS)                                                               \
    extern "C" __global__ void NAME##_tagged PARAMS { NAME<true> ARGS; }                       \
    extern "C" __global__ void NAME##_plain PARAMS { NAME<false> ARGS; }

BOTH(dot, (const float *a, const float *b, int n, float *partial, float *out, unsigned long long *c),
     (a, b, n, partial, out, c))
BOTH(bfs_expand, (const int *o, const int *e, bool *f, bool *u, const bool *v, int *cost, int n, unsigned long long *c),
     (o, e, f, u, v, cost, n, c))
BOTH(bfs_update, (bool *f, bool *u, bool *v, int *again, int n, unsigned long long *c),
     (f, u, v, again, n, c))
BOTH(gauss_fan1, (const float *a, float *m, int size, int t, unsigned long long *c),
     (a, m, size, t, c))
BOTH(gauss_fan2, (float *a, float *b, const float *m, int size, int t, unsigned long long *c),
     (a, b, m, size, t, c))
BOTH(backprop, (const float *input, const float *weights, float *partial, int hidden, unsigned long long *c),
     (input, weights, partial, hidden, c))
BOTH(lu, (float *a, int n, unsigned long long *c), (a, n, c))
BOTH(btree, (const int *counts, const int *keys, const int *children, const int *values, int root, int depth, const int *queries, int *found, int q, unsigned long long *c),
     (counts, keys, children, values, root, depth, queries, found, q, c))
