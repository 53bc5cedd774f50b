//! The options of Flink 1.x's legacy table descriptors (`'connector.type' = 'filesystem'`,
//! `'connector.path'`, `'format.type'`), which scripts written for older Flink still carry
//! (Nexmark's q13). Flink 2.3 still reads them; weir reads them as the current keys.

use std::collections::BTreeMap;

/// The legacy keys weir reads, and the current key each stands for.
const RENAMED: [(&str, &str); 3] =
    [("connector.type", "connector"), ("connector.path", "path"), ("format.type", "format")];

/// Legacy keys that carried only a version; dropped.
const VERSIONS: [&str; 2] = ["connector.property-version", "format.property-version"];

/// Whether `options` are a legacy descriptor's (`connector.type` without `connector`).
pub fn is_legacy(options: &BTreeMap<String, String>) -> bool {
    options.contains_key("connector.type") && !options.contains_key("connector")
}

/// `options` with a legacy descriptor's keys renamed to the current ones; other options as they
/// are (a legacy key weir does not read is then an unsupported option, named as written).
pub fn current_options(options: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    if !is_legacy(options) {
        return options.clone();
    }
    options
        .iter()
        .filter(|(key, _)| !VERSIONS.contains(&key.as_str()))
        .map(|(key, value)| match RENAMED.iter().find(|(legacy, _)| legacy == key) {
            Some((_, current)) => (current.to_string(), value.clone()),
            None => (key.clone(), value.clone()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_keys_are_read_as_the_current_ones() {
        let legacy: BTreeMap<String, String> = [
            ("connector.type", "filesystem"),
            ("connector.path", "file:///data/side_input.txt"),
            ("format.type", "csv"),
            ("connector.property-version", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let current = current_options(&legacy);
        assert_eq!(current.get("connector").map(String::as_str), Some("filesystem"));
        assert_eq!(current.get("path").map(String::as_str), Some("file:///data/side_input.txt"));
        assert_eq!(current.get("format").map(String::as_str), Some("csv"));
        assert_eq!(current.len(), 3);
        let modern: BTreeMap<String, String> = [("connector".to_string(), "print".to_string())].into();
        assert_eq!(current_options(&modern), modern);
    }
}
