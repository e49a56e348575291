//! Textures and samplers: their formats, how a kernel's texture binding is
//! reflected from naga, and the compile-time checks of a graph texture or
//! sampler against the kernel bindings that bind it. Called from
//! `input.rs` (formats), `reflect.rs` (bindings) and `analyse.rs` (checks).

use naga::{ImageClass, ImageDimension, ScalarKind, StorageAccess, StorageFormat, TypeInner};
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::input::{BufferDecl, ExtentExpr};
use crate::reflect::{BindingKind, ReflectedBinding};
use crate::rust_types::{Prim, RustTy};

/// WebGPU's default `maxTextureDimension2D`.
pub const MAX_TEXTURE_DIMENSION_2D: u64 = 8192;

/// What graph textures and bindings accept, for messages.
pub const SUPPORTED: &str = "graph! binds `texture_2d<f32>`, `texture_2d<u32>`, `texture_2d<i32>`, `texture_storage_2d<F, read|write|read_write>` with F one of rgba8unorm, rgba16float, rgba32float, r32float, r32uint, and `sampler` (2D, not arrayed, not multisampled, not depth, not comparison)";

/// A graph texture's texel format (mirrors `vyre_graph::spec::TexelFormat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `rgba8unorm`: `[u8; 4]`.
    Rgba8Unorm,
    /// `rgba16float`: `[half::f16; 4]`.
    Rgba16Float,
    /// `rgba32float`: `[f32; 4]`.
    Rgba32Float,
    /// `r32float`: `f32`.
    R32Float,
    /// `r32uint`: `u32`.
    R32Uint,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 5] = [
        Format::Rgba8Unorm,
        Format::Rgba16Float,
        Format::Rgba32Float,
        Format::R32Float,
        Format::R32Uint,
    ];

    /// The WGSL and `graph!` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Format::Rgba8Unorm => "rgba8unorm",
            Format::Rgba16Float => "rgba16float",
            Format::Rgba32Float => "rgba32float",
            Format::R32Float => "r32float",
            Format::R32Uint => "r32uint",
        }
    }

    /// The `vyre_graph::spec::TexelFormat` variant.
    pub fn variant(self) -> &'static str {
        match self {
            Format::Rgba8Unorm => "Rgba8Unorm",
            Format::Rgba16Float => "Rgba16Float",
            Format::Rgba32Float => "Rgba32Float",
            Format::R32Float => "R32Float",
            Format::R32Uint => "R32Uint",
        }
    }

    /// By its `graph!` name.
    pub fn by_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every name, for messages.
    pub fn names() -> String {
        Format::ALL
            .iter()
            .map(|f| format!("`{}`", f.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The host texel type.
    pub fn texel(self) -> RustTy {
        let four = |p| RustTy::Array(Box::new(RustTy::Prim(p)), 4);
        match self {
            Format::Rgba8Unorm => four(Prim::U8),
            Format::Rgba16Float => four(Prim::F16),
            Format::Rgba32Float => four(Prim::F32),
            Format::R32Float => RustTy::Prim(Prim::F32),
            Format::R32Uint => RustTy::Prim(Prim::U32),
        }
    }

    /// Bytes per texel.
    pub fn bytes(self) -> u32 {
        match self {
            Format::Rgba8Unorm | Format::R32Float | Format::R32Uint => 4,
            Format::Rgba16Float => 8,
            Format::Rgba32Float => 16,
        }
    }

    /// Whether a linear sampler may filter it without extra features.
    pub fn filterable(self) -> bool {
        matches!(self, Format::Rgba8Unorm | Format::Rgba16Float)
    }

    /// What its texels read as in `texture_2d<T>`.
    pub fn sample(self) -> Sample {
        match self {
            Format::R32Uint => Sample::Uint,
            _ => Sample::Float,
        }
    }

    fn from_naga(format: StorageFormat) -> Option<Format> {
        Some(match format {
            StorageFormat::Rgba8Unorm => Format::Rgba8Unorm,
            StorageFormat::Rgba16Float => Format::Rgba16Float,
            StorageFormat::Rgba32Float => Format::Rgba32Float,
            StorageFormat::R32Float => Format::R32Float,
            StorageFormat::R32Uint => Format::R32Uint,
            _ => return None,
        })
    }
}

/// What a `texture_2d<T>` reads as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sample {
    /// `f32`.
    Float,
    /// `u32`.
    Uint,
    /// `i32`.
    Sint,
}

impl Sample {
    /// The WGSL type argument.
    pub fn wgsl(self) -> &'static str {
        match self {
            Sample::Float => "f32",
            Sample::Uint => "u32",
            Sample::Sint => "i32",
        }
    }
}

/// A storage texture's access mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexAccess {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `read_write`.
    ReadWrite,
}

/// A sampler's filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// `nearest`.
    Nearest,
    /// `linear`.
    Linear,
}

/// A sampler's address mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Address {
    /// `clamp`.
    Clamp,
    /// `repeat`.
    Repeat,
    /// `mirror`.
    Mirror,
}

/// What a declared graph resource is beyond a buffer.
#[derive(Clone, Debug)]
pub enum TextureDecl {
    /// `input texture src[width, height] rgba8unorm;` (the width is the
    /// declaration's `len`).
    Texture {
        /// The texel format.
        format: Format,
        /// The height.
        height: ExtentExpr,
    },
    /// `sampler lin = linear clamp;`.
    Sampler {
        /// Its filter.
        filter: Filter,
        /// Its address mode.
        address: Address,
    },
}

impl TextureDecl {
    /// The format of a texture.
    pub fn format(&self) -> Option<Format> {
        match self {
            TextureDecl::Texture { format, .. } => Some(*format),
            TextureDecl::Sampler { .. } => None,
        }
    }
}

/// The kind of a `Handle`-space global (a texture or a sampler) as graph!
/// binds it, or why it is refused.
pub fn reflect_kind(inner: &TypeInner, wgsl: &str) -> Result<BindingKind, String> {
    let refuse = |why: &str| Err(format!("`{wgsl}` is {why}; {SUPPORTED}"));
    match inner {
        TypeInner::Sampler { comparison: true } => refuse("a comparison sampler"),
        TypeInner::Sampler { comparison: false } => Ok(BindingKind::Sampler { filtering: true }),
        TypeInner::Image {
            dim,
            arrayed,
            class,
        } => {
            if *dim != ImageDimension::D2 {
                return refuse(&format!("a {dim:?} texture"));
            }
            if *arrayed {
                return refuse("a texture array");
            }
            match class {
                ImageClass::Sampled { multi: true, .. } | ImageClass::Depth { multi: true } => {
                    refuse("multisampled")
                }
                ImageClass::Depth { .. } => refuse("a depth texture"),
                ImageClass::External => refuse("an external texture"),
                ImageClass::Sampled { kind, .. } => Ok(BindingKind::SampledTexture {
                    sample: match kind {
                        ScalarKind::Uint => Sample::Uint,
                        ScalarKind::Sint => Sample::Sint,
                        _ => Sample::Float,
                    },
                    filterable: true,
                }),
                ImageClass::Storage { format, access } => {
                    let Some(format) = Format::from_naga(*format) else {
                        return refuse(&format!(
                            "a storage texture of format {format:?}, which graph textures do not have"
                        ));
                    };
                    let access = match (
                        access.contains(StorageAccess::LOAD),
                        access.contains(StorageAccess::STORE),
                    ) {
                        (true, true) => TexAccess::ReadWrite,
                        (true, false) => TexAccess::Read,
                        _ => TexAccess::Write,
                    };
                    if access == TexAccess::ReadWrite
                        && !matches!(format, Format::R32Float | Format::R32Uint)
                    {
                        return Err(format!(
                            "`{wgsl}`: WebGPU allows `read_write` storage textures only of format r32float or r32uint (and r32sint); use `write` (and a second texture to read), or one of those formats"
                        ));
                    }
                    Ok(BindingKind::StorageTexture { format, access })
                }
            }
        }
        _ => refuse("not a texture or sampler"),
    }
}

/// The element type and size a texture binding gives its resource: the
/// storage format's texel, else a placeholder the graph's format replaces.
pub fn binding_element(kind: BindingKind) -> (RustTy, u32) {
    match kind {
        BindingKind::StorageTexture { format, .. } => (format.texel(), format.bytes()),
        _ => (RustTy::Prim(Prim::U32), 4),
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
                BindingKind::StorageTexture { format, .. } => {
                    format!("intermediate texture {name}[n, n] {};", format.name())
                }
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
        (Some(TextureDecl::Texture { format, .. }), BindingKind::SampledTexture { sample, .. }) => {
            (format.sample() != sample).then(|| {
                format!(
                    "texture `{name}` is {} (it reads as `{}`) but kernel `{kernel}` binds it through {what}, which reads `{}`; declare the texture with a format that reads as `{}` ({}), or change the kernel to `texture_2d<{}>`",
                    format.name(),
                    format.sample().wgsl(),
                    sample.wgsl(),
                    sample.wgsl(),
                    formats_of(sample),
                    format.sample().wgsl()
                )
            })
        }
        (
            Some(TextureDecl::Texture { format, .. }),
            BindingKind::StorageTexture {
                format: declared, ..
            },
        ) => (*format != declared).then(|| {
            format!(
                "texture format mismatch: texture `{name}` is {} but kernel `{kernel}` binds it through {what}, which is {}; declare `{name}` as {} or change the kernel to `texture_storage_2d<{}, ...>`",
                format.name(),
                declared.name(),
                declared.name(),
                format.name()
            )
        }),
        (Some(TextureDecl::Texture { .. }), kind) => Some(format!(
            "`{name}` is a texture but kernel `{kernel}` binds it through {what}, a {}; bind a buffer there, or change the kernel to take a `texture_2d` or `texture_storage_2d`",
            kind_word(kind)
        )),
    }
}

fn formats_of(sample: Sample) -> String {
    let names: Vec<&str> = Format::ALL
        .iter()
        .filter(|f| f.sample() == sample)
        .map(|f| f.name())
        .collect();
    if names.is_empty() {
        "no graph texture format does; use `texture_2d<f32>` or `texture_2d<u32>`".to_owned()
    } else {
        names.join(", ")
    }
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

/// Problems of one texture declaration on its own: an empty or (without
/// `limits native;`) too large constant side.
pub fn check_decl(decl: &BufferDecl, native: bool) -> Vec<syn::Error> {
    let Some(TextureDecl::Texture { height, .. }) = &decl.texture else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for (side, e) in [("width", &decl.len), ("height", height)] {
        let constant = !e.extent.depends_on_n();
        if constant && e.extent.add == 0 && side == "height" {
            errors.push(syn::Error::new(
                e.span,
                format!(
                    "texture `{}` would always be empty: its height is 0 texels; give it at least one",
                    decl.name
                ),
            ));
        }
        if constant && !native && e.extent.add > MAX_TEXTURE_DIMENSION_2D {
            errors.push(syn::Error::new(
                e.span,
                format!(
                    "texture `{}`: {side} {} is over WebGPU's default maxTextureDimension2D = {MAX_TEXTURE_DIMENSION_2D}\nhelp: use at most {MAX_TEXTURE_DIMENSION_2D} texels per side, or write `limits native;` in graph! to check against the device's own limit at run time instead",
                    decl.name, e.extent.add
                ),
            ));
        }
    }
    errors
}

/// Alias keys for `vyre_analysis::analyse_keyed`, from the same
/// `vyre_analysis::alias_keys` that `GraphSpec::alias_keys` uses at run
/// time: buffers share with buffers, a texture or sampler only with one of
/// the same kind, format and size, an append buffer with nothing.
pub fn alias_keys(decls: &[BufferDecl]) -> Vec<u64> {
    use vyre_analysis::Sharing;
    let sharing: Vec<Sharing<_>> = decls
        .iter()
        .map(|d| match &d.texture {
            Some(TextureDecl::Texture { format, height }) => {
                Sharing::Shape((0u8, Some(*format), d.len.extent, height.extent, None))
            }
            Some(TextureDecl::Sampler { filter, address }) => Sharing::Shape((
                1,
                None,
                d.len.extent,
                d.len.extent,
                Some((*filter, *address)),
            )),
            None if d.append.is_some() => Sharing::Alone,
            None => Sharing::Buffer,
        })
        .collect();
    vyre_analysis::alias_keys(&sharing)
}

/// Whether the problem size can be inferred from this input texture's
/// texel count: one side is `K * n`, the other a constant.
pub fn inferable(decl: &BufferDecl) -> bool {
    match &decl.texture {
        Some(TextureDecl::Texture { height, .. }) => {
            (decl.len.extent.solvable() && !height.extent.depends_on_n())
                || (height.extent.solvable() && !decl.len.extent.depends_on_n())
        }
        _ => false,
    }
}

/// `vyre_graph::spec::BindingKind` tokens of a texture or sampler binding.
pub fn kind_tokens(kind: BindingKind, p: &TokenStream) -> TokenStream {
    match kind {
        BindingKind::SampledTexture { sample, filterable } => {
            let sample = match sample {
                Sample::Float => quote!(#p::SampleType::Float { filterable: #filterable }),
                Sample::Uint => quote!(#p::SampleType::Uint),
                Sample::Sint => quote!(#p::SampleType::Sint),
            };
            quote!(#p::BindingKind::SampledTexture { sample: #sample })
        }
        BindingKind::StorageTexture { format, access } => {
            let format = format_tokens(format, p);
            let access = match access {
                TexAccess::Read => quote!(#p::TextureAccess::Read),
                TexAccess::Write => quote!(#p::TextureAccess::Write),
                TexAccess::ReadWrite => quote!(#p::TextureAccess::ReadWrite),
            };
            quote!(#p::BindingKind::StorageTexture { format: #format, access: #access })
        }
        BindingKind::Sampler { filtering } => {
            quote!(#p::BindingKind::Sampler { filtering: #filtering })
        }
        BindingKind::Uniform => quote!(#p::BindingKind::Uniform),
        BindingKind::ReadOnlyStorage => quote!(#p::BindingKind::ReadOnlyStorage),
        BindingKind::ReadWriteStorage => quote!(#p::BindingKind::ReadWriteStorage),
    }
}

fn format_tokens(format: Format, p: &TokenStream) -> TokenStream {
    let v = proc_macro2::Ident::new(format.variant(), Span::call_site());
    quote!(#p::TexelFormat::#v)
}

/// The `texture` field of a `BufferSpec`.
pub fn resource_tokens(
    decl: Option<&TextureDecl>,
    width: crate::input::Extent,
    p: &TokenStream,
) -> TokenStream {
    match decl {
        None => quote!(::core::option::Option::None),
        Some(TextureDecl::Texture { format, height, .. }) => {
            let format = format_tokens(*format, p);
            let width = crate::expand::extent(width);
            let height = crate::expand::extent(height.extent);
            quote!(::core::option::Option::Some(#p::TextureResource::Texture(#p::TextureShape { format: #format, width: #width, height: #height })))
        }
        Some(TextureDecl::Sampler { filter, address }) => {
            let filter = match filter {
                Filter::Nearest => quote!(#p::Filter::Nearest),
                Filter::Linear => quote!(#p::Filter::Linear),
            };
            let address = match address {
                Address::Clamp => quote!(#p::AddressMode::Clamp),
                Address::Repeat => quote!(#p::AddressMode::Repeat),
                Address::Mirror => quote!(#p::AddressMode::Mirror),
            };
            quote!(::core::option::Option::Some(#p::TextureResource::Sampler(#p::SamplerSpec { filter: #filter, address: #address })))
        }
    }
}

/// Set each kernel texture binding's layout details from the graph
/// resources its nodes bind: a sampled texture is filterable when its format
/// is, a sampler filtering when it is `linear`. A kernel has one layout, so
/// two nodes that disagree are an error: `(kernel index, message)`.
pub fn resolve_layouts(
    kernels: &mut [crate::analyse::KernelOut],
    nodes: &[crate::analyse::NodeOut],
    decls: &[BufferDecl],
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
                    (BindingKind::SampledTexture { .. }, Some(t)) => {
                        t.format().is_some_and(Format::filterable)
                    }
                    (BindingKind::Sampler { .. }, Some(TextureDecl::Sampler { filter, .. })) => {
                        *filter == Filter::Linear
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
                    BindingKind::SampledTexture { filterable, .. } => *filterable = value,
                    BindingKind::Sampler { filtering } => *filtering = value,
                    _ => {}
                }
            }
        }
    }
    errors
}

/// Whether a declaration is a sampler (never a host input).
pub fn is_sampler(decl: Option<&TextureDecl>) -> bool {
    matches!(decl, Some(TextureDecl::Sampler { .. }))
}

/// The generated docs' line for a texture or sampler.
pub fn doc(b: &crate::analyse::BufferOut, class: &str) -> Option<String> {
    Some(match b.texture.as_ref()? {
        TextureDecl::Texture { format, height } => format!(
            "`{}` ({class} texture, {}): {} x {} texels of `{}`, row after row, tightly packed",
            b.name,
            format.name(),
            b.len,
            height.extent,
            b.element.display()
        ),
        TextureDecl::Sampler { filter, address } => format!(
            "`{}` (sampler): {filter:?} filtering, {address:?} addressing",
            b.name
        ),
    })
}

/// Every texture a node's kernel samples with a `linear` sampler must have
/// a filterable format: `(span of the texture's argument, message)` for
/// each that has not.
pub fn check_sampling(
    kernel: &crate::reflect::KernelInterface,
    node_bindings: &[(u32, u32, usize)],
    spans: &std::collections::HashMap<usize, Span>,
    decls: &[BufferDecl],
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
            Some(TextureDecl::Sampler {
                filter: Filter::Linear,
                ..
            })
        );
        let Some(format) = texture.texture.as_ref().and_then(TextureDecl::format) else {
            continue;
        };
        if linear && !format.filterable() {
            out.push((
                spans.get(&ti).copied().unwrap_or_else(Span::call_site),
                format!(
                    "kernel `{}` samples `{}` with the linear sampler `{}`, but texture `{}` is {}, which WebGPU does not filter without the `float32-filterable` feature; bind a `nearest` sampler (`sampler {} = nearest clamp;`), read it with `textureLoad`, or declare the texture rgba16float or rgba8unorm",
                    kernel.name, image, s.name, texture.name, format.name(), s.name
                ),
            ));
        }
    }
    out
}
