//! Tokens of textures and samplers for the generated `GraphSpec` and docs.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use vyre_analysis::spec::{SampleType, TextureAccess, TextureDimension, TextureResource};

use super::tokens::{extent, variant_ident};
use crate::model::{BindingKind, BufferOut, Extent, TextureDecl, Written};

/// `vyre_graph::spec::BindingKind` tokens of a texture or sampler binding.
pub fn kind_tokens(kind: BindingKind, p: &TokenStream) -> TokenStream {
    match kind {
        BindingKind::SampledTexture { sample, dimension } => {
            let sample = match sample {
                SampleType::Float { filterable } => {
                    quote!(#p::SampleType::Float { filterable: #filterable })
                }
                SampleType::Uint => quote!(#p::SampleType::Uint),
                SampleType::Sint => quote!(#p::SampleType::Sint),
            };
            let dim = variant(&dimension, "TextureDimension", p);
            quote!(#p::BindingKind::SampledTexture { sample: #sample, dimension: #dim })
        }
        BindingKind::StorageTexture {
            format,
            access,
            dimension,
        } => {
            let format = variant(&format, "TexelFormat", p);
            let access = match access {
                TextureAccess::Read => quote!(#p::TextureAccess::Read),
                TextureAccess::Write => quote!(#p::TextureAccess::Write),
                TextureAccess::ReadWrite => quote!(#p::TextureAccess::ReadWrite),
            };
            let dim = variant(&dimension, "TextureDimension", p);
            quote!(#p::BindingKind::StorageTexture { format: #format, access: #access, dimension: #dim })
        }
        BindingKind::Sampler { filtering } => {
            quote!(#p::BindingKind::Sampler { filtering: #filtering })
        }
        BindingKind::Uniform => quote!(#p::BindingKind::Uniform),
        BindingKind::ReadOnlyStorage => quote!(#p::BindingKind::ReadOnlyStorage),
        BindingKind::ReadWriteStorage => quote!(#p::BindingKind::ReadWriteStorage),
    }
}

/// `#p::Enum::Variant` for a unit variant of a shared enum.
fn variant(value: &impl std::fmt::Debug, enumeration: &str, p: &TokenStream) -> TokenStream {
    let enumeration = Ident::new(enumeration, Span::call_site());
    let v = variant_ident(value);
    quote!(#p::#enumeration::#v)
}

/// The `texture` field of a `BufferSpec`.
pub fn resource_tokens(decl: Option<&TextureDecl>, width: Extent, p: &TokenStream) -> TokenStream {
    match decl.map(|d| d.resource(width)) {
        None => quote!(::core::option::Option::None),
        Some(TextureResource::Texture(shape)) => {
            let format = variant(&shape.format, "TexelFormat", p);
            let dim = variant(&shape.dimension, "TextureDimension", p);
            let width = extent(shape.width);
            let height = extent(shape.height);
            let depth = extent(shape.depth_or_array_layers);
            quote!(::core::option::Option::Some(#p::TextureResource::Texture(#p::TextureShape {
                format: #format, dimension: #dim, width: #width, height: #height, depth_or_array_layers: #depth
            })))
        }
        Some(TextureResource::Sampler(sampler)) => {
            let filter = variant(&sampler.filter, "Filter", p);
            let address = variant(&sampler.address, "AddressMode", p);
            quote!(::core::option::Option::Some(#p::TextureResource::Sampler(#p::SamplerSpec { filter: #filter, address: #address })))
        }
    }
}

/// The generated docs' line for a texture or sampler.
pub fn doc(b: &BufferOut, class: &str) -> Option<String> {
    Some(match b.texture.as_ref()? {
        TextureDecl::Texture {
            format,
            dim,
            height,
            depth,
        } => {
            let extent = match dim {
                TextureDimension::D1 => format!("{}", Written(b.len)),
                TextureDimension::D2 => format!("{} x {}", Written(b.len), Written(height.extent)),
                TextureDimension::D2Array => format!(
                    "{} x {} x {} layers",
                    Written(b.len),
                    Written(height.extent),
                    Written(depth.extent)
                ),
                TextureDimension::D3 => format!(
                    "{} x {} x {}",
                    Written(b.len),
                    Written(height.extent),
                    Written(depth.extent)
                ),
            };
            format!(
                "`{}` ({class} {}, {}): {extent} texels of `{}`, tightly packed: x fastest, then y, then layer or z",
                b.name,
                dim.keyword(),
                format.name(),
                b.element.display()
            )
        }
        TextureDecl::Sampler(sampler) => format!(
            "`{}` (sampler): {:?} filtering, {:?} addressing",
            b.name, sampler.filter, sampler.address
        ),
    })
}
