//! Final rows: a changelog folded into the rows it leaves, emitted as inserts when the input
//! ends. In batch mode (`'execution.runtime-mode' = 'batch'`) results are final rows, as Flink's
//! batch operators produce them; this is what turns weir's streaming operators' updates into
//! that.
//!
//! With an upsert key, a row replaces the row of its key and `-U`/`-D` remove it; without one,
//! `+I`/`+U` add a row and `-U`/`-D` take back an equal one. Rows leave in the order of an
//! `ORDER BY` when there is one (batch `ORDER BY`, `ORDER BY … LIMIT`: Flink's batch `Sort` and
//! `SortLimit` emit sorted rows), rows equal under it in the order their key (or row) first
//! appeared; without one, in that order alone. All changes of a key must reach the same
//! subtask (they do behind the keyed operator that produced them), and a sorted result reaches
//! one subtask.

use hashbrown::HashMap;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result, RowKind, Value};

use crate::ranking::{compare_rows, SortKey};

/// Everything a [`FinalRowsOperator`] is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalRowsSpec {
    /// Columns of the rows.
    pub arity: usize,
    /// The input's upsert key, when it has one.
    pub key: Option<Vec<usize>>,
    /// The order the final rows leave in (empty: the order they first appeared).
    pub order: Vec<SortKey>,
}

impl crate::spec::OperatorSpec for FinalRowsSpec {
    type Operator = FinalRowsOperator;

    fn build(&self, _subtask: &weir_runtime::SubtaskInfo) -> FinalRowsOperator {
        FinalRowsOperator::new(self.arity, self.key.clone()).ordered_by(self.order.clone())
    }
}

/// Folds its input and emits the final rows at the end of input.
#[derive(Debug, Clone)]
pub struct FinalRowsOperator {
    key: Option<Vec<usize>>,
    order: Vec<SortKey>,
    arity: usize,
    /// Rows by arrival; `None` once taken back.
    rows: Vec<Option<Vec<Value>>>,
    /// Where the live rows of each key (or whole row, without a key) are.
    live: HashMap<Vec<Value>, Vec<usize>>,
}

impl FinalRowsOperator {
    /// Folds rows of `arity` columns; `key`: the columns of the input's upsert key, if it has one.
    pub fn new(arity: usize, key: Option<Vec<usize>>) -> Self {
        FinalRowsOperator { key, order: Vec::new(), arity, rows: Vec::new(), live: HashMap::new() }
    }

    /// Emits the final rows sorted by `order` (stable: equal rows in the order they appeared).
    pub fn ordered_by(mut self, order: Vec<SortKey>) -> Self {
        self.order = order;
        self
    }

    fn key_of(&self, row: &[Value]) -> Vec<Value> {
        match &self.key {
            Some(key) => key.iter().map(|&k| row[k].clone()).collect(),
            None => row.to_vec(),
        }
    }
}

impl Operator for FinalRowsOperator {
    fn name(&self) -> &str {
        "FinalRows"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> Result<()> {
        for (kind, row) in chunk.rows() {
            let key = self.key_of(row);
            let keyed = self.key.is_some();
            match kind {
                RowKind::Insert | RowKind::UpdateAfter => {
                    let at = self.live.entry(key).or_default();
                    if keyed {
                        // The key's row is replaced.
                        if let Some(old) = at.pop() {
                            self.rows[old] = None;
                        }
                    }
                    at.push(self.rows.len());
                    self.rows.push(Some(row.to_vec()));
                }
                RowKind::UpdateBefore | RowKind::Delete => {
                    if let Some(old) = self.live.get_mut(&key).and_then(Vec::pop) {
                        self.rows[old] = None;
                    }
                }
            }
        }
        Ok(())
    }

    fn end_of_input(&mut self, ctx: &mut OperatorContext, out: &mut Output) -> Result<()> {
        self.live.clear();
        let size = ctx.chunk_size();
        let mut chunk = Chunk::with_capacity(self.arity, size);
        let mut rows: Vec<Vec<Value>> = std::mem::take(&mut self.rows).into_iter().flatten().collect();
        if !self.order.is_empty() {
            rows.sort_by(|a, b| compare_rows(&self.order, a, b));
        }
        for row in rows {
            chunk.push(RowKind::Insert, &row);
            if chunk.len() == size {
                out.collect(std::mem::replace(&mut chunk, Chunk::with_capacity(self.arity, size)));
            }
        }
        if !chunk.is_empty() {
            out.collect(chunk);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::harness::OperatorHarness;

    #[test]
    fn a_keyed_changelog_leaves_its_last_row_per_key() {
        let mut h = OperatorHarness::new(FinalRowsOperator::new(2, Some(vec![0])));
        h.push("op | k STRING | n BIGINT\n+I | a | 1\n+I | b | 1\n-U | a | 1\n+U | a | 2\n-D | b | 1\n+I | c | 1\n+U | c | 5")
            .unwrap();
        assert!(h.take_lines().is_empty());
        h.end_input().unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 2]", "+I[c, 5]"]);
    }

    #[test]
    fn an_order_sorts_the_final_rows_stably() {
        let order = vec![SortKey::new(1, true), SortKey::new(0, false)];
        let mut h = OperatorHarness::new(FinalRowsOperator::new(2, None).ordered_by(order));
        h.push("op | k STRING | n BIGINT\n+I | b | 1\n+I | a | 3\n+I | c | null\n+I | d | 3\n-D | b | 1\n+I | e | 2")
            .unwrap();
        h.end_input().unwrap();
        assert_eq!(h.take_lines(), ["+I[a, 3]", "+I[d, 3]", "+I[e, 2]", "+I[c, null]"]);
    }

    #[test]
    fn without_a_key_retractions_take_back_equal_rows() {
        let mut h = OperatorHarness::new(FinalRowsOperator::new(1, None));
        h.push("op | n BIGINT\n+I | 1\n+I | 1\n+I | 2\n-U | 1\n+U | 3\n-D | 9").unwrap();
        h.end_input().unwrap();
        assert_eq!(h.take_lines(), ["+I[1]", "+I[2]", "+I[3]"]);
    }

    #[test]
    fn random_changelogs_fold_as_a_recomputation_says() {
        let mut random = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = |bound: u64| {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random % bound
        };
        for _ in 0..20 {
            // A keyed changelog as an aggregate emits it: per key +I, then -U/+U pairs, maybe -D.
            let mut current: std::collections::BTreeMap<i64, i64> = Default::default();
            let mut fixture = String::from("op | k BIGINT | v BIGINT\n");
            for _ in 0..200 {
                let k = next(10) as i64;
                let v = next(100) as i64;
                match current.get(&k).copied() {
                    None => fixture.push_str(&format!("+I | {k} | {v}\n")),
                    Some(old) if next(5) == 0 => {
                        fixture.push_str(&format!("-D | {k} | {old}\n"));
                        current.remove(&k);
                        continue;
                    }
                    Some(old) => fixture.push_str(&format!("-U | {k} | {old}\n+U | {k} | {v}\n")),
                }
                current.insert(k, v);
            }
            let mut h = OperatorHarness::new(FinalRowsOperator::new(2, Some(vec![0])));
            h.push(fixture.trim_end()).unwrap();
            h.end_input().unwrap();
            let mut got = h.take_lines();
            got.sort();
            let mut expected: Vec<String> = current.iter().map(|(k, v)| format!("+I[{k}, {v}]")).collect();
            expected.sort();
            assert_eq!(got, expected);
        }
    }
}
