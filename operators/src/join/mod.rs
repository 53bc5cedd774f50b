//! Joins of two streams. [`RegularJoinOperator`] is Flink's streaming `Join`: INNER, LEFT,
//! RIGHT and FULL OUTER joins on equal keys with an optional extra condition, and the left semi
//! and anti joins of `IN` and `EXISTS`, over inputs that insert, update and delete, emitting the
//! changes of the joined result. [`IntervalJoinOperator`] pairs rows whose times are close
//! enough, keeping each only as long as the watermark allows a partner; [`WindowJoinOperator`]
//! joins the rows of each window once the window ends; [`TemporalJoinOperator`] joins each row
//! with the version of a versioned table valid at its time.

mod condition;
mod interval;
mod regular;
mod temporal;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod time_tests;
mod window;

pub use interval::{IntervalJoinOperator, IntervalJoinSpec};
pub use regular::{RegularJoinOperator, RegularJoinSpec};
pub use temporal::{TemporalJoinOperator, TemporalJoinSpec};
pub use window::{WindowJoinOperator, WindowJoinSpec};

use weir_runtime::{Chunk, RowKind, Value};

pub(crate) use condition::PairCondition;

/// Pushes `left` joined with `right` as a row of `kind`, NULLs standing in for a side that is
/// `None` (`arities`: the number of columns of each side).
pub(crate) fn push_pair(
    emitted: &mut Chunk,
    kind: RowKind,
    left: Option<&[Value]>,
    right: Option<&[Value]>,
    arities: [usize; 2],
) {
    emitted.push_with(kind, |values| {
        for (part, arity) in [(left, arities[0]), (right, arities[1])] {
            match part {
                Some(p) => values.extend_from_slice(p),
                None => values.extend(std::iter::repeat_n(Value::Null, arity)),
            }
        }
    });
}

/// Which rows a join keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinType {
    /// Pairs that match.
    Inner,
    /// Pairs that match, and each left row without a match, padded with NULLs.
    Left,
    /// Pairs that match, and each right row without a match, padded with NULLs.
    Right,
    /// Pairs that match, and the rows of either side without a match, padded with NULLs.
    Full,
    /// The left rows that have a match (`IN`, `EXISTS`), with the left columns only.
    LeftSemi,
    /// The left rows that have no match (`NOT EXISTS`), with the left columns only.
    LeftAnti,
}

impl JoinType {
    /// Flink's name, as EXPLAIN prints it (`InnerJoin`, `LeftOuterJoin`, …).
    pub fn name(self) -> &'static str {
        match self {
            JoinType::Inner => "InnerJoin",
            JoinType::Left => "LeftOuterJoin",
            JoinType::Right => "RightOuterJoin",
            JoinType::Full => "FullOuterJoin",
            JoinType::LeftSemi => "LeftSemiJoin",
            JoinType::LeftAnti => "LeftAntiJoin",
        }
    }

    /// Whether only the left rows come out (a semi or anti join).
    pub fn keeps_left_only(self) -> bool {
        matches!(self, JoinType::LeftSemi | JoinType::LeftAnti)
    }

    /// Whether the rows of side `input` (0 left, 1 right) without a match are kept.
    pub fn is_outer(self, input: usize) -> bool {
        match self {
            JoinType::Inner | JoinType::LeftSemi | JoinType::LeftAnti => false,
            JoinType::Left => input == 0,
            JoinType::Right => input == 1,
            JoinType::Full => true,
        }
    }
}

/// What one input's state holds per join key, as Flink sizes it (`JoinInputSideSpec`): the rows
/// by their unique key when the input has one (and, when the join key contains it, one row per
/// join key), else every distinct row with its count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinInputSideSpec {
    /// The join key contains a unique key of the input: at most one row per join key.
    JoinKeyContainsUniqueKey,
    /// The input has a unique key (these columns) that the join key does not contain.
    HasUniqueKey(Vec<usize>),
    /// No unique key is known.
    NoUniqueKey,
}

impl JoinInputSideSpec {
    /// Flink's text of the spec, as EXPLAIN prints it.
    pub fn name(&self) -> &'static str {
        match self {
            JoinInputSideSpec::JoinKeyContainsUniqueKey => "JoinKeyContainsUniqueKey",
            JoinInputSideSpec::HasUniqueKey(_) => "HasUniqueKey",
            JoinInputSideSpec::NoUniqueKey => "NoUniqueKey",
        }
    }
}
