//! Fusion: which groups form, that every fused module validates, and that
//! fusion never causes an error.

use super::*;

/// The member lists of every fused group in an expansion.
pub fn groups(expansion: &str) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut rest = expansion;
    while let Some(at) = rest.find("FusedGroup {") {
        rest = &rest[at..];
        let open = rest.find('[').expect("members");
        let close = rest.find(']').expect("members");
        let members = rest[open + 1..close]
            .split(',')
            .filter_map(|s| s.trim().trim_end_matches("usize").trim().parse().ok())
            .collect();
        out.push(members);
        rest = &rest[close..];
    }
    out
}

#[test]
fn saxpy_chain_fuses() {
    let out = assert_ok(&saxpy(SAXPY_NODES));
    assert_eq!(groups(&out), vec![vec![0, 1]], "{out}");
}

/// Every fused kernel's WGSL in an expansion.
pub fn fused_sources(ts: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for t in ts.clone() {
        match t {
            TokenTree::Literal(l) => {
                if let Ok(s) = syn::parse_str::<syn::LitStr>(&l.to_string())
                    && s.value().starts_with("// Fused by graph!")
                {
                    out.push(s.value());
                }
            }
            TokenTree::Group(g) => out.extend(fused_sources(&g.stream())),
            _ => {}
        }
    }
    out
}

#[test]
fn print_saxpy() {
    let ts = expand(&saxpy(SAXPY_NODES));
    for s in fused_sources(&ts) {
        println!("{s}");
    }
}
