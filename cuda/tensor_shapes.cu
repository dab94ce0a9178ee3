// gpubench-arch: compute_90a
// The smaller wgmma shapes, m64n128 and m64n64, of every input type (issue #17: the shapes as
// parameters; `gpubench tensor --wgmma-n`). The kernels are cuda/tensor.cu's wgmma kernels
// (cuda/tensor.cuh) at width N, named wgmma_TYPE_nN_lat / _thr; a separate module, so the
// driver compiles them only when a run asks for them.

#include "tensor.cuh"

WGMMA(f16_n128, 128, float, F_OPERAND, "m64n128k16.f32.f16.f16", ", 1, 1, 0, 0")
WGMMA(bf16_n128, 128, float, F_OPERAND, "m64n128k16.f32.bf16.bf16", ", 1, 1, 0, 0")
WGMMA(tf32_n128, 128, float, F_OPERAND, "m64n128k8.f32.tf32.tf32", ", 1, 1")
WGMMA(e4m3_n128, 128, float, F_OPERAND, "m64n128k32.f32.e4m3.e4m3", ", 1, 1")
WGMMA(e5m2_n128, 128, float, F_OPERAND, "m64n128k32.f32.e5m2.e5m2", ", 1, 1")
WGMMA(s8_n128, 128, int, R_OPERAND, "m64n128k32.s32.s8.s8", "")

WGMMA(f16_n64, 64, float, F_OPERAND, "m64n64k16.f32.f16.f16", ", 1, 1, 0, 0")
WGMMA(bf16_n64, 64, float, F_OPERAND, "m64n64k16.f32.bf16.bf16", ", 1, 1, 0, 0")
WGMMA(tf32_n64, 64, float, F_OPERAND, "m64n64k8.f32.tf32.tf32", ", 1, 1")
WGMMA(e4m3_n64, 64, float, F_OPERAND, "m64n64k32.f32.e4m3.e4m3", ", 1, 1")
WGMMA(e5m2_n64, 64, float, F_OPERAND, "m64n64k32.f32.e5m2.e5m2", ", 1, 1")
WGMMA(s8_n64, 64, int, R_OPERAND, "m64n64k32.s32.s8.s8", "")

WGMMA_KERNELS(f16_n128, 128, float)
WGMMA_KERNELS(bf16_n128, 128, float)
WGMMA_KERNELS(tf32_n128, 128, float)
WGMMA_KERNELS(e4m3_n128, 128, float)
WGMMA_KERNELS(e5m2_n128, 128, float)
WGMMA_KERNELS(s8_n128, 128, int)
WGMMA_KERNELS(f16_n64, 64, float)
WGMMA_KERNELS(bf16_n64, 64, float)
WGMMA_KERNELS(tf32_n64, 64, float)
WGMMA_KERNELS(e4m3_n64, 64, float)
WGMMA_KERNELS(e5m2_n64, 64, float)
WGMMA_KERNELS(s8_n64, 64, int)
