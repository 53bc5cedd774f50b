//! String functions with Flink's semantics.

use regex::Regex;

use super::{ExprError, TrimSide};

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

/// INITCAP: the first letter of each alphanumeric word upper case, the rest lower case.
pub(super) fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start_of_word = true;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if start_of_word {
                out.extend(c.to_uppercase());
            } else {
                out.extend(c.to_lowercase());
            }
            start_of_word = false;
        } else {
            out.push(c);
            start_of_word = true;
        }
    }
    out
}

/// SUBSTRING with a 1-based start; a start before 1 still counts the missing positions.
pub(super) fn substring(s: &str, start: i64, length: Option<i64>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let end = match length {
        Some(l) if l < 0 => return String::new(),
        Some(l) => start.saturating_add(l),
        None => i64::MAX,
    };
    let from = start.max(1) - 1;
    let to = (end - 1).clamp(0, chars.len() as i64);
    if from >= to {
        return String::new();
    }
    chars[from as usize..to as usize].iter().collect()
}

/// LPAD / RPAD to `length` characters; NULL for a negative length or an empty pad that is needed.
pub(super) fn pad(s: &str, length: i64, pad: &str, left: bool) -> Option<String> {
    let length = usize::try_from(length).ok()?;
    let chars: Vec<char> = s.chars().collect();
    if chars.len() >= length {
        return Some(chars[..length].iter().collect());
    }
    if pad.is_empty() {
        return None;
    }
    let filler: String = pad.chars().cycle().take(length - chars.len()).collect();
    Some(if left { filler + s } else { format!("{s}{filler}") })
}

/// TRIM of any of the characters in `chars` from the chosen ends.
pub(super) fn trim(s: &str, chars: &str, side: TrimSide) -> String {
    let set = |c: char| chars.contains(c);
    match side {
        TrimSide::Both => s.trim_matches(set),
        TrimSide::Leading => s.trim_start_matches(set),
        TrimSide::Trailing => s.trim_end_matches(set),
    }
    .to_string()
}

/// A Java replacement string (`$1`, `\$`) as the `regex` crate writes it (`${1}`, `$$`).
pub(super) fn java_replacement(replacement: &str) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' => {
                let mut group = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    group.push(*d);
                    chars.next();
                }
                out.push_str(&format!("${{{group}}}"));
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_functions_follow_flink() {
        assert_eq!(initcap("user1 of bandung"), "User1 Of Bandung");
        assert_eq!(substring("apple", 1, Some(3)), "app");
        assert_eq!(substring("apple", 0, Some(2)), "a");
        assert_eq!(substring("apple", 4, None), "le");
        assert_eq!(pad("1", 4, "0", true).unwrap(), "0001");
        assert_eq!(pad("Medan", 10, ".", false).unwrap(), "Medan.....");
        assert_eq!(pad("Bandung", 3, ".", false).unwrap(), "Ban");
        assert_eq!(trim("uuser1u", "u", TrimSide::Both), "ser1");
        assert!(like_regex("%an%").unwrap().is_match("Bandung"));
        assert!(!like_regex("a_").unwrap().is_match("abc"));
        assert_eq!(java_replacement("<$1>"), "<${1}>");
    }
}
