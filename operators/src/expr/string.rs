//! The LIKE operator's patterns.

use regex::Regex;

use super::ExprError;

/// The regular expression of a SQL LIKE pattern (`%` any text, `_` one character).
pub fn like_regex(pattern: &str) -> Result<Regex, ExprError> {
    like_regex_escaped(pattern, None)
}

/// [`like_regex`] with an escape character: `escape` before `%`, `_` or itself stands for
/// that character; before anything else it is an error, as in Calcite.
pub fn like_regex_escaped(pattern: &str, escape: Option<char>) -> Result<Regex, ExprError> {
    let mut re = String::from("(?s)^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            e if Some(e) == escape => match chars.next() {
                Some(next @ ('%' | '_')) => re.push_str(&regex::escape(&next.to_string())),
                Some(next) if Some(next) == escape => re.push_str(&regex::escape(&next.to_string())),
                _ => return Err(ExprError(format!("Invalid escape sequence '{pattern}', {}", pattern.len()))),
            },
            '%' => re.push_str(".*"),
            '_' => re.push('.'),
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re).map_err(|e| ExprError(format!("Invalid LIKE pattern '{pattern}': {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_any_text_or_one_character() {
        assert!(like_regex("%an%").unwrap().is_match("Bandung"));
        assert!(!like_regex("a_").unwrap().is_match("abc"));
        assert!(like_regex("a.%").unwrap().is_match("a.b"));
        assert!(!like_regex("a.%").unwrap().is_match("ab"));
    }
}
