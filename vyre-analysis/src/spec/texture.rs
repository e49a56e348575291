//! Graph textures and samplers: a texture's format, dimension and extent
//! ([`TextureShape`]) and a sampler's filter and address mode
//! ([`SamplerSpec`]), as a graph resource ([`TextureResource`]).

use super::extent::Extent;
use super::texel::{TexelFormat, TextureDimension};

/// The format, dimension and extent of a graph texture, the extent as
/// functions of the problem size.
///
/// A 1D texture has a `height` and `depth_or_array_layers` of 1, a 2D one
/// a `depth_or_array_layers` of 1. Host texels are tightly packed: x
/// fastest, then y, then the layer (2D array) or z (3D).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureShape {
    /// Its texel format.
    pub format: TexelFormat,
    /// 1D, 2D, 2D array or 3D.
    pub dimension: TextureDimension,
    /// Texels per row.
    pub width: Extent,
    /// Rows (1 for a 1D texture).
    pub height: Extent,
    /// Layers of a 2D array, slices of a 3D texture (1 otherwise).
    pub depth_or_array_layers: Extent,
}

impl TextureShape {
    /// A 2D texture of `width x height` texels.
    ///
    /// ```
    /// use vyre_analysis::spec::{Extent, TexelFormat, TextureShape};
    /// let s = TextureShape::d2(TexelFormat::R32Float, Extent::N, Extent::constant(3));
    /// assert_eq!(s.size(10), [10, 3, 1]);
    /// ```
    #[must_use]
    pub const fn d2(format: TexelFormat, width: Extent, height: Extent) -> Self {
        TextureShape {
            format,
            dimension: TextureDimension::D2,
            width,
            height,
            depth_or_array_layers: Extent::constant(1),
        }
    }

    /// `[width, height, depth or layers]` for problem size `n`.
    #[must_use]
    pub fn size(&self, n: u64) -> [u64; 3] {
        [
            self.width.eval(n),
            self.height.eval(n),
            self.depth_or_array_layers.eval(n),
        ]
    }

    /// Texels for problem size `n` (saturating).
    #[must_use]
    pub fn texels(&self, n: u64) -> u64 {
        self.size(n)
            .into_iter()
            .fold(1u64, |acc, side| acc.saturating_mul(side))
    }

    /// Its extent at problem size `n` as text (`300 x 20 texels`,
    /// `64 x 64 texels x 6 layers`).
    #[must_use]
    pub fn describe(&self, n: u64) -> String {
        self.dimension.describe(self.size(n))
    }

    /// Its extent as declared (`[n, 3]`, `[16, 16, 2*n]`).
    #[must_use]
    pub fn declared(&self) -> String {
        match self.dimension {
            TextureDimension::D1 => format!("[{}]", self.width),
            TextureDimension::D2 => format!("[{}, {}]", self.width, self.height),
            _ => format!(
                "[{}, {}, {}]",
                self.width, self.height, self.depth_or_array_layers
            ),
        }
    }

    /// The problem size whose texel count is `texels`, when exactly one
    /// side is `K * n` and the others are constants.
    ///
    /// ```
    /// use vyre_analysis::spec::{Extent, TexelFormat, TextureShape};
    /// let s = TextureShape::d2(TexelFormat::R32Float, Extent::N, Extent::constant(3));
    /// assert_eq!(s.solve(30), Some(10));
    /// assert_eq!(s.solve(31), None);
    /// ```
    #[must_use]
    pub fn solve(&self, texels: u64) -> Option<u64> {
        let sides = [self.width, self.height, self.depth_or_array_layers];
        let mut free = sides.iter().filter(|e| e.depends_on_n());
        let (Some(free), None) = (free.next(), free.next()) else {
            return None;
        };
        let fixed = sides
            .iter()
            .filter(|e| !e.depends_on_n())
            .fold(1u64, |acc, e| acc.saturating_mul(e.eval(0)));
        if fixed == 0 || !texels.is_multiple_of(fixed) {
            return None;
        }
        free.solve(texels / fixed)
    }
}

/// How a sampler filters between texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// The nearest texel.
    Nearest,
    /// Bilinear interpolation of the four nearest texels.
    Linear,
}

/// What a sampler reads outside `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// The edge texel.
    Clamp,
    /// Wraps around.
    Repeat,
    /// Wraps around, mirrored every other time.
    Mirror,
}

/// A graph sampler (`sampler lin = linear clamp;`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerSpec {
    /// Minification and magnification filter.
    pub filter: Filter,
    /// Address mode in both directions.
    pub address: AddressMode,
}

/// What a graph resource is when it is not a plain buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureResource {
    /// A texture: `element_size` is the texel size, `len` the width.
    Texture(TextureShape),
    /// A sampler (class
    /// [`BufferClass::Input`](crate::BufferClass::Input), never a
    /// host input).
    Sampler(SamplerSpec),
}
