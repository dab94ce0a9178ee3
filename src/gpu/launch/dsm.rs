//! Launchers of cuda/dsm.cu: thread-block clusters, launched through `cuLaunchKernelEx` with the
//! cluster dimension as a launch attribute (cudarc's safe launcher has no cluster form), and
//! the driver's count of clusters that fit at once.

use std::ffi::c_void;

use cudarc::driver::sys::{
    self, CUfunction_attribute, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue,
    CUlaunchConfig,
};

use super::*;
use cudarc::driver::{CudaStream, DevicePtr, SyncOnDrop};

/// A cluster launch: `clusters` clusters of `cluster` blocks of `threads`, each block with
/// `shared_bytes` of dynamic shared memory.
#[derive(Debug, Clone, Copy)]
pub struct ClusterShape {
    pub cluster: u32,
    pub clusters: u32,
    pub threads: u32,
    pub shared_bytes: u32,
}

/// Lets `entry` of `module` take `shared_bytes` of dynamic shared memory and clusters above
/// the portable eight blocks.
fn prepare(
    gpu: &mut Gpu,
    module: &str,
    entry: &str,
    shared_bytes: u32,
) -> Result<CudaFunction, GpuError> {
    let function = gpu.function(module, entry)?;
    super::allow_dynamic_shared(
        &function,
        shared_bytes,
        &format!("giving {entry} {shared_bytes} bytes of shared memory"),
    )?;
    function
        .set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1,
        )
        .map_err(driver_error(&format!(
            "allowing {entry} non-portable cluster sizes"
        )))?;
    Ok(function)
}

fn cluster_attribute(cluster: u32) -> CUlaunchAttribute {
    // SAFETY: the value is a plain C union of integers; all zeros is valid for every member.
    let mut value: CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.clusterDim.x = cluster;
    value.clusterDim.y = 1;
    value.clusterDim.z = 1;
    CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value,
    }
}

fn config(gpu: &Gpu, shape: ClusterShape, attribute: &mut CUlaunchAttribute) -> CUlaunchConfig {
    CUlaunchConfig {
        gridDimX: shape.cluster * shape.clusters,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: shape.threads,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shape.shared_bytes,
        hStream: gpu.stream().cu_stream(),
        attrs: attribute,
        numAttrs: 1,
    }
}

/// How many clusters of `shape` (its `clusters` ignored) of `entry` in `module` the driver
/// says fit on the GPU at once; 0 where a cluster of that size cannot be placed at all.
pub fn max_active_clusters_of(
    gpu: &mut Gpu,
    module: &str,
    entry: &str,
    shape: ClusterShape,
) -> Result<u32, GpuError> {
    let function = prepare(gpu, module, entry, shape.shared_bytes)?;
    let mut attribute = cluster_attribute(shape.cluster);
    let one = ClusterShape {
        clusters: 1,
        ..shape
    };
    let config = config(gpu, one, &mut attribute);
    let mut clusters: std::ffi::c_int = 0;
    gpu.stream()
        .context()
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    // SAFETY: config and its one attribute live across the call; the function is loaded.
    let status = unsafe {
        sys::cuOccupancyMaxActiveClusters(&mut clusters, function.cu_function(), &config)
    };
    match status {
        sys::CUresult::CUDA_SUCCESS => Ok(u32::try_from(clusters).unwrap_or(0)),
        // A size the GPU cannot place is an answer, not a failure.
        sys::CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE => Ok(0),
        other => Err(GpuError::driver(
            format!("asking how many clusters of {} fit", shape.cluster),
            format!("{other:?}"),
        )),
    }
}

/// A cluster launch's arguments in the kernel's order: device buffers (passed as their device
/// pointers, each buffer's stream synchronisation held until the launch is made) and `int`s.
pub struct ClusterArgs<'a> {
    stream: &'a CudaStream,
    values: Vec<Value>,
    _syncs: Vec<SyncOnDrop<'a>>,
}

enum Value {
    Pointer(sys::CUdeviceptr),
    Int(i32),
}

impl<'a> ClusterArgs<'a> {
    pub fn new(stream: &'a CudaStream) -> ClusterArgs<'a> {
        ClusterArgs {
            stream,
            values: Vec::new(),
            _syncs: Vec::new(),
        }
    }

    /// The next argument: `buffer`'s device pointer.
    pub fn buffer<T>(mut self, buffer: &'a CudaSlice<T>) -> ClusterArgs<'a> {
        let (pointer, sync) = buffer.device_ptr(self.stream);
        self.values.push(Value::Pointer(pointer));
        self._syncs.push(sync);
        self
    }

    /// The next argument: `value` as the kernel's `int` (`what` names it where it does not fit).
    pub fn int(mut self, value: u32, what: &str) -> Result<ClusterArgs<'a>, GpuError> {
        self.values.push(Value::Int(as_i32(value, what)?));
        Ok(self)
    }
}

/// Launches `entry` of `module` as `shape` with `args` and waits up to `deadline`.
///
/// # Safety
///
/// `args` must match `entry`'s signature in order and type, and every buffer must hold what
/// the kernel indexes for `shape`.
pub unsafe fn launch_cluster(
    gpu: &mut Gpu,
    module: &str,
    entry: &str,
    shape: ClusterShape,
    mut args: ClusterArgs<'_>,
    deadline: Duration,
) -> Result<(), GpuError> {
    let function = prepare(gpu, module, entry, shape.shared_bytes)?;
    let mut attribute = cluster_attribute(shape.cluster);
    let config = config(gpu, shape, &mut attribute);
    gpu.stream()
        .context()
        .bind_to_thread()
        .map_err(driver_error("binding the context"))?;
    // The driver reads each argument through a pointer to it; `args` outlives the call.
    let mut params: Vec<*mut c_void> = args
        .values
        .iter_mut()
        .map(|value| match value {
            Value::Pointer(pointer) => (pointer as *mut sys::CUdeviceptr).cast(),
            Value::Int(int) => (int as *mut i32).cast(),
        })
        .collect();
    // SAFETY: the caller's contract above; config and its attribute live across the call.
    let status = unsafe {
        sys::cuLaunchKernelEx(
            &config,
            function.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::driver(
            format!(
                "launching {entry} in clusters of {} ({} clusters)",
                shape.cluster, shape.clusters
            ),
            format!("{status:?}"),
        ));
    }
    // The driver copied the arguments at the launch; the buffers' syncs are recorded now.
    drop(args);
    gpu.wait(entry, deadline)
}

/// One cluster of `shape.cluster` blocks: block 0 chases every block's ring and its own local
/// one. Returns (cycles of `steps` loads per target rank then the local chase, %smid of every
/// rank).
///
/// Kernel signature: `dsm_latency(long long *out[n + 2], unsigned *smid[n], int steps,
/// int stride)`.
pub fn dsm_latency(
    gpu: &mut Gpu,
    shape: ClusterShape,
    steps: u32,
    stride: u32,
) -> Result<(Vec<i64>, Vec<u32>), GpuError> {
    let n = shape.cluster as usize;
    let out = zeros::<i64>(gpu, n + 2, "the chase cycles")?;
    let smid = zeros::<u32>(gpu, n, "the SM numbers")?;
    let stream = gpu.stream().clone();
    let args = ClusterArgs::new(&stream)
        .buffer(&out)
        .buffer(&smid)
        .int(steps, "steps")?
        .int(stride, "the ring stride")?;
    let one = ClusterShape {
        clusters: 1,
        ..shape
    };
    let deadline = Duration::from_secs(10);
    // SAFETY: the arguments match dsm_latency's signature; out holds n + 2 values and smid n;
    // the rings live in the block's dynamic shared memory (8 KiB of shared_bytes).
    unsafe { launch_cluster(gpu, "dsm", "dsm_latency", one, args, deadline) }?;
    Ok((
        read(gpu, &out, "the chase cycles")?,
        read(gpu, &smid, "the SM numbers")?,
    ))
}

/// Every block of `shape` runs `entry` over 64 KiB of the shared memory `pattern` names
/// `iterations` times (`dsm_bandwidth` reads it, `dsm_store` stores into it); returns each
/// block's clock64 before and after.
///
/// Kernel signature (both): `(long long *stamps[2 * blocks], unsigned *sink[blocks * threads],
/// int pattern, int iterations)`; `dsm_store` writes one sink word per block.
pub fn dsm_passes(
    gpu: &mut Gpu,
    entry: &str,
    shape: ClusterShape,
    pattern: u32,
    iterations: u32,
) -> Result<Vec<i64>, GpuError> {
    let blocks = (shape.cluster * shape.clusters) as usize;
    let stamps = zeros::<i64>(gpu, 2 * blocks, "the block stamps")?;
    let sink = zeros::<u32>(gpu, blocks * shape.threads as usize, "the sink")?;
    let stream = gpu.stream().clone();
    let args = ClusterArgs::new(&stream)
        .buffer(&stamps)
        .buffer(&sink)
        .int(pattern, "the pattern")?
        .int(iterations, "iterations")?;
    // SAFETY: the arguments match dsm_bandwidth's and dsm_store's signature; stamps holds two
    // per block and sink one per thread; each block's 64 KiB lies in its dynamic shared memory.
    unsafe { launch_cluster(gpu, "dsm", entry, shape, args, Duration::from_secs(30)) }?;
    read(gpu, &stamps, "the block stamps")
}
