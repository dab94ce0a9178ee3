// Checks that cudarc 0.19 drives gpubench's simulated device: context, attributes, PTX module,
// copies, a launch, events. Run where gpgpusim.config is, with target/sim/env.sh sourced.
use cudarc::driver::{sys, CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = CudaContext::new(0)?;
    println!("name: {}", ctx.name()?);
    println!(
        "SMs: {}",
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
    );
    let module = ctx.load_module(Ptx::from_src(include_str!("../../test/chase.ptx")))?;
    let chase = module.load_function("chase")?;
    let stream = ctx.default_stream();
    let lines = 16u64;
    let stride = 128u64;
    let ring_dev = stream.alloc_zeros::<u64>((lines * stride / 8) as usize)?;
    let base = {
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(&ring_dev, &stream);
        ptr
    };
    let mut host = vec![0u64; (lines * stride / 8) as usize];
    for i in 0..lines {
        host[(i * stride / 8) as usize] = base + ((i + 1) % lines) * stride;
    }
    let mut ring = ring_dev;
    stream.memcpy_htod(&host, &mut ring)?;
    let mut out = stream.alloc_zeros::<u64>(3)?;
    let steps = lines as u32;
    let start = stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
    let mut builder = stream.launch_builder(&chase);
    builder.arg(&ring).arg(&mut out).arg(&steps);
    unsafe {
        builder.launch(LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        })
    }?;
    let stop = stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
    let result = stream.clone_dtoh(&out)?;
    println!(
        "cycles: first pass {}, second pass {}; last pointer {}",
        result[0],
        result[1],
        if result[2] == base { "right" } else { "WRONG" }
    );
    println!("event: {} ms", start.elapsed_ms(&stop)?);
    Ok(())
}
