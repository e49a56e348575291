//! "Did you mean": the closest known name to a misspelt one.

/// Edit distance between `a` and `b` (insertions, deletions,
/// substitutions and swaps of two neighbours each cost 1), compared
/// case-insensitively.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    // Three rows of the dynamic programme: i-2, i-1, i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let del = previous.get(j + 1).copied().unwrap_or(usize::MAX) + 1;
            let ins = current.get(j).copied().unwrap_or(usize::MAX) + 1;
            let sub = previous.get(j).copied().unwrap_or(usize::MAX) + cost;
            let mut best = del.min(ins).min(sub);
            if i > 0
                && j > 0
                && a.get(i - 1) == Some(&cb)
                && b.get(j - 1) == Some(&ca)
                && let Some(&swap) = before.get(j - 1)
            {
                best = best.min(swap + 1);
            }
            if let Some(slot) = current.get_mut(j + 1) {
                *slot = best;
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous.get(b.len()).copied().unwrap_or(usize::MAX)
}

/// The candidate closest to `wanted`, if it is close enough to be a likely
/// misspelling (at most one edit in three characters, at least one).
pub fn closest<'a, I>(wanted: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (wanted.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != wanted)
        .map(|c| (distance(wanted, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `; did you mean `copy`?` when a candidate is close, else nothing: to
/// append to an "unknown name" message.
pub fn did_you_mean<'a, I>(wanted: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(wanted, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// `unknown buffer `xs`; did you mean `x`?` with the full list as a
/// note, or `unknown buffer `q`; the buffers are ...` when nothing is close.
pub fn unknown(what: &str, wanted: &str, known: &[String]) -> String {
    let all = crate::diag::list(known);
    match closest(wanted, known.iter().map(String::as_str)) {
        Some(c) => {
            format!("unknown {what} `{wanted}`; did you mean `{c}`?\nnote: the {what}s are {all}")
        }
        None => format!("unknown {what} `{wanted}`; the {what}s are {all}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("copy", "copy"), 0);
        assert_eq!(distance("cpy", "copy"), 1);
        assert_eq!(distance("cpoy", "copy"), 1);
        assert_eq!(distance("Copy", "copy"), 0);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("xs", ["x", "params", "y"]), Some("x"));
        assert_eq!(closest("cpy", ["copy", "add"]), Some("copy"));
        assert_eq!(closest("zzzz", ["copy", "add"]), None);
        assert_eq!(did_you_mean("dts", ["src", "dst"]), "; did you mean `dst`?");
        assert_eq!(did_you_mean("q", Vec::<&str>::new()), "");
    }
}
