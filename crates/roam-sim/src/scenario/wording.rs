//! One wording for every scenario error: `unknown field; did you mean `sack`? (expected one of:
//! …)`, `missing (found `protocl`: did you mean `protocol`?)`, `expected an integer in
//! 0..=65535, got -3`. The engines' option tables (`[flow.tcp]`, `[flow.rcp]`) are read by serde,
//! whose messages name Rust types (`expected u16`) and quote differently; [`serde_message`]
//! rewrites them into this wording.

/// Optimal-string-alignment distance (Levenshtein with adjacent transpositions) between `a` and
/// `b`, counted in characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: distance between a[..i] and b[..j].
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely misspelling: at most
/// a third of `word`'s length in edits (at least one). Words under three letters get no
/// suggestion (`l9` is as likely a new name as a misspelt `l0`). Ties go to the first
/// candidate.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = word.chars().count();
    let limit = (len / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(word, c);
        if len < 3 || d == 0 || d > limit {
            continue;
        }
        match best {
            Some((bd, _)) if bd <= d => {}
            _ => best = Some((d, c)),
        }
    }
    best.map(|(_, c)| c)
}

/// `unknown field` with the likeliest intended key and the known ones (sorted).
pub(crate) fn unknown_field(key: &str, known: &[&str]) -> String {
    let mut known: Vec<&str> = known.to_vec();
    known.sort_unstable();
    known.dedup();
    let hint = closest(key, known.iter().copied())
        .map(|k| format!("; did you mean `{k}`?"))
        .unwrap_or_default();
    if known.is_empty() {
        format!("unknown field{hint}")
    } else {
        format!(
            "unknown field{hint} (expected one of: {})",
            known.join(", ")
        )
    }
}

/// `missing`, with the given key most likely meant for it when there is one.
pub(crate) fn missing<'a>(key: &str, given: impl IntoIterator<Item = &'a str>) -> String {
    let given: Vec<&str> = given.into_iter().collect();
    // Which given key is a misspelling of `key`: the closest one within the same limits.
    let meant = given
        .iter()
        .copied()
        .filter(|g| closest(g, [key]).is_some())
        .min_by_key(|g| distance(g, key));
    match meant {
        Some(g) => format!("missing (found `{g}`: did you mean `{key}`?)"),
        None => "missing".to_owned(),
    }
}

/// The integer range a serde primitive type name stands for.
fn integer_range(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "u8" => "0..=255",
        "u16" => "0..=65535",
        "u32" => "0..=4294967295",
        "u64" | "usize" => "0..=18446744073709551615",
        "i8" => "-128..=127",
        "i16" => "-32768..=32767",
        "i32" => "-2147483648..=2147483647",
        "i64" | "isize" => "-9223372036854775808..=9223372036854775807",
        _ => return None,
    })
}

/// What serde expected, in our words.
fn expected(ty: &str) -> String {
    if let Some(range) = integer_range(ty) {
        return format!("an integer in {range}");
    }
    match ty {
        "f32" | "f64" => "a number".to_owned(),
        "a boolean" | "bool" => "true or false".to_owned(),
        "a string" | "string" | "a borrowed string" => "a string".to_owned(),
        other => other.to_owned(),
    }
}

/// What serde got, in our words: the value for numbers and booleans, the kind otherwise.
fn got(unexpected: &str) -> String {
    let backticked = |prefix: &str| {
        unexpected
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`'))
            .and_then(|rest| rest.strip_suffix('`'))
            .map(str::to_owned)
    };
    if let Some(v) = backticked("integer ")
        .or_else(|| backticked("unsigned integer "))
        .or_else(|| backticked("floating point "))
        .or_else(|| backticked("boolean "))
    {
        return v;
    }
    if let Some(s) = unexpected.strip_prefix("string ") {
        return s.to_owned();
    }
    match unexpected {
        "sequence" => "an array".to_owned(),
        "map" => "a table".to_owned(),
        other => other.to_owned(),
    }
}

/// `` `a`, `b` or `c` `` (serde's list of names) as the names without backticks.
fn names(list: &str) -> Vec<&str> {
    list.split(['`', ','])
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "or")
        .flat_map(|s| s.split(" or "))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Rewrites a serde (toml) deserialisation message about one field into the scenario wording;
/// a message of another shape is returned trimmed, on one line.
pub(crate) fn serde_message(msg: &str) -> String {
    let msg = msg.trim().replace('\n', " ");
    // toml appends the key the value was read for: "…, expected u16 in `mss`".
    let msg = match msg.rfind(" in `") {
        Some(i) if msg.ends_with('`') => msg[..i].to_owned(),
        _ => msg,
    };
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((key, tail)) = rest.split_once('`') {
            let known = tail
                .strip_prefix(", expected one of ")
                .or_else(|| tail.strip_prefix(", expected "))
                .map(names)
                .unwrap_or_default();
            return unknown_field(key, &known);
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((value, tail)) = rest.split_once('`') {
            let options: Vec<String> = tail
                .strip_prefix(", expected one of ")
                .or_else(|| tail.strip_prefix(", expected "))
                .map(names)
                .unwrap_or_default()
                .iter()
                .map(|o| format!("{o:?}"))
                .collect();
            let list = match options.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => "a known name".to_owned(),
            };
            return format!("expected {list}, got {value:?}");
        }
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = msg.strip_prefix(prefix) {
            if let Some((unexpected, ty)) = rest.rsplit_once(", expected ") {
                return format!("expected {}, got {}", expected(ty), got(unexpected));
            }
        }
    }
    if let Some(key) = msg
        .strip_prefix("missing field `")
        .and_then(|k| k.strip_suffix('`'))
    {
        return format!("{key}: missing");
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_misspellings_are_suggested_far_ones_are_not() {
        let keys = ["mss", "sack", "seed", "protocol", "a", "b"];
        assert_eq!(closest("sak", keys), Some("sack"));
        assert_eq!(
            closest("sede", keys),
            Some("seed"),
            "a transposition is one edit"
        );
        assert_eq!(closest("protocl", keys), Some("protocol"));
        assert_eq!(
            closest("c", keys),
            None,
            "one letter is not a misspelling of another"
        );
        assert_eq!(closest("bandwidth", keys), None);
        assert_eq!(
            closest("sack", keys),
            None,
            "an exact key is not a suggestion"
        );
    }

    #[test]
    fn unknown_and_missing_fields_name_the_likely_key() {
        assert_eq!(
            unknown_field("sak", &["sack", "mss"]),
            "unknown field; did you mean `sack`? (expected one of: mss, sack)"
        );
        assert_eq!(
            unknown_field("zzz", &["sack"]),
            "unknown field (expected one of: sack)"
        );
        assert_eq!(
            missing("protocol", ["id", "protocl", "from"]),
            "missing (found `protocl`: did you mean `protocol`?)"
        );
        assert_eq!(missing("protocol", ["id"]), "missing");
    }

    #[test]
    fn serde_messages_are_reworded_without_rust_types() {
        assert_eq!(
            serde_message("unknown field `sak`, expected one of `mss`, `sack`, `eln`"),
            "unknown field; did you mean `sack`? (expected one of: eln, mss, sack)"
        );
        assert_eq!(
            serde_message("invalid value: integer `-3`, expected u16 in `mss`"),
            "expected an integer in 0..=65535, got -3"
        );
        assert_eq!(
            serde_message("invalid type: string \"x\", expected u16 in `mss`\n"),
            "expected an integer in 0..=65535, got \"x\""
        );
        assert_eq!(
            serde_message("invalid type: string \"yes\", expected a boolean"),
            "expected true or false, got \"yes\""
        );
        assert_eq!(
            serde_message("invalid type: floating point `1.5`, expected u32"),
            "expected an integer in 0..=4294967295, got 1.5"
        );
        assert_eq!(
            serde_message("unknown variant `fast`, expected `standard` or `probing`"),
            "expected \"standard\" or \"probing\", got \"fast\""
        );
        assert_eq!(serde_message("something else\n"), "something else");
    }
}
