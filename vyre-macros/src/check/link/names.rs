//! The name of a WESL declaration ([`decl_name`]): what linking
//! (`link.rs`) and its map back (`align.rs`) share. Plain data.

use wesl::syntax::GlobalDeclaration;

/// The name a global declaration declares, if it has one.
pub fn decl_name(decl: &GlobalDeclaration) -> Option<String> {
    match decl {
        GlobalDeclaration::Declaration(d) => Some(d.ident.to_string()),
        GlobalDeclaration::TypeAlias(d) => Some(d.ident.to_string()),
        GlobalDeclaration::Struct(d) => Some(d.ident.to_string()),
        GlobalDeclaration::Function(d) => Some(d.ident.to_string()),
        _ => None,
    }
}
