//! Table options (`WITH ('key' = 'value', …)`), read by factories that declare what they use.
//!
//! Every key a factory or format asks about becomes a supported option, whether it was given
//! or not. [`TableOptions::finish`] then reports the required options that are missing and the
//! given options nobody asked about, listing the supported ones, as Flink's factories do.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// The options of one table, with the record of which keys were declared.
#[derive(Debug, Clone)]
pub struct TableOptions {
    values: BTreeMap<String, String>,
    declared: BTreeSet<String>,
    missing: BTreeSet<String>,
}

impl TableOptions {
    /// Options as given in `WITH (…)`.
    pub fn new(values: BTreeMap<String, String>) -> Self {
        let mut declared = BTreeSet::new();
        declared.insert("connector".to_string());
        TableOptions { values, declared, missing: BTreeSet::new() }
    }

    /// The value of an optional key, declaring it.
    pub fn optional(&mut self, key: &str) -> Option<&str> {
        self.declared.insert(key.to_string());
        self.values.get(key).map(String::as_str)
    }

    /// The value of a required key, declaring it; a missing key is reported by [`Self::finish`]
    /// (and makes this return `None`).
    pub fn required(&mut self, key: &str) -> Option<&str> {
        self.declared.insert(key.to_string());
        if !self.values.contains_key(key) {
            self.missing.insert(key.to_string());
        }
        self.values.get(key).map(String::as_str)
    }

    /// Whether the key was given.
    pub fn contains(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// An optional value parsed with `FromStr`.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the key and `expected` when it does not parse.
    pub fn parse<T: FromStr>(&mut self, key: &str, expected: &str) -> Result<Option<T>> {
        match self.optional(key) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| invalid(key, v, expected)),
        }
    }

    /// An optional boolean (`true` / `false`, any case).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for any other text.
    pub fn boolean(&mut self, key: &str, default: bool) -> Result<bool> {
        match self.optional(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(invalid(key, v, "'true' or 'false'")),
        }
    }

    /// An optional duration as Flink writes one (`100 ms`, `10 s`, `1 min`, a bare number is ms).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the text is not a duration.
    pub fn duration(&mut self, key: &str) -> Result<Option<Duration>> {
        match self.optional(key) {
            None => Ok(None),
            Some(v) => weir_runtime::config::parse_duration(key, v)
                .map(Some)
                .map_err(|_| invalid(key, v, "a duration such as '500 ms', '10 s' or '1 min'")),
        }
    }

    /// One of `accepted` (compared without case), or `default`; returns the accepted spelling.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] listing the accepted values.
    pub fn one_of(&mut self, key: &str, accepted: &[&'static str], default: &'static str) -> Result<&'static str> {
        match self.optional(key) {
            None => Ok(default),
            Some(v) => accepted
                .iter()
                .find(|a| a.eq_ignore_ascii_case(v.trim()))
                .copied()
                .ok_or_else(|| invalid(key, v, &format!("one of {}", quoted_list(accepted)))),
        }
    }

    /// An optional single character.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the value is not exactly one character.
    pub fn character(&mut self, key: &str) -> Result<Option<char>> {
        match self.optional(key) {
            None => Ok(None),
            Some(v) => {
                let unescaped = match v {
                    "\\t" => "\t",
                    other => other,
                };
                let mut chars = unescaped.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(Some(c)),
                    _ => Err(invalid(key, v, "a single character")),
                }
            }
        }
    }

    /// Every given option whose key starts with `prefix` (Kafka's `properties.`), declared,
    /// as `(key without the prefix, value)` in key order.
    pub fn prefixed(&mut self, prefix: &str) -> Vec<(String, String)> {
        let given: Vec<(String, String)> = self
            .values
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|rest| (rest.to_string(), v.clone())))
            .collect();
        for (key, _) in &given {
            self.declared.insert(format!("{prefix}{key}"));
        }
        given
    }

    /// Reads the options under `prefix` with `read`, which sees them without it (a key format
    /// reads `key.format` and `key.csv.field-delimiter` as `format` and `csv.field-delimiter`):
    /// what `read` declares or misses is declared or missed here with the prefix.
    pub fn nested<T>(&mut self, prefix: &str, read: impl FnOnce(&mut TableOptions) -> T) -> T {
        let values = self.values.iter().filter_map(|(k, v)| Some((k.strip_prefix(prefix)?.to_string(), v.clone())));
        let mut inner = TableOptions { values: values.collect(), declared: BTreeSet::new(), missing: BTreeSet::new() };
        let answer = read(&mut inner);
        self.declared.extend(inner.declared.into_iter().map(|k| format!("{prefix}{k}")));
        self.missing.extend(inner.missing.into_iter().map(|k| format!("{prefix}{k}")));
        answer
    }

    /// Checks that every required option was given and every given option was declared.
    ///
    /// # Errors
    /// [`Error::MissingOptions`] first, then [`Error::UnsupportedOptions`] naming `factory`.
    pub fn finish(self, factory: &str) -> Result<()> {
        if !self.missing.is_empty() {
            return Err(Error::MissingOptions { missing: self.missing.into_iter().collect() });
        }
        let unsupported: Vec<String> = self.values.keys().filter(|k| !self.declared.contains(*k)).cloned().collect();
        if unsupported.is_empty() {
            Ok(())
        } else {
            Err(Error::UnsupportedOptions {
                factory: factory.to_string(),
                unsupported,
                supported: self.declared.into_iter().collect(),
            })
        }
    }
}

/// An [`Error::InvalidOption`].
pub fn invalid(key: &str, value: &str, expected: &str) -> Error {
    Error::InvalidOption { key: key.to_string(), value: value.to_string(), expected: expected.to_string() }
}

fn quoted_list(values: &[&str]) -> String {
    values.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> TableOptions {
        TableOptions::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn unsupported_options_are_listed_with_the_supported_ones() {
        let mut o = options(&[("connector", "x"), ("a", "1"), ("zz", "2"), ("b", "3")]);
        o.optional("a");
        o.optional("c");
        let err = o.finish("x").unwrap_err().to_string();
        assert_eq!(
            err,
            "Unsupported options found for 'x'.\n\nUnsupported options:\n\nb\nzz\n\nSupported options:\n\na\nc\nconnector"
        );
    }

    #[test]
    fn missing_required_options_come_first() {
        let mut o = options(&[("connector", "x"), ("junk", "1")]);
        assert!(o.required("path").is_none());
        let err = o.finish("x").unwrap_err().to_string();
        assert_eq!(err, "One or more required options are missing.\n\nMissing required options are:\n\npath");
    }

    #[test]
    fn values_of_the_wrong_form_name_the_key_and_what_it_accepts() {
        let mut o = options(&[("n", "ten"), ("b", "yes"), ("k", "Sequence"), ("e", "foo"), ("c", ";;")]);
        assert_eq!(
            o.parse::<u64>("n", "a non-negative integer").unwrap_err().to_string(),
            "Could not parse value 'ten' for key 'n': expected a non-negative integer."
        );
        assert!(o.boolean("b", false).unwrap_err().to_string().contains("'true' or 'false'"));
        assert_eq!(o.one_of("k", &["random", "sequence"], "random").unwrap(), "sequence");
        assert_eq!(
            o.one_of("e", &["random", "sequence"], "random").unwrap_err().to_string(),
            "Could not parse value 'foo' for key 'e': expected one of 'random', 'sequence'."
        );
        assert!(o.character("c").is_err());
    }
}
