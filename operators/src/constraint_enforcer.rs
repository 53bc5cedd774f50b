//! ConstraintEnforcer: the checks Flink runs on rows just before a sink writes them —
//! NOT NULL columns (`table.exec.sink.not-null-enforcer`) and the lengths of CHAR, VARCHAR,
//! BINARY and VARBINARY columns (`table.exec.sink.type-length-enforcer`).

use std::sync::Arc;

use weir_runtime::{Chunk, Error, Operator, OperatorContext, Output, Result, Value};

/// What to do with a NULL in a NOT NULL column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotNullEnforcement {
    /// Fail the job with Flink's message naming the column.
    Error,
    /// Drop the row silently.
    Drop,
}

/// What to do with a string or byte string whose length does not fit its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthEnforcement {
    /// Cut values longer than the column; pad shorter ones of a fixed-length column (spaces
    /// for CHAR, zero bytes for BINARY).
    TrimPad,
    /// Fail the job on a value longer than the column, or shorter than a fixed-length one.
    Error,
}

/// A column whose length is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LengthCheck {
    /// Column index.
    pub index: usize,
    /// The declared length: characters for strings, bytes for binary strings.
    pub length: usize,
    /// CHAR or BINARY: values are padded to the length.
    pub fixed: bool,
    /// BINARY or VARBINARY rather than CHAR or VARCHAR.
    pub binary: bool,
}

/// Checks the rows bound for a sink; see the module documentation.
#[derive(Debug, Clone)]
pub struct ConstraintEnforcerOperator {
    columns: Vec<String>,
    not_null: Vec<usize>,
    not_null_enforcement: NotNullEnforcement,
    lengths: Vec<LengthCheck>,
    length_enforcement: LengthEnforcement,
    name: String,
}

impl ConstraintEnforcerOperator {
    /// An enforcer over rows with the sink's `columns`, checking that the `not_null` columns
    /// hold no NULL and that the `lengths` columns fit. Named as Flink names it, e.g.
    /// `ConstraintEnforcer[NotNullEnforcer(fields=[id]), LengthEnforcer(fields=[name])]`.
    pub fn new(
        columns: Vec<String>,
        not_null: Vec<usize>,
        not_null_enforcement: NotNullEnforcement,
        lengths: Vec<LengthCheck>,
        length_enforcement: LengthEnforcement,
    ) -> Self {
        let name = enforcer_name(&columns, &not_null, &lengths);
        ConstraintEnforcerOperator { columns, not_null, not_null_enforcement, lengths, length_enforcement, name }
    }

    /// What to write for `row`, or the violation.
    fn enforce(&self, row: &[Value]) -> Result<Verdict> {
        for &index in &self.not_null {
            if row[index].is_null() {
                return match self.not_null_enforcement {
                    NotNullEnforcement::Drop => Ok(Verdict::Drop),
                    NotNullEnforcement::Error => Err(Error::execution(format!(
                        "Column '{}' is NOT NULL, however, a null value is being written into it. You can set job \
                         configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and \
                         drop such records silently.",
                        self.columns[index]
                    ))),
                };
            }
        }
        let mut fixed: Option<Vec<Value>> = None;
        for check in &self.lengths {
            let actual = match &row[check.index] {
                Value::String(s) => s.chars().count(),
                Value::Binary(b) => b.len(),
                _ => continue,
            };
            let fits = actual == check.length || (actual < check.length && !check.fixed);
            if fits {
                continue;
            }
            if self.length_enforcement == LengthEnforcement::Error {
                let kind = match (check.binary, check.fixed) {
                    (false, true) => "CHAR",
                    (false, false) => "VARCHAR",
                    (true, true) => "BINARY",
                    (true, false) => "VARBINARY",
                };
                return Err(Error::execution(format!(
                    "Column '{}' is {kind}({}), however, a string of length {actual} is being written into it. You \
                     can set job configuration 'table.exec.sink.type-length-enforcer' to control this behaviour.",
                    self.columns[check.index], check.length
                )));
            }
            let values = fixed.get_or_insert_with(|| row.to_vec());
            values[check.index] = trim_or_pad(&row[check.index], check.length);
        }
        Ok(fixed.map_or(Verdict::Keep, Verdict::Replace))
    }
}

/// What becomes of one row.
enum Verdict {
    /// Written as it is.
    Keep,
    /// Dropped (a NULL in a NOT NULL column under `DROP`).
    Drop,
    /// Written with trimmed or padded values.
    Replace(Vec<Value>),
}

/// Flink's operator name for the checks.
fn enforcer_name(columns: &[String], not_null: &[usize], lengths: &[LengthCheck]) -> String {
    let names = |indices: Vec<usize>| indices.iter().map(|&i| columns[i].as_str()).collect::<Vec<_>>().join(", ");
    let mut parts = Vec::new();
    if !not_null.is_empty() {
        parts.push(format!("NotNullEnforcer(fields=[{}])", names(not_null.to_vec())));
    }
    for binary in [false, true] {
        let fields: Vec<usize> = lengths.iter().filter(|c| c.binary == binary).map(|c| c.index).collect();
        if !fields.is_empty() {
            parts.push(format!("LengthEnforcer(fields=[{}])", names(fields)));
        }
    }
    format!("ConstraintEnforcer[{}]", parts.join(", "))
}

/// `value` cut to `length`, or padded to it (spaces for strings, zero bytes for binary).
fn trim_or_pad(value: &Value, length: usize) -> Value {
    match value {
        Value::String(s) => {
            let mut text: String = s.chars().take(length).collect();
            let count = text.chars().count();
            text.extend(std::iter::repeat_n(' ', length - count));
            Value::String(Arc::from(text))
        }
        Value::Binary(b) => {
            let mut bytes = b.to_vec();
            bytes.resize(length, 0);
            Value::Binary(Arc::from(bytes))
        }
        other => other.clone(),
    }
}

impl Operator for ConstraintEnforcerOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        out: &mut Output,
    ) -> Result<()> {
        // Columns without NULLs pass the NOT NULL checks as a whole, without reading rows.
        if self.lengths.is_empty() && chunk.is_columnar() {
            let arrays = chunk.columns().arrays();
            if self.not_null.iter().all(|&i| arrays[i].null_count() == 0) {
                out.collect(chunk);
                return Ok(());
            }
        }
        // A chunk whose rows all pass goes on as it is; the first row that does not starts a copy.
        let mut rebuilt: Option<Chunk> = None;
        for (at, (kind, row)) in chunk.rows().enumerate() {
            let verdict = self.enforce(row)?;
            if rebuilt.is_none() && matches!(verdict, Verdict::Keep) {
                continue;
            }
            let result = rebuilt.get_or_insert_with(|| {
                let mut copy = Chunk::with_capacity(chunk.arity(), chunk.len());
                chunk.rows().take(at).for_each(|(k, r)| copy.push(k, r));
                copy.set_origin_nanos(chunk.origin_nanos());
                copy
            });
            match verdict {
                Verdict::Keep => result.push(kind, row),
                Verdict::Drop => {}
                Verdict::Replace(values) => result.push(kind, &values),
            }
        }
        out.collect(rebuilt.unwrap_or(chunk));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    fn enforcer(not_null: NotNullEnforcement, length: LengthEnforcement) -> ConstraintEnforcerOperator {
        ConstraintEnforcerOperator::new(
            vec!["id".into(), "code".into(), "name".into()],
            vec![0],
            not_null,
            vec![
                LengthCheck { index: 1, length: 3, fixed: true, binary: false },
                LengthCheck { index: 2, length: 4, fixed: false, binary: false },
            ],
            length,
        )
    }

    const ROWS: &str = "op | id INT | code STRING | name STRING
        +I | 1 | ab | abcdef
        -U | null | abc | ab
        +U | 2 | abcd | abcd";

    #[test]
    fn drops_nulls_and_trims_and_pads_as_flink_does() {
        let op = enforcer(NotNullEnforcement::Drop, LengthEnforcement::TrimPad);
        assert_eq!(op.name(), "ConstraintEnforcer[NotNullEnforcer(fields=[id]), LengthEnforcer(fields=[code, name])]");
        let mut h = OperatorHarness::new(op);
        h.push(ROWS).unwrap();
        assert_eq!(h.take_lines(), ["+I[1, ab , abcd]", "+U[2, abc, abcd]"]);
    }

    #[test]
    fn errors_name_the_column_and_the_option() {
        let mut h = OperatorHarness::new(enforcer(NotNullEnforcement::Error, LengthEnforcement::TrimPad));
        let error = h.push(ROWS).unwrap_err().to_string();
        assert!(
            error.contains(
                "Column 'id' is NOT NULL, however, a null value is being written into it. You can set job \
                 configuration 'table.exec.sink.not-null-enforcer'='DROP'"
            ),
            "{error}"
        );
        let mut h = OperatorHarness::new(enforcer(NotNullEnforcement::Drop, LengthEnforcement::Error));
        let error = h.push(ROWS).unwrap_err().to_string();
        assert!(
            error.contains(
                "Column 'code' is CHAR(3), however, a string of length 2 is being written into it. You can set job \
                 configuration 'table.exec.sink.type-length-enforcer' to control this behaviour."
            ),
            "{error}"
        );
    }

    #[test]
    fn rows_before_the_first_violation_are_kept_in_order() {
        let mut h = OperatorHarness::new(enforcer(NotNullEnforcement::Drop, LengthEnforcement::TrimPad));
        h.push(
            "op | id INT | code STRING | name STRING
             +I | 1 | abc | ab
             +I | 2 | xyz | cd
             +I | null | abc | ab
             +I | 3 | q | efghij",
        )
        .unwrap();
        assert_eq!(h.take_lines(), ["+I[1, abc, ab]", "+I[2, xyz, cd]", "+I[3, q  , efgh]"]);
        h.push("op | id INT | code STRING | name STRING\n+I | 4 | abc | ab").unwrap();
        assert_eq!(h.take_lines(), ["+I[4, abc, ab]"]);
    }
}
