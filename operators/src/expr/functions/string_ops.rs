//! More string functions with Flink's semantics: LEFT, RIGHT, REVERSE, REPEAT, LTRIM, RTRIM,
//! BTRIM, ASCII, CHR, TRANSLATE, LOCATE, INSTR, STARTSWITH, ENDSWITH, ELT, IS_ALPHA,
//! IS_DECIMAL, IS_DIGIT, SPLIT, STR_TO_MAP, PARSE_URL and OVERLAY.
//!
//! Positions and lengths count characters (Java's UTF-16 units, for the text outside the
//! basic plane weir counts code points, as its other string functions do).

use std::sync::Arc;

use weir_runtime::{DataType, LogicalType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Nulls, ScalarRef};
use crate::expr::types::{is_integer, is_string};
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["LEFT"], make: || ScalarRef::new(LEFT) },
        Entry { names: &["RIGHT"], make: || ScalarRef::new(RIGHT) },
        Entry { names: &["REVERSE"], make: || ScalarRef::new(REVERSE) },
        Entry { names: &["REPEAT"], make: || ScalarRef::new(REPEAT) },
        Entry { names: &["LTRIM"], make: || ScalarRef::new(LTRIM) },
        Entry { names: &["RTRIM"], make: || ScalarRef::new(RTRIM) },
        Entry { names: &["BTRIM"], make: || ScalarRef::new(BTRIM) },
        Entry { names: &["ASCII"], make: || ScalarRef::new(ASCII) },
        Entry { names: &["CHR"], make: || ScalarRef::new(CHR) },
        Entry { names: &["TRANSLATE"], make: || ScalarRef::new(TRANSLATE) },
        Entry { names: &["LOCATE"], make: || ScalarRef::new(LOCATE) },
        Entry { names: &["INSTR"], make: || ScalarRef::new(INSTR) },
        Entry { names: &["STARTSWITH"], make: || ScalarRef::new(STARTSWITH) },
        Entry { names: &["ENDSWITH"], make: || ScalarRef::new(ENDSWITH) },
        Entry { names: &["ELT"], make: || ScalarRef::new(ELT) },
        Entry { names: &["IS_ALPHA"], make: || ScalarRef::new(IS_ALPHA) },
        Entry { names: &["IS_DECIMAL"], make: || ScalarRef::new(IS_DECIMAL) },
        Entry { names: &["IS_DIGIT"], make: || ScalarRef::new(IS_DIGIT) },
        Entry { names: &["SPLIT"], make: || ScalarRef::new(SPLIT) },
        Entry { names: &["STR_TO_MAP"], make: || ScalarRef::new(STR_TO_MAP) },
        Entry { names: &["PARSE_URL"], make: || ScalarRef::new(PARSE_URL) },
        Entry { names: &["OVERLAY"], make: || ScalarRef::new(OVERLAY) },
    ]
}

/// `f(s, n)` of a string and an integer: STRING, nullable as the arguments.
fn string_int(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_string(types[0]) && is_integer(types[1]), types, "<CHARACTER>, <INTEGER>")?;
    Ok(nullable_if_any(DataType::string(), types))
}

/// `LEFT(s, n)` and `RIGHT(s, n)`: a VARCHAR as long as `s`, nullable whatever the arguments,
/// as Flink types them.
fn part_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    string_int(f, types)?;
    Ok(super::string::varchar_as_long_as(types[0]))
}

/// `f(a, b, …)` of strings only, giving `result`, nullable as the arguments.
fn strings_to(f: &Builtin, types: &[&DataType], result: DataType) -> Result<DataType, ExprError> {
    let forms = vec!["<CHARACTER>"; types.len()].join(", ");
    f.expect(types.iter().all(|t| is_string(t)), types, &forms)?;
    Ok(nullable_if_any(result, types))
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// `LEFT(s, n)`: the first `n` characters (none for a negative `n`).
pub const LEFT: Builtin = Builtin::new("LEFT", Arity::exactly(2), part_type, |args, _| {
    let n = usize::try_from(args[1].as_i64().unwrap_or(0)).unwrap_or(0);
    Ok(string(text(&args[0]).chars().take(n).collect()))
});

/// `RIGHT(s, n)`: the last `n` characters (none for a negative `n`).
pub const RIGHT: Builtin = Builtin::new("RIGHT", Arity::exactly(2), part_type, |args, _| {
    let n = usize::try_from(args[1].as_i64().unwrap_or(0)).unwrap_or(0);
    let all = chars(text(&args[0]));
    Ok(string(all[all.len().saturating_sub(n)..].iter().collect()))
});

/// `REVERSE(s)`
pub const REVERSE: Builtin = Builtin::new(
    "REVERSE",
    Arity::exactly(1),
    // Nullable whatever the argument, as Flink types it.
    |f, types| {
        strings_to(f, types, DataType::string())?;
        Ok(DataType::string())
    },
    |args, _| Ok(string(text(&args[0]).chars().rev().collect())),
);

/// The most characters REPEAT makes: a longer result is an error, not an allocation that ends
/// the process.
const MAX_REPEATED_LENGTH: usize = 64 << 20;

/// `REPEAT(s, n)`: `s` `n` times (none for `n` ≤ 0).
pub const REPEAT: Builtin = Builtin::new("REPEAT", Arity::exactly(2), string_int, |args, _| {
    let s = text(&args[0]);
    let n = usize::try_from(args[1].as_i64().unwrap_or(0)).unwrap_or(0);
    if s.len().saturating_mul(n) > MAX_REPEATED_LENGTH {
        return Err(ExprError(format!(
            "REPEAT cannot make a string of {n} copies: weir's limit for a repeated string is {MAX_REPEATED_LENGTH} bytes"
        )));
    }
    Ok(string(s.repeat(n)))
});

/// Trims `s` of the characters in `set` (spaces without one) at the start and/or the end.
fn trim_value(args: &[Value], start: bool, end: bool) -> Value {
    let s = text(&args[0]);
    let set: Vec<char> = args.get(1).map_or(vec![' '], |c| chars(text(c)));
    let mut trimmed = s;
    if start {
        trimmed = trimmed.trim_start_matches(|c| set.contains(&c));
    }
    if end {
        trimmed = trimmed.trim_end_matches(|c| set.contains(&c));
    }
    string(trimmed.to_string())
}

fn trim_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    strings_to(f, types, super::string::varchar_as_long_as(types[0]))
}

/// `LTRIM(s[, characters])`
pub const LTRIM: Builtin =
    Builtin::new("LTRIM", Arity::between(1, 2), trim_type, |args, _| Ok(trim_value(args, true, false)));

/// `RTRIM(s[, characters])`
pub const RTRIM: Builtin =
    Builtin::new("RTRIM", Arity::between(1, 2), trim_type, |args, _| Ok(trim_value(args, false, true)));

/// `BTRIM(s[, characters])`
pub const BTRIM: Builtin = Builtin::new(
    "BTRIM",
    Arity::between(1, 2),
    |f, types| strings_to(f, types, DataType::string()),
    |args, _| Ok(trim_value(args, true, true)),
);

/// `ASCII(s)`: the first byte of the UTF-8 text as a signed byte (Java's `byte`), 0 for an
/// empty string.
pub const ASCII: Builtin = Builtin::new(
    "ASCII",
    Arity::exactly(1),
    |f, types| strings_to(f, types, DataType::int()),
    |args, _| Ok(Value::Int(text(&args[0]).as_bytes().first().map_or(0, |&b| i32::from(b as i8)))),
);

/// `CHR(n)`: the character of code `n % 256`; an empty string for a negative `n`.
pub const CHR: Builtin = Builtin::new(
    "CHR",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_integer(types[0]), types, "<INTEGER>")?;
        // Nullable whatever the argument, as Flink types it.
        Ok(DataType::string())
    },
    |args, _| {
        let n = args[0].as_i64().unwrap_or(0);
        Ok(string(if n < 0 { String::new() } else { char::from((n % 256) as u8).to_string() }))
    },
);

/// `TRANSLATE(s, from, to)`: each character of `from` in `s` replaced by the one at its place
/// in `to`, or removed when `to` is shorter.
pub const TRANSLATE: Builtin = Builtin::new(
    "TRANSLATE",
    Arity::exactly(3),
    |f, types| strings_to(f, types, DataType::string()),
    |args, _| {
        // A NULL `from` changes nothing; a NULL `to` removes the characters of `from`.
        if args[0].is_null() {
            return Ok(Value::Null);
        }
        let (from, to) = (chars(text(&args[1])), chars(text(&args[2])));
        let mut out = String::new();
        for c in text(&args[0]).chars() {
            match from.iter().position(|&f| f == c) {
                Some(i) => out.extend(to.get(i)),
                None => out.push(c),
            }
        }
        Ok(string(out))
    },
)
.with_nulls(Nulls::Own);

/// The 1-based character position of `needle` in `haystack` at or after character `from`
/// (1-based), 0 when absent.
fn find_from(haystack: &str, needle: &str, from: usize) -> i32 {
    let start = haystack.char_indices().nth(from.saturating_sub(1)).map(|(b, _)| b);
    let Some(start) = start.or((from.saturating_sub(1) == haystack.chars().count()).then_some(haystack.len())) else {
        return 0;
    };
    haystack[start..].find(needle).map_or(0, |byte| haystack[..start + byte].chars().count() as i32 + 1)
}

/// `LOCATE(needle, s[, from])`: the 1-based position of `needle` in `s` at or after `from`
/// (below 1 counts as 1), 0 when absent.
pub const LOCATE: Builtin = Builtin::new(
    "LOCATE",
    Arity::between(2, 3),
    |f, types| {
        let ok = is_string(types[0]) && is_string(types[1]) && types.get(2).is_none_or(|t| is_integer(t));
        f.expect(ok, types, "<CHARACTER>, <CHARACTER>[, <INTEGER>]")?;
        Ok(nullable_if_any(DataType::int(), types))
    },
    |args, _| {
        let from = args.get(2).map_or(1, |v| v.as_i64().unwrap_or(1)).max(1);
        Ok(Value::Int(find_from(text(&args[1]), text(&args[0]), from as usize)))
    },
);

/// `INSTR(s, needle)`: the 1-based position of `needle` in `s`, 0 when absent.
pub const INSTR: Builtin = Builtin::new(
    "INSTR",
    Arity::exactly(2),
    |f, types| strings_to(f, types, DataType::int()),
    |args, _| Ok(Value::Int(find_from(text(&args[0]), text(&args[1]), 1))),
);

/// `STARTSWITH(s, prefix)`
pub const STARTSWITH: Builtin = Builtin::new(
    "STARTSWITH",
    Arity::exactly(2),
    |f, types| strings_to(f, types, DataType::boolean()),
    |args, _| Ok(Value::Boolean(text(&args[0]).starts_with(text(&args[1])))),
);

/// `ENDSWITH(s, suffix)`
pub const ENDSWITH: Builtin = Builtin::new(
    "ENDSWITH",
    Arity::exactly(2),
    |f, types| strings_to(f, types, DataType::boolean()),
    |args, _| Ok(Value::Boolean(text(&args[0]).ends_with(text(&args[1])))),
);

/// `ELT(n, a, b, …)`: the `n`-th of the values after `n`, NULL out of range.
pub const ELT: Builtin = Builtin::new(
    "ELT",
    Arity::at_least(2),
    |f, types| {
        let ok = is_integer(types[0]) && types[1..].iter().all(|t| is_string(t));
        f.expect(ok, types, "<INTEGER>, <CHARACTER>, …")?;
        // A VARCHAR as long as the longest value, NULL out of range, as Flink types it.
        let longest = types[1..].iter().filter_map(|t| crate::expr::types::string_length(&t.logical)).max();
        Ok(DataType::new(LogicalType::Varchar(longest.unwrap_or(weir_runtime::types::MAX_LENGTH))))
    },
    |args, _| {
        let Some(n) = args[0].as_i64() else { return Ok(Value::Null) };
        Ok(usize::try_from(n).ok().filter(|&n| n >= 1).and_then(|n| args.get(n)).cloned().unwrap_or(Value::Null))
    },
)
.with_nulls(Nulls::Own);

fn predicate_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_string(types[0]), types, "<CHARACTER>")?;
    Ok(DataType::boolean().not_null())
}

/// `IS_ALPHA(s)`: only letters (FALSE for NULL or an empty string).
pub const IS_ALPHA: Builtin = Builtin::new("IS_ALPHA", Arity::exactly(1), predicate_type, |args, _| {
    Ok(Value::Boolean(args[0].as_str().is_some_and(|s| !s.is_empty() && s.chars().all(char::is_alphabetic))))
})
.with_nulls(Nulls::Own);

/// `IS_DIGIT(s)`: only digits (FALSE for NULL or an empty string).
pub const IS_DIGIT: Builtin = Builtin::new("IS_DIGIT", Arity::exactly(1), predicate_type, |args, _| {
    Ok(Value::Boolean(args[0].as_str().is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))))
})
.with_nulls(Nulls::Own);

/// `IS_DECIMAL(s)`: a number Java reads as a double (FALSE for NULL or an empty string).
pub const IS_DECIMAL: Builtin = Builtin::new("IS_DECIMAL", Arity::exactly(1), predicate_type, |args, _| {
    Ok(Value::Boolean(args[0].as_str().is_some_and(is_decimal)))
})
.with_nulls(Nulls::Own);

/// Apache Commons' `NumberUtils.isParsable`-like check: optional sign, digits with at most one
/// point, not ending in the point.
fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || digits.ends_with('.') {
        return false;
    }
    let mut points = 0;
    digits.chars().all(|c| {
        if c == '.' {
            points += 1;
            points == 1
        } else {
            c.is_ascii_digit()
        }
    })
}

/// `SPLIT(s, delimiter)`: the parts of `s` between delimiters; an empty delimiter splits into
/// characters.
pub const SPLIT: Builtin = Builtin::new(
    "SPLIT",
    Arity::exactly(2),
    |f, types| strings_to(f, types, DataType::new(LogicalType::Array(Box::new(DataType::string())))),
    |args, _| {
        let (s, delimiter) = (text(&args[0]), text(&args[1]));
        let parts: Vec<Value> = if s.is_empty() {
            Vec::new()
        } else if delimiter.is_empty() {
            s.chars().map(|c| string(c.to_string())).collect()
        } else {
            s.split(delimiter).map(|p| string(p.to_string())).collect()
        };
        Ok(Value::Array(parts.into()))
    },
);

/// `STR_TO_MAP(s[, pair_delimiter, key_value_delimiter])`: `,` and `=` by default; a pair
/// without the key-value delimiter maps its key to NULL, a repeated key keeps its last value.
pub const STR_TO_MAP: Builtin = Builtin::new(
    "STR_TO_MAP",
    Arity::between(1, 3),
    |f, types| {
        let ok = types.iter().all(|t| is_string(t)) && types.len() != 2;
        f.expect(ok, types, "<CHARACTER> | <CHARACTER>, <CHARACTER>, <CHARACTER>")?;
        let map = LogicalType::Map(Box::new(DataType::string()), Box::new(DataType::string()));
        Ok(nullable_if_any(DataType::new(map), types))
    },
    |args, _| {
        let s = text(&args[0]);
        let pairs = args.get(1).map_or(",", text);
        let key_value = args.get(2).map_or("=", text);
        let mut entries: Vec<(Value, Value)> = Vec::new();
        if !s.is_empty() {
            for pair in s.split(pairs) {
                let (key, value) = match pair.split_once(key_value) {
                    Some((k, v)) => (string(k.to_string()), string(v.to_string())),
                    None => (string(pair.to_string()), Value::Null),
                };
                match entries.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 = value,
                    None => entries.push((key, value)),
                }
            }
        }
        Ok(Value::Map(Arc::from(entries)))
    },
);

/// `PARSE_URL(url, part[, key])`: the part of a URL as Java's `java.net.URL` splits it
/// (`HOST`, `PATH`, `QUERY`, `REF`, `PROTOCOL`, `AUTHORITY`, `FILE`, `USERINFO`), or with
/// `QUERY` and a key the value of that query parameter; NULL for an unknown part or a text
/// that is no URL.
pub const PARSE_URL: Builtin = Builtin::new(
    "PARSE_URL",
    Arity::between(2, 3),
    |f, types| {
        strings_to(f, types, DataType::string())?;
        let mut ty = DataType::string();
        ty.nullable = true;
        Ok(ty)
    },
    |args, _| {
        let Some(url) = Url::parse(text(&args[0])) else { return Ok(Value::Null) };
        let part = match text(&args[1]) {
            // `java.net.URL.getHost` is empty, not NULL, for a URL without a host (`mailto:`).
            "HOST" => Some(url.host.unwrap_or("")),
            "PATH" => Some(url.path),
            "QUERY" => match args.get(2) {
                Some(key) => url.query.and_then(|q| query_value(q, text(key))),
                None => url.query,
            },
            "REF" => url.fragment,
            "PROTOCOL" => Some(url.protocol),
            "AUTHORITY" => url.authority,
            "FILE" => Some(url.file),
            "USERINFO" => url.user_info,
            _ => None,
        };
        Ok(part.map_or(Value::Null, |p| string(p.to_string())))
    },
);

/// `OVERLAY(s PLACING r FROM start [FOR length])`: `s` with `length` characters from `start`
/// (1-based; the length of `r` by default) replaced by `r`.
pub const OVERLAY: Builtin = Builtin::new(
    "OVERLAY",
    Arity::between(3, 4),
    |f, types| {
        let ok = is_string(types[0]) && is_string(types[1]) && types[2..].iter().all(|t| is_integer(t));
        f.expect(ok, types, "<CHARACTER> PLACING <CHARACTER> FROM <INTEGER> [FOR <INTEGER>]")?;
        // As long as both strings together, as Flink types it.
        let length = |t: &DataType| crate::expr::types::string_length(&t.logical).unwrap_or(0);
        let joined = crate::expr::types::joined_length(length(types[0]), length(types[1]));
        Ok(nullable_if_any(DataType::new(LogicalType::Varchar(joined)), types))
    },
    |args, _| {
        let s = chars(text(&args[0]));
        let placing = text(&args[1]);
        let start = (args[2].as_i64().unwrap_or(1).max(1) - 1) as usize;
        // A start past the last character leaves the text as it is (Flink: `OVERLAY('abc'
        // PLACING 'XY' FROM 4)` is `abc`).
        if start >= s.len() {
            return Ok(args[0].clone());
        }
        let length = args.get(3).map_or(placing.chars().count() as i64, |l| l.as_i64().unwrap_or(0)).max(0) as usize;
        let head: String = s.iter().take(start).collect();
        let tail: String = s.iter().skip(start.saturating_add(length)).collect();
        Ok(string(format!("{head}{placing}{tail}")))
    },
);

/// A URL in the parts `java.net.URL` gives.
struct Url<'a> {
    protocol: &'a str,
    authority: Option<&'a str>,
    user_info: Option<&'a str>,
    host: Option<&'a str>,
    path: &'a str,
    file: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

impl<'a> Url<'a> {
    fn parse(s: &'a str) -> Option<Url<'a>> {
        let (protocol, rest) = s.split_once(':')?;
        if protocol.is_empty() || !protocol.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
            return None;
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        let (authority, file) = match rest.strip_prefix("//") {
            Some(after) => {
                let end = after.find(['/', '?']).unwrap_or(after.len());
                (Some(&after[..end]), &after[end..])
            }
            None => (None, rest),
        };
        let (path, query) = match file.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (file, None),
        };
        let (user_info, host_port) = match authority.map(|a| a.rsplit_once('@')) {
            Some(Some((u, h))) => (Some(u), Some(h)),
            Some(None) => (None, authority),
            None => (None, None),
        };
        let host = host_port.map(|h| match h.rsplit_once(':') {
            Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
            _ => h,
        });
        Some(Url { protocol, authority, user_info, host, path, file, query, fragment })
    }
}

/// The value of parameter `key` in a query string `a=1&b=2`.
fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
}
