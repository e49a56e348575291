//! The compile-time checks of textures and samplers: each declaration on its own (empty sides, WebGPU's
//! default limits, the feature its format needs), each kernel's storage
//! bindings against the declared features, each node's binding of a graph
//! resource (kind, dimension, format, sample type), linear sampling of
//! unfilterable formats, and the filtering each kernel's layout takes from
//! the resources its nodes bind. And the keys that
//! decide which textures may share device memory ([`alias_keys`]).

use proc_macro2::Span;
use vyre_analysis::spec::{
    Feature, Filter, SampleType, TexelFormat, TextureAccess, TextureDimension, TextureResource,
};

use crate::diag::Diagnostics;
use crate::model::texture::filterable;
use crate::model::{
    BindingKind, BufferDecl, KernelInterface, KernelOut, NodeOut, ReflectedBinding, TextureDecl,
};

/// The texture features a graph declares in `features [...]`.
#[derive(Clone, Debug, Default)]
pub struct Declared {
    features: Vec<Feature>,
}

impl Declared {
    /// From the graph's `features [...]`.
    pub fn new(features: &[&'static crate::model::features::FeatureRow]) -> Self {
        Declared {
            features: features.iter().map(|f| f.feature).collect(),
        }
    }

    /// Whether `feature` is declared.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }

    /// Whether `float32_filterable` is declared.
    pub fn float32_filterable(&self) -> bool {
        self.has(Feature::Float32Filterable)
    }
}

/// Problems of one texture declaration on its own: an empty constant side,
/// (without `limits native;`) a constant side over WebGPU's default limit
/// in the limit's own unit, and a format that needs an undeclared feature.
pub fn check_decl(decl: &BufferDecl, native: bool, declared: &Declared) -> Vec<syn::Error> {
    let Some(TextureDecl::Texture { format, dim, .. }) = &decl.texture else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    let name = &decl.name;
    let limits = default_limits(*dim);
    for ((side, e), limit) in dim.sides().iter().zip(decl.sides()).zip(limits) {
        let constant = !e.extent.depends_on_n();
        let value = e.extent.add;
        let has = if *side == "layers" {
            format!("it has {value} layer{}", if value == 1 { "" } else { "s" })
        } else {
            format!("its {side} is {value} texels")
        };
        if constant && value == 0 {
            errors.push(syn::Error::new(
                e.span,
                format!("texture `{name}` would always be empty: {has}; give it at least one"),
            ));
        }
        if constant && !native && value > limit.max {
            errors.push(syn::Error::new(
                e.span,
                format!(
                    "texture `{name}`: {has}, over WebGPU's default `{}` of {} {}\nhelp: use at most {} {}, or write `limits native;` in graph! to check against the device's own `{}` when a run is planned instead",
                    limit.webgpu,
                    limit.max,
                    limit.unit,
                    limit.max,
                    limit.unit,
                    limit.wgpu
                ),
            ));
        }
    }
    if let Some(feature) = format.format_feature()
        && !declared.has(feature)
    {
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "texture `{name}` is {}, which needs the device feature `{feature}`: declare `features [{feature}];` in graph!",
                format.name(),
                feature = feature.name()
            ),
        ));
    }
    errors
}

/// Every kernel storage texture binding whose format and access need a
/// feature the graph does not declare (`bgra8unorm` storage needs
/// `bgra8unorm_storage`; storage beyond WebGPU's guarantees needs
/// `texture_adapter_specific_format_features`), one error per binding, at
/// the kernel's name.
pub fn check_kernels(
    kernels: &[Option<KernelInterface>],
    declared: &Declared,
    diag: &mut Diagnostics,
) {
    for kernel in kernels.iter().flatten() {
        for b in &kernel.bindings {
            let BindingKind::StorageTexture { format, access, .. } = b.kind else {
                continue;
            };
            let Some(feature) = format.storage_feature(access) else {
                continue;
            };
            if declared.has(feature) {
                continue;
            }
            let adapter = feature == Feature::TextureAdapterSpecificFormatFeatures;
            let why = if !adapter {
                format!(
                    "WebGPU stores {} only with it, and only with `write` access",
                    format.name()
                )
            } else if access == TextureAccess::ReadWrite
                && format.storage_feature(TextureAccess::Write).is_none()
            {
                format!(
                    "WebGPU guarantees `read_write` storage only for {}; use `read` or `write`, and a second texture for the other direction",
                    read_write_names()
                )
            } else {
                format!(
                    "WebGPU does not guarantee {} storage textures; its core storage formats are {}",
                    format.name(),
                    core_storage_names()
                )
            };
            diag.push(syn::Error::new(
                kernel.name.span(),
                format!(
                    "kernel `{}` binds {}, a {} storage texture with `{}` access, which needs the device feature `{feature}` ({why})\nhelp: declare `features [{feature}];` in graph! ({}), or use a format and access every device allows",
                    kernel.name,
                    b.describe(),
                    format.name(),
                    access.wgsl(),
                    if adapter {
                        "`Graph::new` then asks the adapter whether it stores this format that way"
                    } else {
                        "`Graph::new` then refuses a device without it"
                    },
                    feature = feature.name()
                ),
            ));
        }
    }
}

/// The dimension of a texture binding.
fn binding_dim(kind: BindingKind) -> Option<TextureDimension> {
    match kind {
        BindingKind::SampledTexture { dimension, .. }
        | BindingKind::StorageTexture { dimension, .. } => Some(dimension),
        _ => None,
    }
}

/// The kernel type that would bind a graph texture of `dim` the way `kind`
/// binds: `texture_3d<f32>`, `texture_storage_3d<r32float, write>`.
fn kernel_type(kind: BindingKind, dim: TextureDimension, format: TexelFormat) -> String {
    match kind {
        BindingKind::StorageTexture { access, .. } => format!(
            "{}<{}, {}>",
            dim.storage_keyword(),
            format.name(),
            access.wgsl()
        ),
        _ => format!("{}<{}>", dim.keyword(), format.sample_type().wgsl()),
    }
}

/// Why graph resource `decl` cannot be bound to kernel `kernel`'s binding
/// `b` (either is a texture or a sampler), as a message with its fix.
pub fn check_binding(decl: &BufferDecl, b: &ReflectedBinding, kernel: &str) -> Option<String> {
    let name = &decl.name;
    let what = b.describe();
    match (&decl.texture, b.kind) {
        (None, kind) => Some(format!(
            "`{name}` is a buffer but kernel `{kernel}` binds it through {what}, a {}; declare `{name}` as a graph {} (`{}`)",
            kind_word(kind),
            kind_word(kind),
            match kind {
                BindingKind::Sampler { .. } => format!("sampler {name} = linear clamp;"),
                BindingKind::StorageTexture {
                    format, dimension, ..
                } => format!(
                    "intermediate {} {name}{} {};",
                    dimension.declaration(),
                    example_extent(dimension),
                    format.name()
                ),
                BindingKind::SampledTexture { dimension, .. } => format!(
                    "input {} {name}{} rgba8unorm;",
                    dimension.declaration(),
                    example_extent(dimension)
                ),
                _ => format!("input texture {name}[n, n] rgba8unorm;"),
            }
        )),
        (Some(TextureDecl::Sampler { .. }), BindingKind::Sampler { .. }) => None,
        (Some(TextureDecl::Sampler { .. }), _) => Some(format!(
            "`{name}` is a sampler but kernel `{kernel}` binds it through {what}; bind a sampler only to a WGSL `sampler`"
        )),
        (Some(TextureDecl::Texture { .. }), BindingKind::Sampler { .. }) => Some(format!(
            "`{name}` is a texture but kernel `{kernel}` binds it through {what}, a sampler; declare a graph sampler (`sampler lin = linear clamp;`) and bind that"
        )),
        (Some(TextureDecl::Texture { format, dim, .. }), kind) => match binding_dim(kind) {
            None => Some(format!(
                "`{name}` is a texture but kernel `{kernel}` binds it through {what}, a {}; bind a buffer there, or change the kernel to take a `{}` or `{}`",
                kind_word(kind),
                dim.keyword(),
                dim.storage_keyword()
            )),
            Some(bound) if bound != *dim => Some(format!(
                "texture dimension mismatch: texture `{name}` is a `{}` {} but kernel `{kernel}` binds it through {what}, a `{}` binding; declare `{name}` as `{}` ({}) or change the kernel to `{}`",
                dim.keyword(),
                decl.extent_text(),
                bound.keyword(),
                bound.keyword(),
                bound.extent_words(),
                kernel_type(kind, *dim, *format)
            )),
            Some(_) => check_format(decl, *format, *dim, b, kernel),
        },
    }
}

/// A texture binding of the right dimension against the texture's format.
fn check_format(
    decl: &BufferDecl,
    format: TexelFormat,
    dim: TextureDimension,
    b: &ReflectedBinding,
    kernel: &str,
) -> Option<String> {
    let name = &decl.name;
    let what = b.describe();
    match b.kind {
        BindingKind::SampledTexture { sample, .. } => (format.sample_type().wgsl() != sample.wgsl()).then(|| {
            format!(
                "texture `{name}` is {} (it reads as `{}`) but kernel `{kernel}` binds it through {what}, which reads `{}`; declare the texture with a format that reads as `{}` ({}), or change the kernel to `{}<{}>`",
                format.name(),
                format.sample_type().wgsl(),
                sample.wgsl(),
                sample.wgsl(),
                formats_of(sample),
                dim.keyword(),
                format.sample_type().wgsl()
            )
        }),
        BindingKind::StorageTexture {
            format: declared, ..
        } => (format != declared).then(|| {
            format!(
                "texture format mismatch: texture `{name}` is {} but kernel `{kernel}` binds it through {what}, which is {}; declare `{name}` as {} or change the kernel to `{}<{}, ...>`",
                format.name(),
                declared.name(),
                declared.name(),
                dim.storage_keyword(),
                format.name()
            )
        }),
        _ => None,
    }
}

/// An extent of `dim` for an example declaration.
fn example_extent(dim: TextureDimension) -> &'static str {
    match dim {
        TextureDimension::D1 => "[n]",
        TextureDimension::D2 => "[n, n]",
        TextureDimension::D2Array | TextureDimension::D3 => "[n, n, 4]",
    }
}

fn formats_of(sample: SampleType) -> String {
    TexelFormat::ALL
        .iter()
        .filter(|f| f.sample_type().wgsl() == sample.wgsl())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind_word(kind: BindingKind) -> &'static str {
    match kind {
        BindingKind::SampledTexture { .. } => "sampled texture",
        BindingKind::StorageTexture { .. } => "storage texture",
        BindingKind::Sampler { .. } => "sampler",
        BindingKind::Uniform => "uniform buffer",
        _ => "storage buffer",
    }
}

/// Every texture a node's kernel samples with a `linear` sampler must have
/// a filterable format: `(span of the texture's argument, message)` for
/// each that has not.
pub fn check_sampling(
    kernel: &KernelInterface,
    node_bindings: &[(u32, u32, usize)],
    spans: &std::collections::HashMap<usize, Span>,
    decls: &[BufferDecl],
    declared: &Declared,
) -> Vec<(Span, String)> {
    let bound = |global: &str| {
        let b = kernel.binding(global)?;
        node_bindings
            .iter()
            .find(|(g, i, _)| *g == b.group && *i == b.binding)
            .map(|(_, _, r)| *r)
    };
    let mut out = Vec::new();
    for (image, sampler) in &kernel.sampling {
        let (Some(ti), Some(si)) = (bound(image), bound(sampler)) else {
            continue;
        };
        let (Some(texture), Some(s)) = (decls.get(ti), decls.get(si)) else {
            continue;
        };
        let linear = matches!(
            s.texture,
            Some(TextureDecl::Sampler(sampler)) if sampler.filter == Filter::Linear
        );
        let Some(format) = texture.texture.as_ref().and_then(TextureDecl::format) else {
            continue;
        };
        if linear && !filterable(format, declared.float32_filterable()) {
            out.push((
                spans.get(&ti).copied().unwrap_or_else(Span::call_site),
                format!(
                    "kernel `{}` samples `{}` with the linear sampler `{}`, but texture `{}` is {}, which WebGPU filters only with the device feature `{f32}`; declare `features [{f32}];` in graph!, bind a `nearest` sampler (`sampler {} = nearest clamp;`), read it with `textureLoad`, or declare the texture rgba16float or rgba8unorm",
                    kernel.name,
                    image,
                    s.name,
                    texture.name,
                    format.name(),
                    s.name,
                    f32 = Feature::Float32Filterable.name()
                ),
            ));
        }
    }
    out
}

/// Set each kernel texture binding's layout details from the graph
/// resources its nodes bind: a sampled texture is filterable when its format
/// is, a sampler filtering when it is `linear`. A kernel has one layout, so
/// two nodes that disagree are an error: `(kernel index, message)`.
pub fn resolve_layouts(
    kernels: &mut [KernelOut],
    nodes: &[NodeOut],
    decls: &[BufferDecl],
    declared: &Declared,
) -> Vec<(usize, String)> {
    let mut errors = Vec::new();
    for (ki, kernel) in kernels.iter_mut().enumerate() {
        for b in &mut kernel.bindings {
            let mut decided: Option<(bool, String, String)> = None;
            for node in nodes.iter().filter(|n| n.kernel == ki) {
                let Some(decl) = node
                    .bindings
                    .iter()
                    .find(|(g, i, _)| *g == b.group && *i == b.binding)
                    .and_then(|(_, _, r)| decls.get(*r))
                else {
                    continue;
                };
                let value = match (&b.kind, &decl.texture) {
                    (BindingKind::SampledTexture { .. }, Some(t)) => t
                        .format()
                        .is_some_and(|f| filterable(f, declared.float32_filterable())),
                    (BindingKind::Sampler { .. }, Some(TextureDecl::Sampler(sampler))) => {
                        sampler.filter == Filter::Linear
                    }
                    _ => continue,
                };
                match &decided {
                    Some((v, first, first_node)) if *v != value => errors.push((ki, format!(
                        "kernel `{}` binds `{}` to `{first}` in node `{first_node}` and to `{}` in node `{}`; a kernel has one bind group layout, and one of them is {} while the other is not: bind resources of the same filtering to it in every node (or declare a second kernel from the same WGSL)",
                        kernel.label,
                        b.name,
                        decl.name,
                        node.label,
                        if matches!(b.kind, BindingKind::Sampler { .. }) { "a linear sampler" } else { "a filterable format" }
                    ))),
                    Some(_) => {}
                    None => decided = Some((value, decl.name.to_string(), node.label.clone())),
                }
            }
            if let Some((value, _, _)) = decided {
                match &mut b.kind {
                    BindingKind::SampledTexture {
                        sample: SampleType::Float { filterable },
                        ..
                    } => *filterable = value,
                    BindingKind::Sampler { filtering } => *filtering = value,
                    _ => {}
                }
            }
        }
    }
    errors
}

/// The formats every device stores with `read` and `write`, for messages.
pub fn core_storage_names() -> String {
    names_where(|f| {
        f.storage_feature(TextureAccess::Read).is_none() && f.format_feature().is_none()
    })
}

/// The formats every device stores with `read_write`, for messages.
pub fn read_write_names() -> String {
    names_where(|f| f.storage_feature(TextureAccess::ReadWrite).is_none())
}

/// The names of the formats for which `keep` holds, for messages.
fn names_where(keep: impl Fn(&TexelFormat) -> bool) -> String {
    TexelFormat::ALL
        .iter()
        .filter(|f| keep(f))
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One of WebGPU's default texture limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// WebGPU's name (`maxTextureDimension2D`).
    pub webgpu: &'static str,
    /// The `wgpu::Limits` field (`max_texture_dimension_2d`).
    pub wgpu: &'static str,
    /// Its default value.
    pub max: u64,
    /// Its unit (`texels per side`, `layers`).
    pub unit: &'static str,
}

/// WebGPU's default limits for the sides of a texture of `dim`, one for
/// each of [`TextureDimension::sides`].
pub fn default_limits(dim: TextureDimension) -> &'static [Limit] {
    const D1: Limit = Limit {
        webgpu: "maxTextureDimension1D",
        wgpu: "max_texture_dimension_1d",
        max: 8192,
        unit: "texels",
    };
    const D2: Limit = Limit {
        webgpu: "maxTextureDimension2D",
        wgpu: "max_texture_dimension_2d",
        max: 8192,
        unit: "texels per side",
    };
    const LAYERS: Limit = Limit {
        webgpu: "maxTextureArrayLayers",
        wgpu: "max_texture_array_layers",
        max: 256,
        unit: "layers",
    };
    const D3: Limit = Limit {
        webgpu: "maxTextureDimension3D",
        wgpu: "max_texture_dimension_3d",
        max: 2048,
        unit: "texels per side",
    };
    match dim {
        TextureDimension::D1 => &[D1],
        TextureDimension::D2 => &[D2, D2],
        TextureDimension::D2Array => &[D2, D2, LAYERS],
        TextureDimension::D3 => &[D3, D3, D3],
    }
}

/// Alias keys for `vyre_analysis::analyse_keyed`, made exactly as
/// `GraphSpec::alias_keys` makes them at run time: buffers share with
/// buffers, a texture only with one of the same dimension, format and
/// extent, a sampler only with an equal sampler, an append buffer with
/// nothing.
pub fn alias_keys(decls: &[BufferDecl]) -> Vec<u64> {
    use vyre_analysis::Sharing;
    let sharing: Vec<Sharing<TextureResource>> = decls
        .iter()
        .map(|d| match &d.texture {
            Some(t) => Sharing::Shape(t.resource(d.len.extent)),
            None if d.append.is_some() => Sharing::Alone,
            None => Sharing::Buffer,
        })
        .collect();
    vyre_analysis::alias_keys(&sharing)
}
