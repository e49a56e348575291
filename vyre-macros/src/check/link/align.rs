//! The map from a linked kernel's tokens back to the modules they came
//! from: declaration by declaration ([`align_all`]), then the directives
//! (`enable`, `requires`, `diagnostic`), which the WESL parser keeps
//! without a span. Plain data, like `link.rs`.

use std::collections::HashMap;
use std::ops::Range;

use wesl::syntax::TranslationUnit;

use crate::check::link::names::decl_name;
use crate::model::lex::token_ranges;
use crate::model::link::UnitInfo;

/// Maps every token of the linked text to the token of the module it came
/// from, declaration by declaration.
pub fn align_all(
    text: &str,
    units: &[UnitInfo],
    names: &HashMap<String, (String, String)>,
) -> Vec<(Range<usize>, usize, Range<usize>)> {
    let Ok(linked) = text.parse::<TranslationUnit>() else {
        return Vec::new();
    };
    let parsed: Vec<Option<TranslationUnit>> = units.iter().map(|u| u.text.parse().ok()).collect();
    let root_names: Vec<String> = parsed
        .first()
        .and_then(Option::as_ref)
        .map(|tu| {
            tu.global_declarations
                .iter()
                .filter_map(|d| decl_name(d))
                .collect()
        })
        .unwrap_or_default();
    let mut pieces = Vec::new();
    for decl in &linked.global_declarations {
        let Some(name) = decl_name(decl) else {
            continue;
        };
        let (unit, item) = if root_names.contains(&name) {
            (0, name)
        } else if let Some((path, item)) = names.get(&name) {
            let Some(u) = units.iter().position(|u| u.path == *path) else {
                continue;
            };
            (u, item.clone())
        } else {
            continue;
        };
        let Some(original) = parsed.get(unit).and_then(Option::as_ref).and_then(|tu| {
            tu.global_declarations
                .iter()
                .find(|d| decl_name(d).as_deref() == Some(item.as_str()))
        }) else {
            continue;
        };
        let (Some(unit_text), here, there) = (
            units.get(unit).map(|u| u.text.as_str()),
            decl.span(),
            original.span(),
        ) else {
            continue;
        };
        align(
            text,
            here.start..here.end,
            unit_text,
            there.start..there.end,
            unit,
            &mut pieces,
        );
    }
    align_directives(text, units, &mut pieces);
    pieces.sort_by_key(|p| p.0.start);
    pieces
}

/// Maps each directive of the linked text (`enable`, `requires`,
/// `diagnostic`; the parser keeps no span for them) to the first unused
/// directive of the same tokens in the modules, the kernel first (where
/// it may carry an `@if`).
fn align_directives(
    text: &str,
    units: &[UnitInfo],
    pieces: &mut Vec<(Range<usize>, usize, Range<usize>)>,
) {
    let words = |t: &str, r: &Range<usize>| -> Vec<String> {
        token_ranges(t.get(r.clone()).unwrap_or_default())
            .into_iter()
            .filter_map(|w| t.get(r.start + w.start..r.start + w.end).map(str::to_owned))
            .collect()
    };
    let found: Vec<Vec<Range<usize>>> = units.iter().map(|u| directives(&u.text)).collect();
    let mut used: Vec<(usize, usize)> = Vec::new();
    for here in directives(text) {
        let want = words(text, &here);
        let matched = units.iter().enumerate().find_map(|(u, unit)| {
            let list = found.get(u)?;
            let i = (0..list.len()).find(|&i| {
                !used.contains(&(u, i)) && list.get(i).is_some_and(|r| words(&unit.text, r) == want)
            })?;
            Some((u, i, list.get(i)?.clone(), unit.text.as_str()))
        });
        if let Some((u, i, there, orig)) = matched {
            used.push((u, i));
            align(text, here, orig, there, u, pieces);
        }
    }
}

/// The global directives of `text`, each from its keyword to its `;`.
pub fn directives(text: &str) -> Vec<Range<usize>> {
    let tokens = token_ranges(text);
    let word = |i: usize| tokens.get(i).and_then(|r| text.get(r.clone()));
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(t) = word(i) {
        match t {
            "{" | "(" => depth += 1,
            "}" | ")" => depth = depth.saturating_sub(1),
            "enable" | "requires" | "diagnostic"
                if depth == 0 && i.checked_sub(1).and_then(word) != Some("@") =>
            {
                let end = (i..tokens.len()).find(|&j| word(j) == Some(";"));
                if let (Some(start), Some(end)) = (tokens.get(i), end.and_then(|j| tokens.get(j))) {
                    out.push(start.start..end.end);
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether two tokens correspond: equal text, or both identifiers (names
/// are mangled), or both numbers (literals may be respelled).
fn same(a: &str, b: &str) -> bool {
    let ident = |s: &str| s.starts_with(|c: char| c.is_alphabetic() || c == '_');
    let number = |s: &str| s.starts_with(|c: char| c.is_ascii_digit());
    a == b || (ident(a) && ident(b)) || (number(a) && number(b))
}

/// Aligns the tokens of a linked declaration with those of its original.
fn align(
    text: &str,
    here: Range<usize>,
    orig: &str,
    there: Range<usize>,
    unit: usize,
    pieces: &mut Vec<(Range<usize>, usize, Range<usize>)>,
) {
    let shift = |v: Vec<Range<usize>>, by: usize| -> Vec<Range<usize>> {
        v.into_iter().map(|r| r.start + by..r.end + by).collect()
    };
    let a = shift(
        token_ranges(text.get(here.clone()).unwrap_or_default()),
        here.start,
    );
    let b = shift(
        token_ranges(orig.get(there.clone()).unwrap_or_default()),
        there.start,
    );
    let ta = |i: usize| {
        a.get(i)
            .and_then(|r| text.get(r.clone()))
            .unwrap_or_default()
    };
    let tb = |j: usize| {
        b.get(j)
            .and_then(|r| orig.get(r.clone()))
            .unwrap_or_default()
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() {
        // `a::b::item` in the original is one (mangled) name in the output.
        while j + 2 < b.len() && tb(j + 1) == ":" && tb(j + 2) == ":" && same(tb(j), "x") {
            j += 3;
        }
        if !same(ta(i), tb(j)) {
            // Resynchronise: the next place where three tokens match.
            if let Some(k) = (1..64).find(|k| (0..3).all(|d| same(ta(i + d), tb(j + k + d)))) {
                j += k;
            }
        }
        let target = b
            .get(j)
            .or_else(|| b.last())
            .cloned()
            .unwrap_or(there.start..there.start);
        if let Some(r) = a.get(i) {
            pieces.push((r.clone(), unit, target));
        }
        i += 1;
        if same(ta(i - 1), tb(j)) {
            j += 1;
        }
    }
}
