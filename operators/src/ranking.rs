//! What ranking operators share: ORDER BY keys and how they compare rows, Flink's ranking
//! functions, and the range of ranks a filter on the rank keeps.

use std::cmp::Ordering;

use weir_runtime::Value;

/// One key of an `ORDER BY`: a column, its direction, and where NULLs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    /// The column.
    pub column: usize,
    /// `DESC`.
    pub descending: bool,
    /// NULLs after every value (`NULLS LAST`).
    pub nulls_last: bool,
}

impl SortKey {
    /// A key with Flink's default NULL order: NULL is the smallest value, so NULLs come first
    /// ascending and last descending.
    pub fn new(column: usize, descending: bool) -> Self {
        SortKey { column, descending, nulls_last: descending }
    }
}

/// How row `a` compares with row `b` under `keys`, the first key first.
pub fn compare_rows(keys: &[SortKey], a: &[Value], b: &[Value]) -> Ordering {
    for key in keys {
        let (x, y) = (&a[key.column], &b[key.column]);
        let ordering = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if key.nulls_last => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, true) if key.nulls_last => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) if key.descending => y.cmp(x),
            (false, false) => x.cmp(y),
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

/// Flink's ranking functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankType {
    /// `ROW_NUMBER()`: 1, 2, 3, … whatever the ties.
    RowNumber,
    /// `RANK()`: ties share a rank, the next rank skips them.
    Rank,
    /// `DENSE_RANK()`: ties share a rank, the next rank follows it.
    DenseRank,
}

impl RankType {
    /// Flink's name (`ROW_NUMBER`), as EXPLAIN prints it.
    pub fn name(self) -> &'static str {
        match self {
            RankType::RowNumber => "ROW_NUMBER",
            RankType::Rank => "RANK",
            RankType::DenseRank => "DENSE_RANK",
        }
    }
}

/// The ranks a filter keeps, `start..=end` (both from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankRange {
    /// The first rank kept.
    pub start: u64,
    /// The last rank kept.
    pub end: u64,
}

impl RankRange {
    /// Whether `rank` is kept.
    pub fn contains(self, rank: u64) -> bool {
        self.start <= rank && rank <= self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_smallest_by_default_and_placed_where_asked() {
        let rows = [[Value::Int(2)], [Value::Null], [Value::Int(1)]];
        let sorted = |key: SortKey| {
            let mut rows = rows.to_vec();
            rows.sort_by(|a, b| compare_rows(&[key], a, b));
            rows.into_iter().map(|r| r[0].clone()).collect::<Vec<_>>()
        };
        assert_eq!(sorted(SortKey::new(0, false)), [Value::Null, Value::Int(1), Value::Int(2)]);
        assert_eq!(sorted(SortKey::new(0, true)), [Value::Int(2), Value::Int(1), Value::Null]);
        let nulls_last = SortKey { column: 0, descending: false, nulls_last: true };
        assert_eq!(sorted(nulls_last), [Value::Int(1), Value::Int(2), Value::Null]);
    }
}
