//! Pure statistics and fits: functions over plain numbers, no GPU and no I/O.

pub mod atomics;
pub mod bandwidth;
pub mod bank_conflicts;
pub mod branch;
pub mod cache_fit;
pub mod cache_inference;
pub mod cache_model;
pub mod clock;
pub mod conflict;
pub mod divergence;
pub mod divergence_model;
pub mod divergence_split;
pub mod dsm;
pub mod granularity;
pub mod linear_fit;
pub mod per_load;
pub mod pipeline;
pub mod registers;
pub mod sass;
pub mod slots;
pub mod stack_emulator;
pub mod stats;
pub mod sync;
pub mod tensor;
pub mod tlb;
pub mod tma;
