//! The LIKE operator's patterns.

use regex::Regex;

use super::ExprError;

/// The regular expression of a SQL LIKE pattern (`%` any text, `_` one character).
pub fn like_regex(pattern: &str) -> Result<Regex, ExprError> {
    let mut re = String::from("(?s)^");
    for c in pattern.chars() {
        match c {
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
