//! Flink's SQL types: the logical type of every column weir carries.
//!
//! A [`DataType`] is a [`LogicalType`] plus nullability and, for time attributes, the
//! rowtime / proctime marker. Types print as Flink prints them in `DESCRIBE` and EXPLAIN
//! (`INT NOT NULL`, `STRING`, `DECIMAL(10, 2)`, `TIMESTAMP(3) *ROWTIME*`).

use std::fmt;

/// Length Flink uses for `STRING` and `BYTES`: `VARCHAR(2147483647)`, `VARBINARY(2147483647)`.
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// The logical type of a value, without nullability.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LogicalType {
    /// `BOOLEAN`
    Boolean,
    /// `TINYINT`, an 8-bit signed integer.
    TinyInt,
    /// `SMALLINT`, a 16-bit signed integer.
    SmallInt,
    /// `INT`, a 32-bit signed integer.
    Int,
    /// `BIGINT`, a 64-bit signed integer.
    BigInt,
    /// `FLOAT`, a 32-bit IEEE 754 number.
    Float,
    /// `DOUBLE`, a 64-bit IEEE 754 number.
    Double,
    /// `DECIMAL(p, s)`: precision 1..=38, scale 0..=p.
    Decimal {
        /// Total number of digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// `CHAR(n)`, a fixed-length string.
    Char(u32),
    /// `VARCHAR(n)`; `STRING` is `VARCHAR(2147483647)`.
    Varchar(u32),
    /// `BINARY(n)`, fixed-length bytes.
    Binary(u32),
    /// `VARBINARY(n)`; `BYTES` is `VARBINARY(2147483647)`.
    Varbinary(u32),
    /// `DATE`, days since 1970-01-01.
    Date,
    /// `TIME(p)`, a time of day with fractional precision p (0..=9).
    Time(u8),
    /// `TIMESTAMP(p)`, a date-time without time zone.
    Timestamp(u8),
    /// `TIMESTAMP_LTZ(p)`, an instant on the time line.
    TimestampLtz(u8),
    /// `INTERVAL YEAR TO MONTH`, a number of months.
    IntervalYearMonth,
    /// `INTERVAL DAY TO SECOND(3)`, a number of milliseconds.
    IntervalDayTime,
    /// `ARRAY<t>`
    Array(Box<DataType>),
    /// `MAP<k, v>`
    Map(Box<DataType>, Box<DataType>),
    /// `MULTISET<t>`: a bag, held as a MAP from each element to its count (INT).
    Multiset(Box<DataType>),
    /// `ROW<name type, …>`
    Row(Vec<Field>),
}

/// Marks a column as an event-time or processing-time attribute, as Flink does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeAttribute {
    /// Event time: the column a `WATERMARK FOR` clause is declared on.
    Rowtime,
    /// Processing time: a `PROCTIME()` computed column.
    Proctime,
}

/// A logical type with nullability and an optional time-attribute marker.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataType {
    /// The type without nullability.
    pub logical: LogicalType,
    /// Whether `NULL` is a value of this type.
    pub nullable: bool,
    /// Set when the column is a time attribute.
    pub time_attribute: Option<TimeAttribute>,
}

/// A named, typed column of a row type or schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Column name as declared.
    pub name: String,
    /// Column type.
    pub data_type: DataType,
}

/// The columns of the rows that flow on a stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Schema {
    /// Columns in order.
    pub fields: Vec<Field>,
}

impl DataType {
    /// A nullable type of the given logical type.
    pub fn new(logical: LogicalType) -> Self {
        DataType { logical, nullable: true, time_attribute: None }
    }

    /// `BOOLEAN`
    pub fn boolean() -> Self {
        Self::new(LogicalType::Boolean)
    }
    /// `INT`
    pub fn int() -> Self {
        Self::new(LogicalType::Int)
    }
    /// `BIGINT`
    pub fn bigint() -> Self {
        Self::new(LogicalType::BigInt)
    }
    /// `DOUBLE`
    pub fn double() -> Self {
        Self::new(LogicalType::Double)
    }
    /// `STRING`
    pub fn string() -> Self {
        Self::new(LogicalType::Varchar(MAX_LENGTH))
    }
    /// `DECIMAL(precision, scale)`
    pub fn decimal(precision: u8, scale: u8) -> Self {
        Self::new(LogicalType::Decimal { precision, scale })
    }
    /// `TIMESTAMP(precision)`
    pub fn timestamp(precision: u8) -> Self {
        Self::new(LogicalType::Timestamp(precision))
    }

    /// The width in bits of TINYINT, SMALLINT, INT and BIGINT; `None` for other types.
    pub fn integer_bits(&self) -> Option<u8> {
        match self.logical {
            LogicalType::TinyInt => Some(8),
            LogicalType::SmallInt => Some(16),
            LogicalType::Int => Some(32),
            LogicalType::BigInt => Some(64),
            _ => None,
        }
    }

    /// The same type with `NOT NULL`.
    pub fn not_null(mut self) -> Self {
        self.nullable = false;
        self
    }

    /// The same type marked as a time attribute.
    pub fn with_time_attribute(mut self, attribute: TimeAttribute) -> Self {
        self.time_attribute = Some(attribute);
        self
    }
}

impl Field {
    /// A column named `name` of type `data_type`.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Field { name: name.into(), data_type }
    }
}

impl Schema {
    /// A schema of the given columns.
    pub fn new(fields: Vec<Field>) -> Self {
        Schema { fields }
    }

    /// Number of columns.
    pub fn arity(&self) -> usize {
        self.fields.len()
    }

    /// The index of the column named `name`, compared exactly.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

impl fmt::Display for LogicalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogicalType::Boolean => f.write_str("BOOLEAN"),
            LogicalType::TinyInt => f.write_str("TINYINT"),
            LogicalType::SmallInt => f.write_str("SMALLINT"),
            LogicalType::Int => f.write_str("INT"),
            LogicalType::BigInt => f.write_str("BIGINT"),
            LogicalType::Float => f.write_str("FLOAT"),
            LogicalType::Double => f.write_str("DOUBLE"),
            LogicalType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            LogicalType::Char(n) => write!(f, "CHAR({n})"),
            LogicalType::Varchar(MAX_LENGTH) => f.write_str("STRING"),
            LogicalType::Varchar(n) => write!(f, "VARCHAR({n})"),
            LogicalType::Binary(n) => write!(f, "BINARY({n})"),
            LogicalType::Varbinary(MAX_LENGTH) => f.write_str("BYTES"),
            LogicalType::Varbinary(n) => write!(f, "VARBINARY({n})"),
            LogicalType::Date => f.write_str("DATE"),
            LogicalType::Time(p) => write!(f, "TIME({p})"),
            LogicalType::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            LogicalType::TimestampLtz(p) => write!(f, "TIMESTAMP_LTZ({p})"),
            LogicalType::IntervalYearMonth => f.write_str("INTERVAL YEAR TO MONTH"),
            LogicalType::IntervalDayTime => f.write_str("INTERVAL DAY TO SECOND(3)"),
            LogicalType::Array(t) => write!(f, "ARRAY<{t}>"),
            LogicalType::Map(k, v) => write!(f, "MAP<{k}, {v}>"),
            LogicalType::Multiset(t) => write!(f, "MULTISET<{t}>"),
            LogicalType::Row(fields) => {
                f.write_str("ROW<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{}` {}", field.name, field.data_type)?;
                }
                f.write_str(">")
            }
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.logical)?;
        if !self.nullable {
            f.write_str(" NOT NULL")?;
        }
        match self.time_attribute {
            Some(TimeAttribute::Rowtime) => f.write_str(" *ROWTIME*"),
            Some(TimeAttribute::Proctime) => f.write_str(" *PROCTIME*"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_flink_prints_them() {
        assert_eq!(DataType::int().not_null().to_string(), "INT NOT NULL");
        assert_eq!(DataType::string().to_string(), "STRING");
        assert_eq!(DataType::new(LogicalType::Varchar(10)).to_string(), "VARCHAR(10)");
        assert_eq!(DataType::decimal(10, 2).to_string(), "DECIMAL(10, 2)");
        assert_eq!(
            DataType::timestamp(3).with_time_attribute(TimeAttribute::Rowtime).to_string(),
            "TIMESTAMP(3) *ROWTIME*"
        );
        let row = LogicalType::Row(vec![
            Field::new("a", DataType::int()),
            Field::new("b", DataType::new(LogicalType::Array(Box::new(DataType::string())))),
        ]);
        assert_eq!(row.to_string(), "ROW<`a` INT, `b` ARRAY<STRING>>");
        let map = LogicalType::Map(Box::new(DataType::string()), Box::new(DataType::bigint()));
        assert_eq!(map.to_string(), "MAP<STRING, BIGINT>");
    }
}
