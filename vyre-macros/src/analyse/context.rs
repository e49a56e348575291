//! What every check of stage 4 shares: the graph's declarations and
//! kernels with their name indices ([`Ctx`]), the binding that gave a
//! buffer its element type ([`TypeSite`]), where a node uses a buffer
//! ([`UseSite`]), and how messages name buffer classes.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::Ident;
use vyre_analysis::{Access, BufferClass};

use super::textures::Declared;
use crate::model::{
    BindingKind, BufferDecl, BufferRef, KernelDecl, KernelInterface, ReflectedBinding, RustTy,
};

/// The graph's declarations and its kernels' interfaces, with their name
/// indices.
pub struct Ctx<'a> {
    /// Kernel declarations in order.
    pub kernel_decls: &'a [KernelDecl],
    /// Each kernel's interface; `None` when stage 2 failed for it.
    pub kernels: &'a [Option<KernelInterface>],
    /// Kernel index by name.
    pub kernel_index: &'a HashMap<String, usize>,
    /// Buffer declarations in order.
    pub buffer_decls: &'a [BufferDecl],
    /// Buffer index by name.
    pub buffer_index: &'a HashMap<String, usize>,
    /// `limits native;`.
    pub native: bool,
    /// The declared features textures may need.
    pub textures: &'a Declared,
}

impl Ctx<'_> {
    /// The interface of kernel `i`, when it has one.
    pub fn kernel(&self, i: usize) -> Option<&KernelInterface> {
        self.kernels.get(i).and_then(Option::as_ref)
    }
}

/// The first binding that gave a buffer its element type.
pub struct TypeSite {
    /// The kernel's name.
    pub kernel: String,
    /// The binding's name.
    pub binding: String,
    /// The binding's WGSL type.
    pub wgsl_type: String,
    /// The element's Rust type.
    pub element: RustTy,
    /// Bytes per element.
    pub element_size: u32,
    /// A headed binding's header struct.
    pub header: Option<RustTy>,
    /// Bytes before the first element.
    pub header_bytes: u32,
    /// A headed binding's first member: its name and WGSL type.
    pub first_member: Option<(String, String)>,
    /// Where the node names the buffer.
    pub span: Span,
}

/// One node use of a buffer, for hazard messages.
pub struct UseSite {
    /// Where the node names the buffer.
    pub span: Span,
    /// The binding (or `count(b)`, `until empty(b)`).
    pub binding: String,
    /// How it is bound.
    pub kind: BindingKind,
    /// Its WGSL type.
    pub wgsl_type: String,
}

/// The buffer `target` names in iteration `var` of a `repeat` (or outside
/// one): `ping(a, b)` is `a` on even iterations, `pong(a, b)` the
/// opposite; outside a `repeat` either is an error. Also where to point at
/// the use (the name, or the `ping`/`pong` keyword).
pub fn alternate<'t>(
    target: &'t BufferRef,
    var: Option<(&Ident, u64)>,
) -> Result<(&'t Ident, Span), syn::Error> {
    match target {
        BufferRef::Name(n) => Ok((n, n.span())),
        BufferRef::Alternate {
            keyword,
            pong,
            a,
            b,
        } => match var {
            Some((_, i)) => Ok((if (i % 2 == 0) != *pong { a } else { b }, keyword.span())),
            None => Err(syn::Error::new(
                keyword.span(),
                format!(
                    "`{keyword}(a, b)` alternates between iterations of a `repeat`; outside one, name the buffer directly"
                ),
            )),
        },
    }
}

/// Per buffer a node binds: its accesses together, and each binding it goes
/// through (name, kind).
pub type BufferUses = HashMap<usize, (Access, Vec<(String, BindingKind)>)>;

/// A node's use of buffer `bi` through `binding`: the union of its accesses
/// and the bindings it goes through, and the first place it does so (for
/// messages).
pub fn record_use(
    by_buffer: &mut BufferUses,
    node_sites: &mut HashMap<usize, UseSite>,
    bi: usize,
    binding: &ReflectedBinding,
    access: Access,
    span: Span,
) {
    let entry = by_buffer.entry(bi).or_insert((access, Vec::new()));
    entry.0 = entry.0.union(access);
    entry.1.push((binding.name.clone(), binding.kind));
    node_sites.entry(bi).or_insert(UseSite {
        span,
        binding: binding.name.clone(),
        kind: binding.kind,
        wgsl_type: binding.wgsl_type.clone(),
    });
}

/// The keyword that declares a buffer of `class`.
pub fn class_keyword(class: BufferClass) -> &'static str {
    match class {
        BufferClass::Input => "input",
        BufferClass::InOut => "inout",
        BufferClass::Output => "output",
        BufferClass::Intermediate => "intermediate",
        BufferClass::Uniform => "uniform",
    }
}

/// `an `input``, ...: a buffer of `class`, for messages.
pub fn class_article(class: BufferClass) -> &'static str {
    match class {
        BufferClass::Input => "an `input`",
        BufferClass::InOut => "an `inout`",
        BufferClass::Output => "an `output`",
        BufferClass::Intermediate => "an `intermediate`",
        BufferClass::Uniform => "a `uniform`",
    }
}
