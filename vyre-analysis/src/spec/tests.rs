//! The texel format table against wgpu's own (`wgpu-types`, the table the
//! runtime's device is told about): sizes, sample types, filterability,
//! the storage bindings WebGPU guarantees and the features formats need.

use super::*;
use wgpu_types::{Features, TextureFormat as W, TextureFormatFeatureFlags as Flags};

/// wgpu's format of the same name (`Debug` spells both by their variant).
fn wgpu_format(f: TexelFormat) -> W {
    let all = [
        W::R8Unorm,
        W::R8Snorm,
        W::R8Uint,
        W::R8Sint,
        W::R16Uint,
        W::R16Sint,
        W::R16Float,
        W::Rg8Unorm,
        W::Rg8Snorm,
        W::Rg8Uint,
        W::Rg8Sint,
        W::R32Uint,
        W::R32Sint,
        W::R32Float,
        W::Rg16Uint,
        W::Rg16Sint,
        W::Rg16Float,
        W::Rgba8Unorm,
        W::Rgba8Snorm,
        W::Rgba8Uint,
        W::Rgba8Sint,
        W::Bgra8Unorm,
        W::Rgb10a2Uint,
        W::Rgb10a2Unorm,
        W::Rg11b10Ufloat,
        W::Rg32Uint,
        W::Rg32Sint,
        W::Rg32Float,
        W::Rgba16Uint,
        W::Rgba16Sint,
        W::Rgba16Float,
        W::Rgba32Uint,
        W::Rgba32Sint,
        W::Rgba32Float,
        W::R16Unorm,
        W::R16Snorm,
        W::Rg16Unorm,
        W::Rg16Snorm,
        W::Rgba16Unorm,
        W::Rgba16Snorm,
    ];
    *all.iter()
        .find(|w| format!("{w:?}") == format!("{f:?}"))
        .unwrap_or_else(|| panic!("{f:?} is no wgpu format"))
}

/// The feature wgpu's table of WebGPU's guarantees says a storage binding
/// needs.
fn wgpu_storage_feature(w: W, flag: Flags) -> Option<Feature> {
    let own = w.required_features();
    let allows = |extra: Features| {
        w.guaranteed_format_features(own | extra)
            .flags
            .contains(flag)
    };
    if allows(Features::empty()) {
        None
    } else if allows(Features::BGRA8UNORM_STORAGE) {
        Some(Feature::Bgra8UnormStorage)
    } else {
        Some(Feature::TextureAdapterSpecificFormatFeatures)
    }
}

#[test]
fn every_format_has_a_distinct_name_and_wgpus_texel_size() {
    assert_eq!(TexelFormat::ALL.len(), 40);
    for (i, f) in TexelFormat::ALL.iter().enumerate() {
        assert_eq!(TexelFormat::by_name(f.name()), Some(*f));
        assert!(
            TexelFormat::ALL[..i].iter().all(|g| g.name() != f.name()),
            "{f:?}"
        );
        let w = wgpu_format(*f);
        assert_eq!(w.block_copy_size(None), Some(f.texel_bytes()), "{f:?}");
    }
}

#[test]
fn sample_types_and_filtering_are_wgpus() {
    for &f in TexelFormat::ALL {
        let w = wgpu_format(f);
        let plain = w.sample_type(None, None).map(|t| match t {
            wgpu_types::TextureSampleType::Float { filterable } => SampleType::Float { filterable },
            wgpu_types::TextureSampleType::Uint => SampleType::Uint,
            wgpu_types::TextureSampleType::Sint => SampleType::Sint,
            wgpu_types::TextureSampleType::Depth => panic!("{f:?} is a depth format"),
        });
        assert_eq!(plain, Some(f.sample_type()), "{f:?}");
        assert_eq!(
            f.filterable(),
            plain == Some(SampleType::Float { filterable: true })
        );
        // `float32_filterable` makes exactly the `is_float32` formats
        // filterable.
        let with_f32 = w.sample_type(None, Some(Features::FLOAT32_FILTERABLE));
        if let Some(wgpu_types::TextureSampleType::Float { filterable }) = with_f32 {
            assert_eq!(filterable, f.filterable() || f.is_float32(), "{f:?}");
        } else {
            assert!(!f.is_float32(), "{f:?}");
        }
    }
}

#[test]
fn storage_and_format_features_are_wgpus() {
    for &f in TexelFormat::ALL {
        let w = wgpu_format(f);
        for (access, flag) in [
            (TextureAccess::Read, Flags::STORAGE_READ_ONLY),
            (TextureAccess::Write, Flags::STORAGE_WRITE_ONLY),
            (TextureAccess::ReadWrite, Flags::STORAGE_READ_WRITE),
        ] {
            assert_eq!(
                f.storage_feature(access),
                wgpu_storage_feature(w, flag),
                "{f:?} {access:?}"
            );
        }
        let norm16 = w.required_features() == Features::TEXTURE_FORMAT_16BIT_NORM;
        assert!(norm16 || w.required_features().is_empty(), "{f:?}");
        assert_eq!(
            f.format_feature(),
            norm16.then_some(Feature::TextureFormat16BitNorm),
            "{f:?}"
        );
    }
}

#[test]
fn host_texel_sizes_match_the_table() {
    let size = |t: &str| -> u32 {
        let (elem, count) = match t.strip_prefix('[') {
            Some(rest) => {
                let (e, n) = rest
                    .trim_end_matches(']')
                    .split_once("; ")
                    .unwrap_or(("", ""));
                (e, n.parse().unwrap_or(0))
            }
            None => (t, 1),
        };
        let bytes = match elem {
            "u8" | "i8" => 1,
            "u16" | "i16" | "half::f16" => 2,
            _ => 4,
        };
        bytes * count
    };
    for f in TexelFormat::ALL {
        assert_eq!(size(f.host_texel()), f.texel_bytes(), "{f:?}");
    }
}

#[test]
fn feature_names_are_distinct_and_found() {
    for (i, f) in Feature::ALL.iter().enumerate() {
        assert_eq!(Feature::by_name(f.name()), Some(*f));
        assert!(Feature::ALL[..i].iter().all(|g| g.name() != f.name()));
        // WebGPU spells it `subgroups`, wgpu `SUBGROUP`; every other name
        // is wgpu's in lower case.
        if *f == Feature::Subgroups {
            assert_eq!((f.name(), f.wgpu_name()), ("subgroups", "SUBGROUP"));
        } else {
            assert_eq!(f.wgpu_name(), f.name().to_uppercase());
        }
    }
}

#[test]
fn dimensions_spell_their_keywords_and_sides() {
    for d in TextureDimension::ALL {
        assert_eq!(TextureDimension::by_keyword(d.keyword()), Some(d));
        assert_eq!(d.extent_words(), format!("[{}]", d.sides().join(", ")));
        assert!(d.storage_keyword().starts_with("texture_storage_"));
        assert_eq!(
            d.storage_keyword().replace("texture_storage", "texture"),
            d.keyword()
        );
    }
}
