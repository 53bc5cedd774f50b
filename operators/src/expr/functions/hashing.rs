//! Hashes and encodings with Flink's semantics: MD5, SHA1, SHA2 and the SHA-n shorthands
//! (lower-case hex of the UTF-8 bytes), TO_BASE64, FROM_BASE64, HEX, UNHEX, URL_ENCODE,
//! URL_DECODE (Java's `application/x-www-form-urlencoded`), ENCODE, DECODE and BIN.

use base64::Engine as _;
use md5::Digest as _;
use std::fmt::Write as _;
use weir_runtime::{DataType, LogicalType, Value};

use super::{nullable_if_any, string, text, Arity, Builtin, Entry, Nulls, ScalarRef};
use crate::expr::types::{is_integer, is_string};
use crate::expr::ExprError;

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry { names: &["MD5"], make: || ScalarRef::new(MD5) },
        Entry { names: &["SHA1"], make: || ScalarRef::new(SHA1) },
        Entry { names: &["SHA224"], make: || ScalarRef::new(SHA224) },
        Entry { names: &["SHA256"], make: || ScalarRef::new(SHA256) },
        Entry { names: &["SHA384"], make: || ScalarRef::new(SHA384) },
        Entry { names: &["SHA512"], make: || ScalarRef::new(SHA512) },
        Entry { names: &["SHA2"], make: || ScalarRef::new(SHA2) },
        Entry { names: &["TO_BASE64"], make: || ScalarRef::new(TO_BASE64) },
        Entry { names: &["FROM_BASE64"], make: || ScalarRef::new(FROM_BASE64) },
        Entry { names: &["HEX"], make: || ScalarRef::new(HEX) },
        Entry { names: &["UNHEX"], make: || ScalarRef::new(UNHEX) },
        Entry { names: &["BIN"], make: || ScalarRef::new(BIN) },
        Entry { names: &["URL_ENCODE"], make: || ScalarRef::new(URL_ENCODE) },
        Entry { names: &["URL_DECODE"], make: || ScalarRef::new(URL_DECODE) },
        Entry { names: &["ENCODE"], make: || ScalarRef::new(ENCODE) },
        Entry { names: &["DECODE"], make: || ScalarRef::new(DECODE) },
    ]
}

/// Whether `ty` is BINARY, VARBINARY or BYTES.
fn is_binary(ty: &DataType) -> bool {
    matches!(ty.logical, LogicalType::Binary(_) | LogicalType::Varbinary(_))
}

/// The bytes of a STRING (UTF-8) or BYTES value.
fn bytes(v: &Value) -> &[u8] {
    match v {
        Value::Binary(b) => b,
        other => text(other).as_bytes(),
    }
}

fn hex_lower(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The type rule of a digest of one string: `CHAR(hex_digits)` of the digest's hex text,
/// nullable as the argument, as Flink types it.
fn digest_type(f: &Builtin, types: &[&DataType], hex_digits: u32) -> Result<DataType, ExprError> {
    f.expect(is_string(types[0]) || is_binary(types[0]), types, "<CHARACTER>")?;
    Ok(nullable_if_any(DataType::new(LogicalType::Char(hex_digits)), types))
}

/// `MD5(s)`
pub const MD5: Builtin = Builtin::new(
    "MD5",
    Arity::exactly(1),
    |f, t| digest_type(f, t, 32),
    |args, _| Ok(string(hex_lower(&md5::Md5::digest(bytes(&args[0]))))),
);

/// `SHA1(s)`
pub const SHA1: Builtin = Builtin::new(
    "SHA1",
    Arity::exactly(1),
    |f, t| digest_type(f, t, 40),
    |args, _| Ok(string(hex_lower(&sha1::Sha1::digest(bytes(&args[0]))))),
);

/// `SHA224(s)`
pub const SHA224: Builtin =
    Builtin::new("SHA224", Arity::exactly(1), |f, t| digest_type(f, t, 56), |args, _| Ok(sha2_of(&args[0], 224)));

/// `SHA256(s)`
pub const SHA256: Builtin =
    Builtin::new("SHA256", Arity::exactly(1), |f, t| digest_type(f, t, 64), |args, _| Ok(sha2_of(&args[0], 256)));

/// `SHA384(s)`
pub const SHA384: Builtin =
    Builtin::new("SHA384", Arity::exactly(1), |f, t| digest_type(f, t, 96), |args, _| Ok(sha2_of(&args[0], 384)));

/// `SHA512(s)`
pub const SHA512: Builtin =
    Builtin::new("SHA512", Arity::exactly(1), |f, t| digest_type(f, t, 128), |args, _| Ok(sha2_of(&args[0], 512)));

/// The SHA-2 digest of `v` with `bits` bits, NULL for a length SHA-2 does not have.
fn sha2_of(v: &Value, bits: i64) -> Value {
    let data = bytes(v);
    let digest = match bits {
        224 => sha2::Sha224::digest(data).to_vec(),
        256 => sha2::Sha256::digest(data).to_vec(),
        384 => sha2::Sha384::digest(data).to_vec(),
        512 => sha2::Sha512::digest(data).to_vec(),
        _ => return Value::Null,
    };
    string(hex_lower(&digest))
}

/// `SHA2(s, bits)`: bits 224, 256, 384 or 512; another length fails.
pub const SHA2: Builtin = Builtin::new(
    "SHA2",
    Arity::exactly(2),
    |f, types| {
        f.expect(
            (is_string(types[0]) || is_binary(types[0])) && is_integer(types[1]),
            types,
            "<CHARACTER>, <INTEGER>",
        )?;
        // The longest digest's hex text (SHA-512), as Flink types it.
        Ok(nullable_if_any(DataType::new(LogicalType::Varchar(128)), types))
    },
    |args, _| match sha2_of(&args[0], args[1].as_i64().unwrap_or(0)) {
        Value::Null => Err(ExprError(format!(
            "SHA2 supports only the lengths 224, 256, 384 and 512, not {}",
            args[1].as_i64().unwrap_or(0)
        ))),
        digest => Ok(digest),
    },
);

/// The type rule of TO_BASE64: STRING, nullable as the argument.
fn base64_type(f: &Builtin, types: &[&DataType]) -> Result<DataType, ExprError> {
    f.expect(is_string(types[0]) || is_binary(types[0]), types, "<CHARACTER>")?;
    Ok(nullable_if_any(DataType::string(), types))
}

/// `TO_BASE64(s)`: the base-64 text of the UTF-8 bytes of a string, or of bytes.
pub const TO_BASE64: Builtin = Builtin::new("TO_BASE64", Arity::exactly(1), base64_type, |args, _| {
    Ok(string(base64::engine::general_purpose::STANDARD.encode(bytes(&args[0]))))
});

/// `FROM_BASE64(s)`: the bytes base-64 text stands for, read as UTF-8 (invalid text fails).
pub const FROM_BASE64: Builtin = Builtin::new(
    "FROM_BASE64",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(text(&args[0]))
            .map_err(|e| ExprError(format!("Illegal base64 character: {e}")))?;
        Ok(string(String::from_utf8_lossy(&decoded).into_owned()))
    },
);

/// `HEX(x)`: an integer as upper-case hex of its 64-bit two's complement, a string as the hex
/// of its UTF-8 bytes.
pub const HEX: Builtin = Builtin::new(
    "HEX",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_integer(types[0]) || is_string(types[0]), types, "<INTEGER_NUMERIC> | <CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| {
        Ok(string(match args[0].as_i64() {
            Some(n) if !matches!(args[0], Value::String(_)) => format!("{:X}", n as u64),
            _ => bytes(&args[0]).iter().map(|b| format!("{b:02X}")).collect(),
        }))
    },
);

/// `UNHEX(s)`: the bytes hex text stands for (an odd length starts with a half byte); NULL
/// when it holds a character that is no hex digit.
pub const UNHEX: Builtin = Builtin::new(
    "UNHEX",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(DataType::new(LogicalType::Varbinary(weir_runtime::types::MAX_LENGTH)))
    },
    |args, _| {
        let digits: Option<Vec<u8>> = text(&args[0]).chars().map(|c| c.to_digit(16).map(|d| d as u8)).collect();
        let Some(digits) = digits else { return Ok(Value::Null) };
        let mut out = Vec::with_capacity(digits.len().div_ceil(2));
        let (first, rest) = digits.split_at(digits.len() % 2);
        out.extend(first.iter().copied());
        out.extend(rest.chunks(2).map(|pair| (pair[0] << 4) | pair[1]));
        Ok(Value::Binary(out.into()))
    },
);

/// `BIN(n)`: the binary digits of an integer's 64-bit two's complement.
pub const BIN: Builtin = Builtin::new(
    "BIN",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_integer(types[0]), types, "<INTEGER_NUMERIC>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| Ok(string(format!("{:b}", args[0].as_i64().unwrap_or(0) as u64))),
);

/// `URL_ENCODE(s)`: Java's `URLEncoder.encode(s, UTF-8)`: letters, digits and `.-*_` stay, a
/// space is `+`, every other byte `%XX`.
pub const URL_ENCODE: Builtin = Builtin::new(
    "URL_ENCODE",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(DataType::string())
    },
    |args, _| {
        let mut out = String::new();
        for &b in text(&args[0]).as_bytes() {
            match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => out.push(b as char),
                b' ' => out.push('+'),
                _ => {
                    let _ = write!(out, "%{b:02X}");
                }
            }
        }
        Ok(string(out))
    },
);

/// `URL_DECODE(s)`: Java's `URLDecoder.decode(s, UTF-8)`; NULL for an invalid escape.
pub const URL_DECODE: Builtin = Builtin::new(
    "URL_DECODE",
    Arity::exactly(1),
    |f, types| {
        f.expect(is_string(types[0]), types, "<CHARACTER>")?;
        Ok(DataType::string())
    },
    |args, _| {
        let input = text(&args[0]).as_bytes();
        let mut out = Vec::with_capacity(input.len());
        let mut i = 0;
        while i < input.len() {
            match input[i] {
                b'+' => out.push(b' '),
                b'%' => {
                    let hex = input.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                    let Some(byte) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) else { return Ok(Value::Null) };
                    out.push(byte);
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        Ok(string(String::from_utf8_lossy(&out).into_owned()))
    },
);

/// The bytes of `s` in `charset` (the charsets every Java runtime has).
fn encode(s: &str, charset: &str) -> Result<Vec<u8>, ExprError> {
    Ok(match charset.to_ascii_uppercase().as_str() {
        "UTF-8" | "UTF8" => s.as_bytes().to_vec(),
        "US-ASCII" | "ASCII" => s.chars().map(|c| if c.is_ascii() { c as u8 } else { b'?' }).collect(),
        "ISO-8859-1" | "LATIN1" => s.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect(),
        "UTF-16BE" => s.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        "UTF-16LE" => s.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        "UTF-16" => [0xFE, 0xFF].into_iter().chain(s.encode_utf16().flat_map(u16::to_be_bytes)).collect(),
        _ => return Err(ExprError(charset.to_string())),
    })
}

/// `s` from its bytes in `charset`.
fn decode(b: &[u8], charset: &str) -> Result<String, ExprError> {
    let utf16 = |le: bool| {
        let units: Vec<u16> = b
            .chunks(2)
            .map(|p| {
                if le {
                    u16::from_le_bytes([p[0], *p.get(1).unwrap_or(&0)])
                } else {
                    u16::from_be_bytes([p[0], *p.get(1).unwrap_or(&0)])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    Ok(match charset.to_ascii_uppercase().as_str() {
        "UTF-8" | "UTF8" => String::from_utf8_lossy(b).into_owned(),
        "US-ASCII" | "ASCII" => b.iter().map(|&c| if c.is_ascii() { c as char } else { '\u{FFFD}' }).collect(),
        "ISO-8859-1" | "LATIN1" => b.iter().map(|&c| char::from(c)).collect(),
        "UTF-16BE" | "UTF-16" => utf16(false),
        "UTF-16LE" => utf16(true),
        _ => return Err(ExprError(charset.to_string())),
    })
}

/// `ENCODE(s, charset)`: the bytes of `s` in `charset`.
pub const ENCODE: Builtin = Builtin::new(
    "ENCODE",
    Arity::exactly(2),
    |f, types| {
        f.expect(is_string(types[0]) && is_string(types[1]), types, "<CHARACTER>, <CHARACTER>")?;
        Ok(nullable_if_any(DataType::new(LogicalType::Varbinary(weir_runtime::types::MAX_LENGTH)), types))
    },
    |args, _| Ok(Value::Binary(encode(text(&args[0]), text(&args[1]))?.into())),
);

/// `DECODE(b, charset)`: the string bytes `b` stand for in `charset`.
pub const DECODE: Builtin = Builtin::new(
    "DECODE",
    Arity::exactly(2),
    |f, types| {
        f.expect(is_binary(types[0]) && is_string(types[1]), types, "<BINARY>, <CHARACTER>")?;
        Ok(nullable_if_any(DataType::string(), types))
    },
    |args, _| Ok(string(decode(bytes(&args[0]), text(&args[1]))?)),
)
.with_nulls(Nulls::Strict);
