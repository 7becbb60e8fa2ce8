//! YAML (or JSON) text to a JSON value, read as `kwctl` reads settings: YAML 1.2's scalars, with
//! serde-saphyr (serde_yaml 0.9, which `kwctl` uses, is archived upstream).
//!
//! serde-saphyr infers YAML 1.1's booleans (`yes`, `on`) and reads `010` and `1_000` as numbers by
//! default; serde_yaml keeps them strings, so these options do too: a setting or a GitHub owner named
//! `on` stays the string it is under `kwctl`.

use serde_json::Value;

/// The value of one YAML document; empty text or a document of comments only is `null`.
///
/// # Errors
/// Not YAML, or more than one document: the parser's message on one line, with its line and column and
/// the line it points at quoted (`unclosed bracket '[' at line 1, column 4: `a: [``).
pub fn value(text: &str) -> Result<Value, String> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    };
    serde_saphyr::from_str_with_options(text, options).map_err(|e| message(&e, text))
}

fn message(e: &serde_saphyr::Error, text: &str) -> String {
    // The user-facing wording (the default one advises on the parser's options and API calls), on one
    // line: the snippet would quote the line over several.
    let message = e.render_with_options(serde_saphyr::render_options! {
        formatter: &serde_saphyr::UserMessageFormatter,
        snippets: serde_saphyr::SnippetMode::Off,
    });
    let line = e
        .location()
        .and_then(|at| usize::try_from(at.line()).ok()?.checked_sub(1))
        .and_then(|i| text.lines().nth(i))
        .map(str::trim)
        .filter(|l| !l.is_empty());
    match line {
        Some(line) => format!("{message}: `{line}`"),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_are_read_as_serde_yaml_reads_them() {
        let text = "a: yes\nb: on\nc: 010\nd: 1_000\ne: true\nf: 8\ng: 1.5\nh: ~\ni: '1'\n";
        assert_eq!(
            value(text).unwrap(),
            json!({"a": "yes", "b": "on", "c": "010", "d": "1_000", "e": true, "f": 8, "g": 1.5,
                "h": null, "i": "1"})
        );
    }

    #[test]
    fn empty_text_and_comments_are_null_and_json_is_yaml() {
        assert_eq!(value("").unwrap(), Value::Null);
        assert_eq!(value("# nothing\n").unwrap(), Value::Null);
        assert_eq!(value(r#"{"a": [1, "b"]}"#).unwrap(), json!({"a": [1, "b"]}));
    }

    #[test]
    fn an_error_names_the_line_and_the_column_and_quotes_the_line() {
        let e = value("a: 1\nb: [\n").unwrap_err();
        assert_eq!(e, "unclosed bracket '[' at line 2, column 4: `b: [`");
        // The user's wording: no advice on the parser's options or its API calls.
        assert_eq!(
            value("a: 1\na: 2\n").unwrap_err(),
            "duplicate mapping key `a` is not allowed here at line 2, column 1: `a: 2`"
        );
        assert_eq!(
            value("a: 1\n---\nb: 2\n").unwrap_err(),
            "only single YAML document expected but multiple found at line 3, column 1: `b: 2`"
        );
    }
}
