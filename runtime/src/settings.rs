//! Typed session settings (`SET 'key' = 'value'`): each key weir reads is declared once, as a
//! [`Setting`] beside the code that reads it, with its type, default, description and check.
//!
//! A [`Settings`] holds the values a session set. A value is parsed and checked when it is set,
//! so a wrong value is refused at its `SET` naming the key and what it accepts; reading a setting
//! ([`Settings::get`]) returns the parsed value or the declared default and cannot fail. Keys no
//! setting declares are kept as text, as Flink keeps keys it does not know.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::time::Duration;

use crate::error::{Error, Result};

/// What a setting's values are, and so how its text is parsed and what a wrong value is told.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `true` or `false`, in any case.
    Boolean,
    /// A duration as Flink writes one (`500 ms`, `10 s`, `1 min`; a bare number is milliseconds).
    Duration,
    /// A memory size (`64 mb`, `512kb`, `1 gb`, a bare number of bytes), more than zero.
    MemorySize,
    /// An integer for which `valid` holds; `expected` says which ones do.
    Int {
        /// Whether a parsed integer is accepted.
        valid: fn(i64) -> bool,
        /// The accepted integers, for the error message.
        expected: &'static str,
    },
    /// One of the names, compared without case (Flink reads enumerations so).
    Choice(&'static [&'static str]),
    /// Any text.
    Text,
    /// A directory or file on the local file system: a path, or a `file:` URI read as the path
    /// it names; another scheme (`s3://`, `hdfs://`) is refused, naming it.
    LocalPath,
}

/// A parsed setting value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Of [`Kind::Boolean`].
    Bool(bool),
    /// Of [`Kind::Duration`].
    Duration(Duration),
    /// Of [`Kind::MemorySize`], in bytes.
    Bytes(u64),
    /// Of [`Kind::Int`].
    Int(i64),
    /// Of [`Kind::Choice`]: the declared spelling of the name.
    Choice(&'static str),
    /// Of [`Kind::Text`].
    Text(Cow<'static, str>),
}

/// Everything declared about one key.
#[derive(Debug)]
pub struct Spec {
    /// The key, as `SET` names it.
    pub key: &'static str,
    /// Its values.
    pub kind: Kind,
    /// Its value when it is not set, as [`Value`].
    pub default: Value,
    /// Its default as the documentation and `SET;` print it (`64 mb`, `number of cores`).
    pub default_text: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// Whether Apache Flink has the same key (with the same meaning); weir's own keys do not.
    pub flink: bool,
}

/// A declared setting whose values read as `T`. The constructors tie `T` to the [`Kind`].
#[derive(Debug)]
pub struct Setting<T> {
    /// What is declared about the key.
    pub spec: Spec,
    read: PhantomData<fn() -> T>,
}

const fn spec(
    key: &'static str,
    kind: Kind,
    default: Value,
    default_text: &'static str,
    description: &'static str,
) -> Spec {
    Spec { key, kind, default, default_text, description, flink: true }
}

impl<T> Setting<T> {
    const fn new(spec: Spec) -> Self {
        Setting { spec, read: PhantomData }
    }

    /// The same setting marked as weir's own key (Flink has no such key).
    pub const fn weir_only(mut self) -> Self {
        self.spec.flink = false;
        self
    }

    /// The same setting with the default printed as `text` (when the value alone would mislead).
    pub const fn shown_as(mut self, text: &'static str) -> Self {
        self.spec.default_text = text;
        self
    }

    /// The key.
    pub const fn key(&self) -> &'static str {
        self.spec.key
    }
}

impl Setting<bool> {
    /// A boolean setting.
    pub const fn boolean(key: &'static str, default: bool, description: &'static str) -> Self {
        let text = if default { "true" } else { "false" };
        Setting::new(spec(key, Kind::Boolean, Value::Bool(default), text, description))
    }
}

impl Setting<Duration> {
    /// A duration setting; `default_text` is the default as Flink documents it (`0 ms`, `3 min`).
    pub const fn duration(
        key: &'static str,
        default: Duration,
        default_text: &'static str,
        description: &'static str,
    ) -> Self {
        Setting::new(spec(key, Kind::Duration, Value::Duration(default), default_text, description))
    }
}

impl Setting<u64> {
    /// A memory-size setting, in bytes.
    pub const fn memory_size(
        key: &'static str,
        default: u64,
        default_text: &'static str,
        description: &'static str,
    ) -> Self {
        Setting::new(spec(key, Kind::MemorySize, Value::Bytes(default), default_text, description))
    }
}

impl Setting<i64> {
    /// An integer setting accepting what `valid` accepts (`expected` says what that is).
    pub const fn int(
        key: &'static str,
        default: i64,
        default_text: &'static str,
        valid: fn(i64) -> bool,
        expected: &'static str,
        description: &'static str,
    ) -> Self {
        Setting::new(spec(key, Kind::Int { valid, expected }, Value::Int(default), default_text, description))
    }
}

impl Setting<&'static str> {
    /// A setting naming one of `choices` (the declared spelling is what [`Settings::get`] returns).
    pub const fn choice(
        key: &'static str,
        choices: &'static [&'static str],
        default: &'static str,
        description: &'static str,
    ) -> Self {
        Setting::new(spec(key, Kind::Choice(choices), Value::Choice(default), default, description))
    }
}

impl Setting<String> {
    /// A text setting.
    pub const fn text(key: &'static str, default: &'static str, description: &'static str) -> Self {
        Setting::new(spec(key, Kind::Text, Value::Text(Cow::Borrowed(default)), default, description))
    }

    /// A setting naming a local path ([`Kind::LocalPath`]): [`Settings::get`] returns the path.
    pub const fn local_path(key: &'static str, default: &'static str, description: &'static str) -> Self {
        Setting::new(spec(key, Kind::LocalPath, Value::Text(Cow::Borrowed(default)), default, description))
    }
}

/// Reads a [`Value`] as the type its setting declares.
pub trait FromValue: Sized {
    /// The value as `Self`, `None` when it is of another kind.
    fn from_value(value: &Value) -> Option<Self>;
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FromValue for Duration {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Duration(d) => Some(*d),
            _ => None,
        }
    }
}

impl FromValue for u64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Bytes(n) => Some(*n),
            _ => None,
        }
    }
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

impl FromValue for &'static str {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Choice(name) => Some(name),
            _ => None,
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Text(text) => Some(text.to_string()),
            _ => None,
        }
    }
}

impl Kind {
    /// Parses `text` as a value of this kind.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming `key` and the values it accepts.
    pub fn parse(&self, key: &str, text: &str) -> Result<Value> {
        let invalid = |expected: &str| Error::InvalidOption {
            key: key.to_string(),
            value: text.to_string(),
            expected: expected.to_string(),
        };
        let trimmed = text.trim();
        match self {
            Kind::Boolean if trimmed.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            Kind::Boolean if trimmed.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            Kind::Boolean => Err(invalid("'true' or 'false'")),
            Kind::Duration => parse_duration(key, text).map(Value::Duration),
            Kind::MemorySize => {
                memory_size(trimmed).map(Value::Bytes).ok_or_else(|| invalid("a memory size such as '64 mb'"))
            }
            Kind::Int { valid, expected } => {
                trimmed.parse::<i64>().ok().filter(|n| valid(*n)).map(Value::Int).ok_or_else(|| invalid(expected))
            }
            Kind::Choice(names) => {
                names.iter().find(|n| n.eq_ignore_ascii_case(trimmed)).map(|n| Value::Choice(n)).ok_or_else(|| {
                    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
                    invalid(&format!("one of {}", quoted.join(", ")))
                })
            }
            Kind::Text => Ok(Value::Text(Cow::Owned(text.to_string()))),
            Kind::LocalPath => local_path(text).map(|p| Value::Text(Cow::Owned(p))).map_err(|e| invalid(&e)),
        }
    }

    /// The accepted values in a few words (for `SET;`-style listings and the documentation).
    pub fn describe(&self) -> String {
        match self {
            Kind::Boolean => "boolean".to_string(),
            Kind::Duration => "duration".to_string(),
            Kind::MemorySize => "memory size".to_string(),
            Kind::Int { expected, .. } => expected.to_string(),
            Kind::Choice(names) => names.join(", "),
            Kind::Text => "text".to_string(),
            Kind::LocalPath => "local path or file:// URI".to_string(),
        }
    }
}

/// The local path `text` names: `text` itself when it has no scheme, the path of a `file:` URI
/// (`file:///tmp/x` and `file:/tmp/x` are `/tmp/x`, as in Flink).
///
/// # Errors
/// A URI of another scheme (weir reads and writes local file systems only), or a `file:` URI
/// with an authority (`file://tmp/x`, a slash short), saying so.
pub fn local_path(text: &str) -> std::result::Result<String, String> {
    let trimmed = text.trim();
    let scheme_end = trimmed.find(':').filter(|&end| {
        let scheme = &trimmed[..end];
        // A scheme of one letter is a Windows drive, not a scheme.
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && trimmed[end + 1..].starts_with('/')
    });
    let Some(end) = scheme_end else { return Ok(trimmed.to_string()) };
    let (scheme, rest) = (&trimmed[..end], &trimmed[end + 1..]);
    if !scheme.eq_ignore_ascii_case("file") {
        return Err(format!(
            "weir has no file system for scheme '{scheme}': it reads and writes local paths only (a path, or a \
             file:// URI)"
        ));
    }
    match rest.strip_prefix("//") {
        Some(after) if after.starts_with('/') => Ok(after.to_string()),
        Some(after) => Err(format!(
            "Found local file path with authority '{}' in path '{trimmed}'. Hint: Did you forget a slash? (correct \
             path would be 'file:///{after}')",
            after.split('/').next().unwrap_or_default()
        )),
        None => Ok(rest.to_string()),
    }
}

/// Bytes of `64 mb`, `512kb`, `1 gb` or a bare number of bytes; `None` for anything else or 0.
pub fn memory_size(text: &str) -> Option<u64> {
    let text = text.to_ascii_lowercase();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let factor: u64 = match unit.trim() {
        "" | "b" | "bytes" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    number.parse::<u64>().ok().filter(|n| *n > 0)?.checked_mul(factor)
}

/// One set key: the text as the user wrote it and, for a declared key, its parsed value.
#[derive(Debug, Clone)]
struct Entry {
    text: String,
    value: Option<Value>,
}

/// The values a session set, parsed against a table of declared settings.
#[derive(Debug, Clone)]
pub struct Settings {
    table: &'static [&'static Spec],
    values: BTreeMap<String, Entry>,
}

impl Settings {
    /// No value set; keys of `table` are parsed and checked when they are set.
    pub fn new(table: &'static [&'static Spec]) -> Self {
        Settings { table, values: BTreeMap::new() }
    }

    /// The declaration of `key`, if the table has one.
    pub fn spec(&self, key: &str) -> Option<&'static Spec> {
        self.table.iter().copied().find(|s| s.key == key)
    }

    /// Sets `key` to `text`, checking it when the key is declared.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the key and the values it accepts; nothing changes then.
    pub fn set(&mut self, key: &str, text: &str) -> Result<()> {
        let value = self.spec(key).map(|spec| spec.kind.parse(key, text)).transpose()?;
        self.values.insert(key.to_string(), Entry { text: text.to_string(), value });
        Ok(())
    }

    /// Forgets the value of `key` (it reads as its default again); whether it was set.
    pub fn reset(&mut self, key: &str) -> bool {
        self.values.remove(key).is_some()
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Whether `key` was set.
    pub fn is_set(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// The value of a declared setting: the one set, or its default.
    pub fn get<T: FromValue>(&self, setting: &Setting<T>) -> T {
        let set = self.values.get(setting.spec.key).and_then(|e| e.value.as_ref()).and_then(T::from_value);
        set.or_else(|| T::from_value(&setting.spec.default))
            .unwrap_or_else(|| panic!("setting '{}' declares a default of another kind", setting.spec.key))
    }

    /// The value of a declared setting when it was set.
    pub fn get_set<T: FromValue>(&self, setting: &Setting<T>) -> Option<T> {
        self.is_set(setting.spec.key).then(|| self.get(setting))
    }

    /// The text `key` was set to, declared or not.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|e| e.text.as_str())
    }

    /// Every set key and its text, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, e)| (k.as_str(), e.text.as_str()))
    }
}

/// Parses a duration as Flink writes one: a number with an optional unit
/// (`ms`, `s`, `min`, `h`, `d` and their long forms); a bare number is milliseconds.
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` when the text is not a duration.
pub fn parse_duration(key: &str, value: &str) -> Result<Duration> {
    let invalid = || Error::InvalidOption {
        key: key.to_string(),
        value: value.to_string(),
        expected: "a duration such as '500 ms', '10 s', '1 min', '2 h' or '1 d'".to_string(),
    };
    let text = value.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    let millis_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "min" | "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return Err(invalid()),
    };
    number.checked_mul(millis_per_unit).map(Duration::from_millis).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    static FLAG: Setting<bool> = Setting::boolean("test.flag", true, "a flag");
    static SIZE: Setting<u64> = Setting::memory_size("test.size", 64 << 20, "64 mb", "a size");
    static MODE: Setting<&'static str> = Setting::choice("test.mode", &["AUTO", "NONE"], "AUTO", "a mode");
    static COUNT: Setting<i64> =
        Setting::int("test.count", -1, "-1", |n| n == -1 || n > 0, "a positive number, or -1", "rows");
    static TABLE: [&Spec; 4] = [&FLAG.spec, &SIZE.spec, &MODE.spec, &COUNT.spec];

    /// A `file:` URI means the path it names; any other scheme is refused, naming it.
    #[test]
    fn local_paths_read_file_uris_and_refuse_other_schemes() {
        assert_eq!(local_path("file:///tmp/ck").unwrap(), "/tmp/ck");
        assert_eq!(local_path("file:/tmp/ck").unwrap(), "/tmp/ck");
        assert_eq!(local_path("FILE:///tmp/ck").unwrap(), "/tmp/ck");
        assert_eq!(local_path("ck/sub").unwrap(), "ck/sub");
        assert_eq!(local_path("/tmp/a:b").unwrap(), "/tmp/a:b");
        assert_eq!(local_path("C:/ck").unwrap(), "C:/ck");
        let s3 = local_path("s3://bucket/ck").unwrap_err();
        assert!(s3.contains("no file system for scheme 's3'"), "{s3}");
        assert!(local_path("hdfs:///ck").unwrap_err().contains("'hdfs'"));
        let authority = local_path("file://tmp/ck").unwrap_err();
        assert!(authority.contains("Did you forget a slash? (correct path would be 'file:///tmp/ck')"), "{authority}");
        let err = Kind::LocalPath.parse("execution.checkpointing.dir", "s3://b/x").unwrap_err().to_string();
        assert!(
            err.starts_with("Invalid value 's3://b/x' for option 'execution.checkpointing.dir': weir has no"),
            "{err}"
        );
    }

    #[test]
    fn values_are_checked_when_set_and_read_typed() {
        let mut s = Settings::new(&TABLE);
        assert!(s.get(&FLAG));
        assert_eq!(s.get(&SIZE), 64 << 20);
        s.set("test.flag", "FALSE").unwrap();
        s.set("test.size", "1 kb").unwrap();
        s.set("test.mode", "none").unwrap();
        assert_eq!((s.get(&FLAG), s.get(&SIZE), s.get(&MODE)), (false, 1024, "NONE"));
        let err = s.set("test.mode", "sometimes").unwrap_err().to_string();
        assert_eq!(err, "Invalid value 'sometimes' for option 'test.mode': one of 'AUTO', 'NONE'");
        assert_eq!(s.get(&MODE), "NONE", "a refused value changes nothing");
        assert!(s.set("test.count", "0").is_err());
        s.set("test.count", "5").unwrap();
        assert_eq!(s.get(&COUNT), 5);
        s.set("anything.else", "kept as text").unwrap();
        assert_eq!(s.text("anything.else"), Some("kept as text"));
        assert!(s.reset("test.mode"));
        assert_eq!(s.get(&MODE), "AUTO");
    }

    #[test]
    fn memory_sizes_refuse_zero_and_overflow() {
        assert_eq!(memory_size("512kb"), Some(512 << 10));
        assert_eq!(memory_size("0"), None);
        assert_eq!(memory_size("99999999999999999 gb"), None);
        assert_eq!(memory_size("lots"), None);
    }
}
