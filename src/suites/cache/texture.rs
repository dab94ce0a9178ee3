//! A CUDA texture object over linear device memory (cudarc has no safe wrapper): created with
//! cuTexObjectCreate, destroyed when dropped, and owning the buffer it reads.

use cudarc::driver::sys::{
    self, CUaddress_mode, CUarray_format, CUfilter_mode, CUresourcetype, cudaError_enum,
};
use cudarc::driver::{CudaSlice, DevicePtr};

use crate::gpu::{Gpu, driver_error};
use crate::error::GpuError;

pub struct LinearTexture {
    handle: sys::CUtexObject,
    _buffer: CudaSlice<u32>,
}

impl LinearTexture {
    /// Copies `words` to the device and makes a texture over them ([`LinearTexture::over`]).
    pub fn new(gpu: &Gpu, words: &[u32]) -> Result<LinearTexture, GpuError> {
        let buffer = gpu
            .stream()
            .clone_htod(words)
            .map_err(driver_error("copying the texture's data"))?;
        LinearTexture::over(buffer)
    }

    /// A point-sampled, integer-read 1-D texture of one 32-bit channel over `buffer`.
    pub fn over(buffer: CudaSlice<u32>) -> Result<LinearTexture, GpuError> {
        let (pointer, _guard) = buffer.device_ptr(buffer.stream());
        // SAFETY: both descriptors are plain C structs for which all-zero bytes are valid
        // (the driver reads zero as "default" for every field set below).
        let mut resource: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        resource.resType = CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
        resource.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
            devPtr: pointer,
            format: CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32,
            numChannels: 1,
            sizeInBytes: buffer.len() * std::mem::size_of::<u32>(),
        };
        // SAFETY: as above.
        let mut texture: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
        texture.addressMode = [CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
        texture.filterMode = CUfilter_mode::CU_TR_FILTER_MODE_POINT;
        texture.flags = sys::CU_TRSF_READ_AS_INTEGER;
        let mut handle: sys::CUtexObject = 0;
        // SAFETY: the descriptors are initialised above and outlive the call; the buffer they
        // point at is owned by the returned value, so it outlives the texture object.
        let status =
            unsafe { sys::cuTexObjectCreate(&mut handle, &resource, &texture, std::ptr::null()) };
        if status != cudaError_enum::CUDA_SUCCESS {
            return Err(crate::gpu::status_error(status, "creating a texture object"));
        }
        drop(_guard);
        Ok(LinearTexture {
            handle,
            _buffer: buffer,
        })
    }

    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// The words the texture reads, for loads that read them another way.
    pub fn buffer(&self) -> &CudaSlice<u32> {
        &self._buffer
    }
}

impl Drop for LinearTexture {
    fn drop(&mut self) {
        // SAFETY: the handle was created by `new` and is destroyed once, here.
        unsafe {
            sys::cuTexObjectDestroy(self.handle);
        }
    }
}
