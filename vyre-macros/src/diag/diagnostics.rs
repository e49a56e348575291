//! Accumulated diagnostics, and errors that cover a range of tokens.
//!
//! Every stage reports into one [`Diagnostics`] instead of stopping at the
//! first mistake, so one build shows every error of a `graph!` invocation.
//! Each error is a [`syn::Error`] at the best span available. A *note* (the
//! first of two conflicting sites, say) lives inside its error, as a
//! `note: ... (file:line:col)` line under the headline: a proc macro on
//! stable Rust cannot attach a real note, and a second `compile_error!`
//! would count as a second error.

use proc_macro2::{Span, TokenStream, TokenTree};

use crate::model::source::span_file;

/// Every error of one invocation, in the order found.
#[derive(Default)]
pub struct Diagnostics {
    errors: Vec<syn::Error>,
}

impl Diagnostics {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error (which may itself hold several).
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records an error at `span` plus a note at `note_span`.
    pub fn error_with_note(
        &mut self,
        span: Span,
        message: impl std::fmt::Display,
        note_span: Span,
        note: impl std::fmt::Display,
    ) {
        self.push(syn::Error::new(
            span,
            format!("{message}\n{}", note_line(note, note_span)),
        ));
    }

    /// Moves every error of `other` into `self`.
    pub fn extend(&mut self, other: Diagnostics) {
        self.errors.extend(other.errors);
    }

    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// How many errors (counting every combined message).
    pub fn len(&self) -> usize {
        self.errors
            .iter()
            .map(|e| e.clone().into_iter().count())
            .sum()
    }

    /// Every message, for tests and the fallback path.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.errors
            .iter()
            .flat_map(|e| e.clone().into_iter().map(|m| m.to_string()))
            .collect()
    }

    /// One `compile_error!` per message.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

/// `note: {note} (file:line:col)`, the place when the span has one.
pub fn note_line(note: impl std::fmt::Display, span: Span) -> String {
    match span_file(span) {
        Some(file) => {
            let start = span.start();
            format!(
                "note: {note} ({file}:{}:{})",
                start.line,
                start.column.saturating_add(1)
            )
        }
        None => format!("note: {note}"),
    }
}

/// An error spanning from `first` to `last` (on stable Rust a
/// `compile_error!` whose tokens start at one span and end at the other
/// covers the range between them).
pub fn spanned(first: Span, last: Span, message: impl std::fmt::Display) -> syn::Error {
    let tokens: TokenStream = [
        TokenTree::Ident(proc_macro2::Ident::new("first", first)),
        TokenTree::Ident(proc_macro2::Ident::new("last", last)),
    ]
    .into_iter()
    .collect();
    syn::Error::new_spanned(tokens, message)
}

/// `a`, `a` and `b`, `a`, `b` and `c`: a readable list of back-quoted names.
pub fn list<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: std::fmt::Display,
{
    list_raw(items.into_iter().map(|s| format!("`{s}`")))
}

/// a, a and b, a, b and c: a readable list, without adding quotes.
pub fn list_raw<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: std::fmt::Display,
{
    let items: Vec<String> = items.into_iter().map(|s| s.to_string()).collect();
    match items.as_slice() {
        [] => "none".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_well() {
        assert_eq!(list(Vec::<String>::new()), "none");
        assert_eq!(list(["a"]), "`a`");
        assert_eq!(list(["a", "b"]), "`a` and `b`");
        assert_eq!(list(["a", "b", "c"]), "`a`, `b` and `c`");
    }

    #[test]
    fn accumulates_and_counts_notes() {
        let mut d = Diagnostics::new();
        assert!(d.is_empty());
        d.error(Span::call_site(), "one");
        d.error_with_note(Span::call_site(), "two", Span::call_site(), "first");
        assert_eq!(d.len(), 2);
        assert_eq!(d.messages(), ["one", "two\nnote: first"]);
        let tokens = d.to_compile_errors().to_string();
        assert_eq!(tokens.matches("compile_error").count(), 2);
    }
}
