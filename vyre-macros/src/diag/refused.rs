//! The texture kinds `graph!` refuses, each with why and what to do
//! instead: one text per kind, shared by the declaration grammar
//! (`texture_cube ...`, `... depth32float;`) and kernel reflection
//! (`var t: texture_cube<f32>`), so both say the same.

/// A texture kind a compute graph cannot have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// `texture_cube`, `texture_cube_array`, `texture_depth_cube*`.
    Cube,
    /// `texture_multisampled_2d`, `texture_depth_multisampled_2d`.
    Multisampled,
    /// `texture_depth_*` and depth or stencil formats.
    Depth,
    /// `texture_external`.
    External,
    /// `sampler_comparison`.
    ComparisonSampler,
}

impl Refused {
    /// What it is and why a graph cannot have it, then what to do instead.
    pub fn why(self) -> &'static str {
        match self {
            Refused::Cube => {
                "a cube map, which a compute graph cannot fill: WebGPU binds no cube view for storage, so no node could write one, and its six faces only make sense sampled by direction\nhelp: declare a `texture_2d_array` of 6 layers and pick the face in the kernel (`textureLoad(t, xy, face, 0)` or `textureSampleLevel(t, s, uv, face, 0.0)`)"
            }
            Refused::Multisampled => {
                "multisampled, which a compute graph cannot produce: only a render pass writes multisampled textures (compute shaders cannot store to them and copies into them are not allowed), so neither a node nor an upload could fill it\nhelp: keep one sample per texel in a `texture_2d`, or each sample in a layer of a `texture_2d_array`; to use a renderer's multisampled image, resolve it in the render pass and pass the resolved texture"
            }
            Refused::Depth => {
                "a depth texture, which a compute graph cannot produce: compute shaders cannot store depth formats and most of them cannot be uploaded from the host\nhelp: use an `r32float` texture (bind it as `texture_2d<f32>` and read the depth with `textureLoad(t, xy, 0).x`); copy a renderer's depth buffer into one first"
            }
            Refused::External => {
                "an external texture: a video frame or camera image the platform lends to one pass, not a resource a graph owns\nhelp: copy the frame into an `rgba8unorm` texture and pass that (a `GpuTextureHandle`) as a `texture_2d<f32>` input"
            }
            Refused::ComparisonSampler => {
                "a comparison sampler, which only samples depth textures (`textureSampleCompare`), and graphs have none\nhelp: bind a plain `sampler` and compare in the kernel (`select(0.0, 1.0, textureSampleLevel(t, s, uv, 0.0).x >= reference)`)"
            }
        }
    }

    /// The refused kind a declaration word names (`texture_cube`,
    /// `texture_depth_2d`, ...).
    pub fn by_keyword(word: &str) -> Option<Refused> {
        if word.starts_with("texture_depth_multisampled")
            || word.starts_with("texture_multisampled")
        {
            Some(Refused::Multisampled)
        } else if word.starts_with("texture_cube") || word.starts_with("texture_depth_cube") {
            Some(Refused::Cube)
        } else if word.starts_with("texture_depth") {
            Some(Refused::Depth)
        } else if word == "texture_external" {
            Some(Refused::External)
        } else {
            None
        }
    }

    /// The refused kind a format name is (depth and stencil formats).
    pub fn by_format(name: &str) -> Option<Refused> {
        (name.starts_with("depth") || name.starts_with("stencil")).then_some(Refused::Depth)
    }
}
