//! Texel formats and texture dimensions of graph textures: one table of
//! every format `graph!` accepts, with each format's texel size, what it
//! samples as, whether it filters, which storage bindings every WebGPU
//! device allows and which device [`Feature`] it needs to exist
//! ([`TexelFormat::format_feature`]) or to be bound as a storage texture
//! with an access ([`TexelFormat::storage_feature`]).
//!
//! Those facts are wgpu's (`wgpu::TextureFormat`'s block sizes, sample
//! types and `guaranteed_format_features`); this crate's tests check every
//! row against `wgpu-types`, so the table cannot drift from what the
//! device is told.

use super::feature::Feature;

/// What a format's texels sample as, and whether a `linear` sampler
/// filters them.
#[derive(Clone, Copy)]
enum Sampled {
    /// Floats every device filters (normalised and 16-bit float formats).
    Filtered,
    /// Floats filtered only with [`Feature::Float32Filterable`].
    Float32,
    /// `u32`, never filtered.
    Uint,
    /// `i32`, never filtered.
    Sint,
}

/// Which storage bindings every WebGPU device allows of a format (given
/// the format's own [`TexelFormat::format_feature`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// `read` and `write`, and `read_write` when set.
    Core { read_write: bool },
    /// `write` with this feature (`bgra8unorm`); nothing else.
    WriteWith(Feature),
    /// None: only what an adapter allows with its specific format features.
    Adapter,
}

const RW: Storage = Storage::Core { read_write: true };
const CORE: Storage = Storage::Core { read_write: false };
const BGRA: Storage = Storage::WriteWith(Feature::Bgra8UnormStorage);
const ADAPTER: Storage = Storage::Adapter;
const NORM16: Option<Feature> = Some(Feature::TextureFormat16BitNorm);

/// Declares [`TexelFormat`] with its `graph!` names, host texel types, sizes,
/// sample types, storage guarantees and features from one list.
macro_rules! texel_formats {
    ($($variant:ident $name:literal $texel:literal $bytes:literal $sampled:ident $storage:ident $needs:expr;)*) => {
        /// A graph texture's texel format: every uncompressed, non-depth
        /// format that wgpu 30 can store from a compute shader on some
        /// device.
        ///
        /// Host texels are each format's natural Rust type, tightly packed
        /// (`bgra8unorm` holds blue, green, red, alpha in that order; the
        /// packed formats are one `u32` each, as the GPU lays them out).
        /// Which of them need a device feature, and for what, is in the
        /// README's format table;
        /// [`TexelFormat::storage_feature`] says it for storage bindings.
        ///
        /// ```
        /// use vyre_analysis::spec::TexelFormat;
        /// assert_eq!(TexelFormat::Rgba8Unorm.texel_bytes(), 4);
        /// assert_eq!(TexelFormat::Rg32Float.texel_bytes(), 8);
        /// assert_eq!(TexelFormat::Rgba32Float.name(), "rgba32float");
        /// assert_eq!(TexelFormat::Rgba16Sint.host_texel(), "[i16; 4]");
        /// assert!(TexelFormat::Rgba16Float.filterable());
        /// assert!(!TexelFormat::R32Float.filterable());
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum TexelFormat {
            $(
                #[doc = concat!("`", $name, "`: host texel `", $texel, "`.")]
                $variant,
            )*
        }

        impl TexelFormat {
            /// Every format a graph texture may have.
            pub const ALL: &'static [TexelFormat] = &[$(TexelFormat::$variant),*];

            /// Its WGSL (and `graph!`) spelling.
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $(TexelFormat::$variant => $name,)*
                }
            }

            /// The Rust type of one host texel (`[u8; 4]`, `f32`, ...).
            #[must_use]
            pub fn host_texel(self) -> &'static str {
                match self {
                    $(TexelFormat::$variant => $texel,)*
                }
            }

            /// Bytes per texel.
            #[must_use]
            pub fn texel_bytes(self) -> u32 {
                match self {
                    $(TexelFormat::$variant => $bytes,)*
                }
            }

            fn sampled(self) -> Sampled {
                match self {
                    $(TexelFormat::$variant => Sampled::$sampled,)*
                }
            }

            fn storage(self) -> Storage {
                match self {
                    $(TexelFormat::$variant => $storage,)*
                }
            }

            /// The feature the format needs to exist at all (the 16-bit
            /// normalised formats), if any.
            #[must_use]
            pub fn format_feature(self) -> Option<Feature> {
                match self {
                    $(TexelFormat::$variant => $needs,)*
                }
            }
        }
    };
}

texel_formats! {
    // WebGPU's core storage formats: every device stores them.
    Rgba8Unorm "rgba8unorm" "[u8; 4]" 4 Filtered CORE None;
    Rgba8Snorm "rgba8snorm" "[i8; 4]" 4 Filtered CORE None;
    Rgba8Uint "rgba8uint" "[u8; 4]" 4 Uint CORE None;
    Rgba8Sint "rgba8sint" "[i8; 4]" 4 Sint CORE None;
    Rgba16Uint "rgba16uint" "[u16; 4]" 8 Uint CORE None;
    Rgba16Sint "rgba16sint" "[i16; 4]" 8 Sint CORE None;
    Rgba16Float "rgba16float" "[half::f16; 4]" 8 Filtered CORE None;
    R32Uint "r32uint" "u32" 4 Uint RW None;
    R32Sint "r32sint" "i32" 4 Sint RW None;
    R32Float "r32float" "f32" 4 Float32 RW None;
    Rg32Uint "rg32uint" "[u32; 2]" 8 Uint CORE None;
    Rg32Sint "rg32sint" "[i32; 2]" 8 Sint CORE None;
    Rg32Float "rg32float" "[f32; 2]" 8 Float32 CORE None;
    Rgba32Uint "rgba32uint" "[u32; 4]" 16 Uint CORE None;
    Rgba32Sint "rgba32sint" "[i32; 4]" 16 Sint CORE None;
    Rgba32Float "rgba32float" "[f32; 4]" 16 Float32 CORE None;
    // Stored with `bgra8unorm_storage` (write only).
    Bgra8Unorm "bgra8unorm" "[u8; 4]" 4 Filtered BGRA None;
    // Stored with `texture_adapter_specific_format_features` where the
    // adapter allows it; sampled on every device.
    R8Unorm "r8unorm" "u8" 1 Filtered ADAPTER None;
    R8Snorm "r8snorm" "i8" 1 Filtered ADAPTER None;
    R8Uint "r8uint" "u8" 1 Uint ADAPTER None;
    R8Sint "r8sint" "i8" 1 Sint ADAPTER None;
    Rg8Unorm "rg8unorm" "[u8; 2]" 2 Filtered ADAPTER None;
    Rg8Snorm "rg8snorm" "[i8; 2]" 2 Filtered ADAPTER None;
    Rg8Uint "rg8uint" "[u8; 2]" 2 Uint ADAPTER None;
    Rg8Sint "rg8sint" "[i8; 2]" 2 Sint ADAPTER None;
    R16Uint "r16uint" "u16" 2 Uint ADAPTER None;
    R16Sint "r16sint" "i16" 2 Sint ADAPTER None;
    R16Float "r16float" "half::f16" 2 Filtered ADAPTER None;
    Rg16Uint "rg16uint" "[u16; 2]" 4 Uint ADAPTER None;
    Rg16Sint "rg16sint" "[i16; 2]" 4 Sint ADAPTER None;
    Rg16Float "rg16float" "[half::f16; 2]" 4 Filtered ADAPTER None;
    Rgb10a2Uint "rgb10a2uint" "u32" 4 Uint ADAPTER None;
    Rgb10a2Unorm "rgb10a2unorm" "u32" 4 Filtered ADAPTER None;
    Rg11b10Ufloat "rg11b10ufloat" "u32" 4 Filtered ADAPTER None;
    // Need `texture_format_16bit_norm` to exist at all.
    R16Unorm "r16unorm" "u16" 2 Filtered CORE NORM16;
    R16Snorm "r16snorm" "i16" 2 Filtered CORE NORM16;
    Rg16Unorm "rg16unorm" "[u16; 2]" 4 Filtered CORE NORM16;
    Rg16Snorm "rg16snorm" "[i16; 2]" 4 Filtered CORE NORM16;
    Rgba16Unorm "rgba16unorm" "[u16; 4]" 8 Filtered CORE NORM16;
    Rgba16Snorm "rgba16snorm" "[i16; 4]" 8 Filtered CORE NORM16;
}

impl TexelFormat {
    /// The format called `name` (its WGSL spelling).
    ///
    /// ```
    /// use vyre_analysis::spec::TexelFormat;
    /// assert_eq!(TexelFormat::by_name("rg16float"), Some(TexelFormat::Rg16Float));
    /// assert_eq!(TexelFormat::by_name("depth32float"), None);
    /// ```
    #[must_use]
    pub fn by_name(name: &str) -> Option<TexelFormat> {
        TexelFormat::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Whether a `linear` sampler may filter it on every WebGPU device
    /// (the 32-bit float formats need the `float32_filterable` feature;
    /// integer formats are never filtered).
    #[must_use]
    pub fn filterable(self) -> bool {
        self.sample_type() == SampleType::Float { filterable: true }
    }

    /// What its texels read as in a `texture_2d<T>` (and the other sampled
    /// dimensions), without optional features.
    #[must_use]
    pub fn sample_type(self) -> SampleType {
        match self.sampled() {
            Sampled::Filtered => SampleType::Float { filterable: true },
            Sampled::Float32 => SampleType::Float { filterable: false },
            Sampled::Uint => SampleType::Uint,
            Sampled::Sint => SampleType::Sint,
        }
    }

    /// Whether it is one of the 32-bit float formats that the
    /// `float32_filterable` feature makes filterable.
    #[must_use]
    pub fn is_float32(self) -> bool {
        matches!(
            self,
            TexelFormat::R32Float | TexelFormat::Rg32Float | TexelFormat::Rgba32Float
        )
    }

    /// The feature a graph must declare to bind this format as a storage
    /// texture with `access`, from wgpu's table of what WebGPU guarantees
    /// (`TextureFormat::guaranteed_format_features`): `None` when every
    /// device allows it (given the format's own
    /// [`format_feature`](Self::format_feature)). With
    /// [`Feature::TextureAdapterSpecificFormatFeatures`] the adapter still
    /// decides, checked by the runtime's `Graph::new`.
    ///
    /// ```
    /// use vyre_analysis::spec::{Feature, TexelFormat, TextureAccess};
    /// assert_eq!(TexelFormat::Rgba8Uint.storage_feature(TextureAccess::Write), None);
    /// assert_eq!(TexelFormat::R32Sint.storage_feature(TextureAccess::ReadWrite), None);
    /// assert_eq!(
    ///     TexelFormat::Bgra8Unorm.storage_feature(TextureAccess::Write),
    ///     Some(Feature::Bgra8UnormStorage)
    /// );
    /// assert_eq!(
    ///     TexelFormat::Rgba8Unorm.storage_feature(TextureAccess::ReadWrite),
    ///     Some(Feature::TextureAdapterSpecificFormatFeatures)
    /// );
    /// ```
    #[must_use]
    pub fn storage_feature(self, access: TextureAccess) -> Option<Feature> {
        match (self.storage(), access) {
            (Storage::Core { read_write: false }, TextureAccess::ReadWrite) => {
                Some(Feature::TextureAdapterSpecificFormatFeatures)
            }
            (Storage::Core { .. }, _) => None,
            (Storage::WriteWith(feature), TextureAccess::Write) => Some(feature),
            (Storage::WriteWith(_) | Storage::Adapter, _) => {
                Some(Feature::TextureAdapterSpecificFormatFeatures)
            }
        }
    }
}

/// What a sampled texture's texels read as in WGSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleType {
    /// `texture_2d<f32>`; `filterable` when the bound format may be
    /// filtered linearly (without features, or with the graph's declared
    /// `float32_filterable`).
    Float {
        /// Whether a `linear` sampler may filter it.
        filterable: bool,
    },
    /// `texture_2d<u32>`.
    Uint,
    /// `texture_2d<i32>`.
    Sint,
}

impl SampleType {
    /// The WGSL type argument (`f32` in `texture_2d<f32>`).
    ///
    /// ```
    /// use vyre_analysis::spec::SampleType;
    /// assert_eq!(SampleType::Float { filterable: false }.wgsl(), "f32");
    /// assert_eq!(SampleType::Sint.wgsl(), "i32");
    /// ```
    #[must_use]
    pub fn wgsl(self) -> &'static str {
        match self {
            SampleType::Float { .. } => "f32",
            SampleType::Uint => "u32",
            SampleType::Sint => "i32",
        }
    }
}

/// The access mode of a storage texture binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureAccess {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `read_write` (WebGPU allows it for `r32float`, `r32uint` and
    /// `r32sint`; other formats need the adapter-specific format features).
    ReadWrite,
}

impl TextureAccess {
    /// The WGSL spelling.
    #[must_use]
    pub fn wgsl(self) -> &'static str {
        match self {
            TextureAccess::Read => "read",
            TextureAccess::Write => "write",
            TextureAccess::ReadWrite => "read_write",
        }
    }
}

/// The dimension of a graph texture and of the kernel bindings that bind
/// it: `graph!`'s `texture_1d`, `texture` (or `texture_2d`),
/// `texture_2d_array` and `texture_3d` declarations.
///
/// ```
/// use vyre_analysis::spec::TextureDimension;
/// assert_eq!(TextureDimension::D2Array.keyword(), "texture_2d_array");
/// assert_eq!(TextureDimension::D3.extent_words(), "[width, height, depth]");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TextureDimension {
    /// `texture_1d`, `texture_storage_1d`: `[width]`.
    D1,
    /// `texture_2d`, `texture_storage_2d`: `[width, height]`.
    #[default]
    D2,
    /// `texture_2d_array`, `texture_storage_2d_array`: `[width, height,
    /// layers]`.
    D2Array,
    /// `texture_3d`, `texture_storage_3d`: `[width, height, depth]`.
    D3,
}

impl TextureDimension {
    /// Every dimension.
    pub const ALL: [TextureDimension; 4] = [
        TextureDimension::D1,
        TextureDimension::D2,
        TextureDimension::D2Array,
        TextureDimension::D3,
    ];

    /// The `graph!` declaration keyword (`texture_1d`, ...), which is also
    /// the sampled WGSL type's name.
    #[must_use]
    pub fn keyword(self) -> &'static str {
        match self {
            TextureDimension::D1 => "texture_1d",
            TextureDimension::D2 => "texture_2d",
            TextureDimension::D2Array => "texture_2d_array",
            TextureDimension::D3 => "texture_3d",
        }
    }

    /// The word that declares it in `graph!` examples (`texture` for 2D).
    #[must_use]
    pub fn declaration(self) -> &'static str {
        match self {
            TextureDimension::D2 => "texture",
            other => other.keyword(),
        }
    }

    /// The storage texture WGSL type's name (`texture_storage_2d`).
    #[must_use]
    pub fn storage_keyword(self) -> &'static str {
        match self {
            TextureDimension::D1 => "texture_storage_1d",
            TextureDimension::D2 => "texture_storage_2d",
            TextureDimension::D2Array => "texture_storage_2d_array",
            TextureDimension::D3 => "texture_storage_3d",
        }
    }

    /// The dimension a `graph!` declaration keyword names (`texture` is
    /// 2D).
    ///
    /// ```
    /// use vyre_analysis::spec::TextureDimension;
    /// assert_eq!(TextureDimension::by_keyword("texture"), Some(TextureDimension::D2));
    /// assert_eq!(TextureDimension::by_keyword("texture_3d"), Some(TextureDimension::D3));
    /// assert_eq!(TextureDimension::by_keyword("texture_cube"), None);
    /// ```
    #[must_use]
    pub fn by_keyword(word: &str) -> Option<TextureDimension> {
        match word {
            "texture" => Some(TextureDimension::D2),
            _ => TextureDimension::ALL
                .into_iter()
                .find(|d| d.keyword() == word),
        }
    }

    /// The names of its extent's entries, width first.
    #[must_use]
    pub fn sides(self) -> &'static [&'static str] {
        match self {
            TextureDimension::D1 => &["width"],
            TextureDimension::D2 => &["width", "height"],
            TextureDimension::D2Array => &["width", "height", "layers"],
            TextureDimension::D3 => &["width", "height", "depth"],
        }
    }

    /// What its extent's entries are, for messages.
    #[must_use]
    pub fn extent_words(self) -> &'static str {
        match self {
            TextureDimension::D1 => "[width]",
            TextureDimension::D2 => "[width, height]",
            TextureDimension::D2Array => "[width, height, layers]",
            TextureDimension::D3 => "[width, height, depth]",
        }
    }

    /// `size` (width, height, depth or layers) as text: `300 x 20 texels`,
    /// `64 x 64 texels x 6 layers`, `16 x 16 x 16 texels`.
    #[must_use]
    pub fn describe(self, size: [u64; 3]) -> String {
        let [w, h, d] = size;
        match self {
            TextureDimension::D1 => format!("{w} texels"),
            TextureDimension::D2 => format!("{w} x {h} texels"),
            TextureDimension::D2Array => format!(
                "{w} x {h} texels x {d} layer{}",
                if d == 1 { "" } else { "s" }
            ),
            TextureDimension::D3 => format!("{w} x {h} x {d} texels"),
        }
    }
}
