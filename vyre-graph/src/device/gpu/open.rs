//! Opening devices of a given adapter: what [`Gpu::new_async`] does once it
//! has picked one, and what a device set does for each adapter it matched
//! and again for a lost device (`retry`).

use super::{Gpu, GpuOptions};
use crate::spec::error::{BackendError, Result};

impl Gpu {
    /// Open a device of `adapter` with `options` (what [`Gpu::new_async`]
    /// does once it has picked an adapter; a device set opens each adapter
    /// it matched with it, several times for several devices).
    pub(crate) async fn open_adapter(adapter: wgpu::Adapter, options: &GpuOptions) -> Result<Self> {
        let limits = if options.adapter_limits {
            adapter.limits()
        } else {
            wgpu::Limits::default().using_resolution(adapter.limits())
        };
        let mut features = options
            .features
            .unwrap_or_else(|| adapter.features() & crate::spec::all_wgpu_features());
        if options.timestamps {
            features |= adapter.features()
                & (wgpu::Features::TIMESTAMP_QUERY
                    | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                    | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);
        }
        Self::request(adapter, features, limits, options.transfer).await
    }

    /// A fresh device of this `Gpu`'s adapter, with the features, limits
    /// and transfer options of this one (a device set's `retry` of a lost
    /// device): a new `Gpu`, with its own id.
    ///
    /// # Errors
    /// [`BackendError::DeviceRequestFailed`] when the adapter refuses, or
    /// when this `Gpu` was adopted without its adapter.
    pub(crate) async fn reopen(&self) -> Result<Self> {
        let Some(adapter) = self.inner.adapter.clone() else {
            return Err(BackendError::DeviceRequestFailed {
                adapter: self.inner.summary.name.clone(),
                reason: "the Gpu was adopted with `Gpu::from_wgpu` without its adapter, so no \
                         new device can be requested; pass the adapter to `Gpu::from_wgpu`"
                    .into(),
            });
        };
        let features = self.inner.device.features();
        let limits = self.inner.limits.clone();
        Self::request(adapter, features, limits, Some(self.inner.transfer)).await
    }
}
