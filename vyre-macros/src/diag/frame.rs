//! Code frames for kernels rustc cannot point inside (string literals and
//! files): the user's real line, numbered, with the culprit underlined.

use crate::diag::naga_errors::Label;
use crate::model::LoadedKernel;

/// A code frame of `label` in the kernel's text, numbered with the user's
/// real lines:
///
/// ```text
///    ┌─ src/lib.rs:13:22
///    │
/// 13 │     let x: u32 = 1.5;
///    │                  ^^^ this is `AbstractFloat`
/// ```
pub fn frame(loaded: &LoadedKernel, label: &Label) -> Vec<String> {
    let source = loaded.source.as_str();
    let start = label.range.start.min(source.len());
    let line_start = source
        .get(..start)
        .and_then(|b| b.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line_end = source
        .get(start..)
        .and_then(|a| a.find('\n'))
        .map_or(source.len(), |i| start + i);
    let text = source.get(line_start..line_end).unwrap_or_default();
    let place = loaded.locate(start).place;
    // The real line number: `file:LINE:col`.
    let number = place
        .as_deref()
        .and_then(|p| p.rsplit(':').nth(1))
        .unwrap_or("")
        .to_owned();
    let pad = " ".repeat(number.len());
    let col = source
        .get(line_start..start)
        .map_or(0, |b| b.chars().count());
    let end = label.range.end.min(line_end).max(start);
    let width = source
        .get(start..end)
        .map_or(0, |b| b.chars().count())
        .max(1);
    // codespan's box drawing (naga's own style), so the frame is not
    // mistaken for rustc's frame of the literal or path under it.
    let mut out = Vec::new();
    if let Some(place) = place {
        out.push(format!("{pad} ┌─ {place}"));
    }
    out.push(format!("{pad} │"));
    out.push(format!("{number} │ {}", text.trim_end()));
    let marks = format!(
        "{pad} │ {}{} {}",
        " ".repeat(col),
        "^".repeat(width),
        label.text
    );
    out.push(marks.trim_end().to_owned());
    out
}
