//! Graphviz DOT rendering of an analysed graph.

use core::fmt::Write as _;

use crate::Analysis;
use crate::model::Use;
use crate::problem::normalise_node;

/// Escapes `text` for use inside a double-quoted DOT string: quotes and
/// backslashes get a backslash, line breaks become `\n`, other control
/// characters become spaces.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Name of buffer `buffer`: `names[buffer]`, or `buffer {buffer}` when missing.
fn buffer_name(names: &[&str], buffer: usize) -> String {
    names
        .get(buffer)
        .map_or_else(|| format!("buffer {buffer}"), |name| (*name).to_owned())
}

/// See [`Analysis::to_dot`].
pub(crate) fn to_dot<N: AsRef<[Use]>>(
    analysis: &Analysis,
    graph_name: &str,
    node_labels: &[&str],
    buffer_names: &[&str],
    nodes: &[N],
) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail, so the results of `writeln!` are ignored.
    let _ = writeln!(out, "digraph \"{}\" {{", escape(graph_name));
    for (node, level) in analysis.levels.iter().enumerate() {
        let label = node_labels
            .get(node)
            .map_or_else(|| format!("node {node}"), |label| (*label).to_owned());
        let _ = writeln!(
            out,
            "    n{node} [shape=box, label=\"{}\\nlevel {level}\"];",
            escape(&label)
        );
    }
    for (buffer, range) in analysis.live_ranges.iter().enumerate() {
        if range.is_some() {
            let _ = writeln!(
                out,
                "    b{buffer} [shape=ellipse, label=\"{}\"];",
                escape(&buffer_name(buffer_names, buffer))
            );
        }
    }
    let buffer_count = analysis.live_ranges.len();
    for (node, uses) in nodes.iter().take(analysis.levels.len()).enumerate() {
        let mut ignored = Vec::new();
        for u in normalise_node(buffer_count, node, uses.as_ref(), &mut ignored) {
            if !matches!(analysis.live_ranges.get(u.buffer), Some(Some(_))) {
                continue;
            }
            if u.access.reads() {
                let _ = writeln!(out, "    b{} -> n{node};", u.buffer);
            }
            if u.access.writes() {
                let _ = writeln!(out, "    n{node} -> b{};", u.buffer);
            }
        }
    }
    for edge in &analysis.edges {
        let _ = writeln!(
            out,
            "    n{} -> n{} [style=dashed, label=\"{} {}\"];",
            edge.from,
            edge.to,
            escape(&buffer_name(buffer_names, edge.buffer)),
            edge.hazard.short_name()
        );
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_quotes_backslashes_and_control_characters() {
        assert_eq!(escape(r#"a "b" \c"#), r#"a \"b\" \\c"#);
        assert_eq!(escape("x\ny\tz"), "x\\ny z");
    }
}
