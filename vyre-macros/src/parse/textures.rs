//! The grammar of texture and sampler declarations:
//!
//! ```text
//! input texture_1d line[n] r32float;              // [width]
//! input texture img[n, 3 * n / 4] rgba8unorm;     // 2D: [width, height] (or `texture_2d`)
//! intermediate texture_2d_array layers[64, 64, n] rgba16float;  // [width, height, layers]
//! output texture_3d volume[32, 32, n] r32float;   // [width, height, depth]
//! sampler lin = linear clamp;                     // nearest|linear, clamp|repeat|mirror
//! ```
//!
//! The dimension word is the sampled WGSL type's name, so a graph texture
//! and the kernel bindings that bind it say the same thing
//! (`texture_2d_array` here, `texture_2d_array<f32>` or
//! `texture_storage_2d_array<..>` in the kernel).

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, Token};

use vyre_analysis::spec::{AddressMode, Filter, SamplerSpec, TexelFormat, TextureDimension};

use super::sizes::{EXTENT_FORMS, parse_extent};
use super::tokens::expect_semi;
use crate::diag::refused::Refused;
use crate::model::texture::format_names;
use crate::model::{BufferClass, BufferDecl, Extent, ExtentExpr, TextureDecl};

/// Whether a texture declaration follows the class keyword: `texture` or
/// a `texture_*` word, then a name (a buffer may still be called
/// `texture`: `input texture[n];`).
pub fn is_texture_decl(input: ParseStream) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|w| {
        let w = w.to_string();
        w == "texture" || w.starts_with("texture_")
    }) && fork.peek(Ident)
}

/// `texture name[width, ...] format;` (or `texture_1d`, `texture_2d`,
/// `texture_2d_array`, `texture_3d`) after the class keyword.
pub fn parse_texture(
    input: ParseStream,
    class: BufferClass,
    keyword: &Ident,
) -> syn::Result<BufferDecl> {
    let word: Ident = input.parse()?;
    let dim = dimension(&word)?;
    if class == BufferClass::Uniform {
        return Err(syn::Error::new(
            word.span(),
            "a texture cannot be `uniform`: declare it `input`, `inout`, `intermediate` or `output`",
        ));
    }
    let name: Ident = input.parse().map_err(|_| {
        input.error(format!(
            "expected the texture's name after `{keyword} {word}`"
        ))
    })?;
    let form = format!(
        "`{keyword} {word} {name}{} rgba8unorm;`",
        dim.extent_words()
    );
    if !input.peek(syn::token::Bracket) {
        return Err(input.error(format!(
            "expected the texture's size: {form} ({EXTENT_FORMS})"
        )));
    }
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut sides: Vec<ExtentExpr> = Vec::new();
    while !content.is_empty() {
        if !sides.is_empty() {
            content.parse::<Token![,]>().map_err(|_| {
                content.error(format!(
                    "unexpected token in the texture's size: {EXTENT_FORMS}"
                ))
            })?;
        }
        sides.push(parse_extent(&content)?);
    }
    if sides.len() != dim.sides().len() {
        return Err(syn::Error::new(
            bracket.span.join(),
            format!(
                "a `{word}` has {} {}, {}; this one has {}: write {form}{}",
                dim.sides().len(),
                if dim.sides().len() == 1 {
                    "side"
                } else {
                    "sides"
                },
                dim.extent_words(),
                sides.len(),
                other_dimension(sides.len())
            ),
        ));
    }
    let format = parse_format(input)?;
    expect_semi(input, "after the texture declaration")?;
    let one = |span: Span| ExtentExpr {
        extent: Extent::constant(1),
        span,
    };
    let mut sides = sides.into_iter();
    let width = sides.next().unwrap_or_else(|| one(name.span()));
    let height = sides.next().unwrap_or_else(|| one(name.span()));
    let depth = sides.next().unwrap_or_else(|| one(name.span()));
    Ok(BufferDecl {
        class,
        name,
        len: width,
        texture: Some(TextureDecl::Texture {
            format,
            dim,
            height,
            depth,
        }),
        append: None,
    })
}

/// The dimension a declaration word names, or why it names none.
fn dimension(word: &Ident) -> syn::Result<TextureDimension> {
    let text = word.to_string();
    if let Some(dim) = TextureDimension::by_keyword(&text) {
        return Ok(dim);
    }
    let message = match Refused::by_keyword(&text) {
        Some(refused) => format!("`{text}`: a graph texture cannot be {}", refused.why()),
        None if text.starts_with("texture_storage") => format!(
            "`{text}` is a kernel binding's type, not a graph texture's: declare the texture by its dimension (`{}`); each kernel decides whether it samples or stores it",
            text.replace("texture_storage", "texture")
        ),
        None => format!(
            "unknown texture kind `{text}`{}; graph textures are `texture_1d`, `texture` (or `texture_2d`), `texture_2d_array` and `texture_3d`",
            crate::diag::suggest::did_you_mean(
                &text,
                TextureDimension::ALL.iter().map(|d| d.keyword())
            )
        ),
    };
    Err(syn::Error::new(word.span(), message))
}

/// A hint naming the dimension that has `count` sides.
fn other_dimension(count: usize) -> &'static str {
    match count {
        1 => " (a texture of one side is a `texture_1d`)",
        2 => " (a texture of two sides is a `texture`, or `texture_2d`)",
        3 => " (a texture of three sides is a `texture_2d_array` of layers or a `texture_3d`)",
        _ => "",
    }
}

/// The texel format after the size.
fn parse_format(input: ParseStream) -> syn::Result<TexelFormat> {
    let format: Ident = input.parse().map_err(|_| {
        input.error(format!(
            "expected the texture's format after its size: one of {}",
            format_names()
        ))
    })?;
    let text = format.to_string();
    if let Some(parsed) = TexelFormat::by_name(&text) {
        return Ok(parsed);
    }
    let message = match (Refused::by_format(&text), text.as_str()) {
        (Some(refused), _) => format!("`{text}`: a graph texture cannot be {}", refused.why()),
        (None, "r64uint") => "`r64uint` textures need 64-bit texture atomics (wgpu's TEXTURE_INT64_ATOMIC), which graph! does not request\nhelp: use `rg32uint` and keep the two 32-bit halves in x and y".to_owned(),
        (None, _) => format!(
            "unknown texture format `{text}`{}\nnote: graph textures are {}",
            crate::diag::suggest::did_you_mean(&text, TexelFormat::ALL.iter().map(|f| f.name())),
            format_names()
        ),
    };
    Err(syn::Error::new(format.span(), message))
}

/// `sampler name = filter address;`.
pub fn parse_sampler(input: ParseStream) -> syn::Result<BufferDecl> {
    const FORM: &str = "a sampler is `sampler name = nearest|linear clamp|repeat|mirror;`";
    let name: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected the sampler's name: {FORM}")))?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!("expected `=` after `sampler {name}`: {FORM}")));
    }
    input.parse::<Token![=]>()?;
    let filter: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected `nearest` or `linear`: {FORM}")))?;
    let filter = match filter.to_string().as_str() {
        "nearest" => Filter::Nearest,
        "linear" => Filter::Linear,
        _ => {
            return Err(syn::Error::new(
                filter.span(),
                format!("unknown filter `{filter}`: {FORM}"),
            ));
        }
    };
    let address: Ident = input
        .parse()
        .map_err(|_| input.error(format!("expected `clamp`, `repeat` or `mirror`: {FORM}")))?;
    let address = match address.to_string().as_str() {
        "clamp" => AddressMode::Clamp,
        "repeat" => AddressMode::Repeat,
        "mirror" => AddressMode::Mirror,
        _ => {
            return Err(syn::Error::new(
                address.span(),
                format!("unknown address mode `{address}`: {FORM}"),
            ));
        }
    };
    expect_semi(input, "after the sampler declaration")?;
    Ok(BufferDecl {
        class: BufferClass::Input,
        len: ExtentExpr {
            extent: Extent::constant(1),
            span: name.span(),
        },
        name,
        texture: Some(TextureDecl::Sampler(SamplerSpec { filter, address })),
        append: None,
    })
}
