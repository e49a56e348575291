//! The wgpu values of the plain spec types `vyre-analysis` defines
//! ([`ToWgpu`], [`ViewDimension`], [`FormatFlag`], [`all_wgpu_features`]).

use vyre_analysis::spec::{Feature, TexelFormat, TextureAccess, TextureDimension};

/// A spec value as wgpu's.
pub trait ToWgpu {
    /// wgpu's type.
    type Wgpu;
    /// The wgpu value.
    fn wgpu(self) -> Self::Wgpu;
}

impl ToWgpu for TexelFormat {
    type Wgpu = wgpu::TextureFormat;
    fn wgpu(self) -> wgpu::TextureFormat {
        match self {
            TexelFormat::Rgba8Unorm => wgpu::TextureFormat::Rgba8Unorm,
            TexelFormat::Rgba8Snorm => wgpu::TextureFormat::Rgba8Snorm,
            TexelFormat::Rgba8Uint => wgpu::TextureFormat::Rgba8Uint,
            TexelFormat::Rgba8Sint => wgpu::TextureFormat::Rgba8Sint,
            TexelFormat::Rgba16Uint => wgpu::TextureFormat::Rgba16Uint,
            TexelFormat::Rgba16Sint => wgpu::TextureFormat::Rgba16Sint,
            TexelFormat::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
            TexelFormat::R32Uint => wgpu::TextureFormat::R32Uint,
            TexelFormat::R32Sint => wgpu::TextureFormat::R32Sint,
            TexelFormat::R32Float => wgpu::TextureFormat::R32Float,
            TexelFormat::Rg32Uint => wgpu::TextureFormat::Rg32Uint,
            TexelFormat::Rg32Sint => wgpu::TextureFormat::Rg32Sint,
            TexelFormat::Rg32Float => wgpu::TextureFormat::Rg32Float,
            TexelFormat::Rgba32Uint => wgpu::TextureFormat::Rgba32Uint,
            TexelFormat::Rgba32Sint => wgpu::TextureFormat::Rgba32Sint,
            TexelFormat::Rgba32Float => wgpu::TextureFormat::Rgba32Float,
            TexelFormat::Bgra8Unorm => wgpu::TextureFormat::Bgra8Unorm,
            TexelFormat::R8Unorm => wgpu::TextureFormat::R8Unorm,
            TexelFormat::R8Snorm => wgpu::TextureFormat::R8Snorm,
            TexelFormat::R8Uint => wgpu::TextureFormat::R8Uint,
            TexelFormat::R8Sint => wgpu::TextureFormat::R8Sint,
            TexelFormat::Rg8Unorm => wgpu::TextureFormat::Rg8Unorm,
            TexelFormat::Rg8Snorm => wgpu::TextureFormat::Rg8Snorm,
            TexelFormat::Rg8Uint => wgpu::TextureFormat::Rg8Uint,
            TexelFormat::Rg8Sint => wgpu::TextureFormat::Rg8Sint,
            TexelFormat::R16Uint => wgpu::TextureFormat::R16Uint,
            TexelFormat::R16Sint => wgpu::TextureFormat::R16Sint,
            TexelFormat::R16Float => wgpu::TextureFormat::R16Float,
            TexelFormat::Rg16Uint => wgpu::TextureFormat::Rg16Uint,
            TexelFormat::Rg16Sint => wgpu::TextureFormat::Rg16Sint,
            TexelFormat::Rg16Float => wgpu::TextureFormat::Rg16Float,
            TexelFormat::Rgb10a2Uint => wgpu::TextureFormat::Rgb10a2Uint,
            TexelFormat::Rgb10a2Unorm => wgpu::TextureFormat::Rgb10a2Unorm,
            TexelFormat::Rg11b10Ufloat => wgpu::TextureFormat::Rg11b10Ufloat,
            TexelFormat::R16Unorm => wgpu::TextureFormat::R16Unorm,
            TexelFormat::R16Snorm => wgpu::TextureFormat::R16Snorm,
            TexelFormat::Rg16Unorm => wgpu::TextureFormat::Rg16Unorm,
            TexelFormat::Rg16Snorm => wgpu::TextureFormat::Rg16Snorm,
            TexelFormat::Rgba16Unorm => wgpu::TextureFormat::Rgba16Unorm,
            TexelFormat::Rgba16Snorm => wgpu::TextureFormat::Rgba16Snorm,
            _ => wgpu::TextureFormat::R32Uint,
        }
    }
}

impl ToWgpu for TextureAccess {
    type Wgpu = wgpu::StorageTextureAccess;
    fn wgpu(self) -> wgpu::StorageTextureAccess {
        match self {
            TextureAccess::Read => wgpu::StorageTextureAccess::ReadOnly,
            TextureAccess::Write => wgpu::StorageTextureAccess::WriteOnly,
            TextureAccess::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
        }
    }
}

impl ToWgpu for TextureDimension {
    type Wgpu = wgpu::TextureDimension;
    fn wgpu(self) -> wgpu::TextureDimension {
        match self {
            TextureDimension::D1 => wgpu::TextureDimension::D1,
            TextureDimension::D2 | TextureDimension::D2Array => wgpu::TextureDimension::D2,
            TextureDimension::D3 => wgpu::TextureDimension::D3,
        }
    }
}

impl ToWgpu for Feature {
    type Wgpu = wgpu::Features;
    fn wgpu(self) -> wgpu::Features {
        wgpu::Features::from_name(self.wgpu_name()).unwrap_or(wgpu::Features::empty())
    }
}

/// The view dimension kernels bind a texture of a dimension with.
pub trait ViewDimension {
    /// The wgpu view dimension.
    fn view(self) -> wgpu::TextureViewDimension;
}

impl ViewDimension for TextureDimension {
    fn view(self) -> wgpu::TextureViewDimension {
        match self {
            TextureDimension::D1 => wgpu::TextureViewDimension::D1,
            TextureDimension::D2 => wgpu::TextureViewDimension::D2,
            TextureDimension::D2Array => wgpu::TextureViewDimension::D2Array,
            TextureDimension::D3 => wgpu::TextureViewDimension::D3,
        }
    }
}

/// The format feature flag a device needs to bind a format with an access.
pub trait FormatFlag {
    /// The flag.
    fn format_flag(self) -> wgpu::TextureFormatFeatureFlags;
}

impl FormatFlag for TextureAccess {
    fn format_flag(self) -> wgpu::TextureFormatFeatureFlags {
        match self {
            TextureAccess::Read => wgpu::TextureFormatFeatureFlags::STORAGE_READ_ONLY,
            TextureAccess::Write => wgpu::TextureFormatFeatureFlags::STORAGE_WRITE_ONLY,
            TextureAccess::ReadWrite => wgpu::TextureFormatFeatureFlags::STORAGE_READ_WRITE,
        }
    }
}

/// Every vyre feature, as wgpu features.
#[must_use]
pub fn all_wgpu_features() -> wgpu::Features {
    Feature::ALL
        .iter()
        .fold(wgpu::Features::empty(), |acc, f| acc | f.wgpu())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared texel table (`vyre-analysis`) and the wgpu mapping here
    /// are written in two crates: every format maps to a distinct wgpu
    /// format of the same texel size (the `_` arm above is never taken),
    /// and every feature to a named wgpu feature.
    #[test]
    fn every_shared_format_and_feature_has_its_own_wgpu_value() {
        let mut seen = std::collections::HashSet::new();
        for &format in TexelFormat::ALL {
            let wgpu = format.wgpu();
            assert!(
                seen.insert(wgpu),
                "{} maps to {wgpu:?} twice",
                format.name()
            );
            assert_eq!(
                wgpu.block_copy_size(None),
                Some(format.texel_bytes()),
                "{}: texel size",
                format.name()
            );
        }
        for feature in Feature::ALL {
            assert!(
                !feature.wgpu().is_empty(),
                "{} has no wgpu feature",
                feature.name()
            );
        }
    }
}
