//! The peak rates the architecture's whitepaper states, the reference a measured rate is set
//! against (its share of peak). Both the CUDA-core (`flops`) and tensor-core (`tensor`) suites
//! read them, so they live in the core. Only CC 9.0 (Hopper) is known here; elsewhere no share
//! of peak is stated.

/// FLOP per clock per SM at full rate, dense, as the architecture's whitepaper states it for
/// each input type: the reference the measured rate is set against. Only CC 9.0 (Hopper) is
/// known here; elsewhere the share of peak is not stated.
pub fn dense_peak_flop_per_clock_per_sm(compute_capability: &str, input: &str) -> Option<f64> {
    if compute_capability != "9.0" {
        return None;
    }
    // NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): dense FMA per clock per SM
    // of the fourth-generation tensor cores, twice the A100's 1024 for FP16 (989.4 TFLOPS =
    // 132 SMs x 1830 MHz x 2048 x 2): FP16/BF16 2048, TF32 1024, FP8 and INT8 4096.
    let fma = match input {
        "f16" | "bf16" => 2048.0,
        "tf32" => 1024.0,
        "e4m3" | "e5m2" | "s8" => 4096.0,
        _ => return None,
    };
    Some(2.0 * fma)
}

/// FLOP per clock per SM of the CUDA cores' FMA instructions at full rate, as the H100
/// whitepaper states them (NVIDIA H100 Tensor Core GPU Architecture, 2022: 128 FP32 and 64
/// FP64 lanes per SM, FP16 and BF16 at twice FP32's rate, 66.9 / 33.5 / 133.8 TFLOPS for
/// 132 SMs at 1.98 GHz). Only CC 9.0 is known here.
pub fn cuda_core_peak_flop_per_clock_per_sm(compute_capability: &str, sass: &str) -> Option<f64> {
    if compute_capability != "9.0" {
        return None;
    }
    match sass {
        "FFMA" => Some(256.0),
        "DFMA" => Some(128.0),
        "HFMA2" | "HFMA2.BF16_V2" => Some(512.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_stated_for_hopper_only() {
        assert_eq!(dense_peak_flop_per_clock_per_sm("9.0", "f16"), Some(4096.0));
        assert_eq!(dense_peak_flop_per_clock_per_sm("9.0", "s8"), Some(8192.0));
        assert_eq!(dense_peak_flop_per_clock_per_sm("8.0", "f16"), None);
        assert_eq!(dense_peak_flop_per_clock_per_sm("9.0", "f64"), None);
    }

    #[test]
    fn the_cuda_core_peaks_are_the_whitepapers() {
        assert_eq!(
            cuda_core_peak_flop_per_clock_per_sm("9.0", "FFMA"),
            Some(256.0)
        );
        assert_eq!(
            cuda_core_peak_flop_per_clock_per_sm("9.0", "DFMA"),
            Some(128.0)
        );
        assert_eq!(cuda_core_peak_flop_per_clock_per_sm("8.6", "FFMA"), None);
    }
}
