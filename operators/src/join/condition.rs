//! The condition a join checks on each pair of rows it considers, besides finding the pair under
//! equal keys in its state.

use weir_runtime::{Error, LogicalType, Value};

use crate::expr::{compare_op, Cmp, Expr, Function};

/// The condition a join checks on each pair. The conjuncts that compare a column with a column
/// or a constant are checked on the two rows in place; the rest is evaluated on the joined row
/// (left columns, then right) built in a buffer kept between pairs. An equality of the two sides'
/// join-key columns, which the join's state lookup already guarantees, is reduced to its column
/// not being NULL (the lookup finds equal values, and SQL's `=` is true on them unless NULL).
#[derive(Debug, Clone)]
pub(crate) struct PairCondition {
    checks: Vec<Check>,
    rest: Option<Expr>,
    joined: Vec<Value>,
}

/// One conjunct checked in place.
#[derive(Debug, Clone)]
enum Check {
    /// `a op b`, TRUE when [`compare_op`] says so (never for a NULL operand).
    Compare { op: Cmp, a: Operand, b: Operand },
    /// The left row's join-key column at this position is not NULL.
    KeyNotNull(usize),
}

/// A comparison operand: a column of one side, or a constant.
#[derive(Debug, Clone)]
enum Operand {
    Left(usize),
    Right(usize),
    Constant(Value),
}

impl Operand {
    /// The operand's value for the pair `left`, `right`.
    fn of<'a>(&'a self, left: &'a [Value], right: &'a [Value]) -> &'a Value {
        match self {
            Operand::Left(i) => &left[*i],
            Operand::Right(i) => &right[*i],
            Operand::Constant(v) => v,
        }
    }
}

impl PairCondition {
    /// `condition` over the joined row of a left side `left_width` columns wide, for a join that
    /// pairs rows of equal `keys` (left and right key columns, position by position); no
    /// condition accepts every pair.
    pub(crate) fn new(condition: Option<Expr>, left_width: usize, keys: &[Vec<usize>; 2]) -> Self {
        let mut checks = Vec::new();
        let mut rest = Vec::new();
        for part in condition.map(conjuncts).unwrap_or_default() {
            match check_of(&part, left_width, keys) {
                Some(check) => checks.push(check),
                None => rest.push(part),
            }
        }
        let rest = match rest.len() {
            0 => None,
            1 => rest.pop(),
            _ => {
                let ty = rest[0].ty().clone();
                Some(Expr::Call { function: Function::And, args: rest, ty })
            }
        };
        PairCondition { checks, rest, joined: Vec::new() }
    }

    /// Whether the condition is TRUE on `left` joined with `right`.
    pub(crate) fn accepts(&mut self, left: &[Value], right: &[Value]) -> weir_runtime::Result<bool> {
        for check in &self.checks {
            let holds = match check {
                Check::KeyNotNull(i) => !left[*i].is_null(),
                Check::Compare { op, a, b } => compare_op(*op, a.of(left, right), b.of(left, right)) == Some(true),
            };
            if !holds {
                return Ok(false);
            }
        }
        let Some(rest) = &self.rest else { return Ok(true) };
        self.joined.clear();
        self.joined.extend_from_slice(left);
        self.joined.extend_from_slice(right);
        Ok(rest.eval(&self.joined).map_err(|e| Error::execution(e.0))? == Value::Boolean(true))
    }
}

/// The conjuncts of `condition` (itself when it is not an AND), taken apart.
fn conjuncts(condition: Expr) -> Vec<Expr> {
    match condition {
        Expr::Call { function: Function::And, args, .. } => args.into_iter().flat_map(conjuncts).collect(),
        other => vec![other],
    }
}

/// `part` as a check made in place, when it compares columns and constants.
fn check_of(part: &Expr, left_width: usize, keys: &[Vec<usize>; 2]) -> Option<Check> {
    let Expr::Call { function, args, .. } = part else { return None };
    let op = Cmp::of(function)?;
    let [a, b] = args.as_slice() else { return None };
    let operand = |e: &Expr| match e {
        Expr::Column { index, .. } if *index < left_width => Some(Operand::Left(*index)),
        Expr::Column { index, .. } => Some(Operand::Right(index - left_width)),
        Expr::Literal { value, .. } => Some(Operand::Constant(value.clone())),
        Expr::Call { .. } => None,
    };
    let (a_operand, b_operand) = (operand(a)?, operand(b)?);
    if let (Cmp::Eq, Some(left)) = (op, key_pair(&a_operand, &b_operand, keys)) {
        // Equal values under `compare` for every type but the floating-point ones (NaN).
        let floating = |e: &Expr| matches!(e.ty().logical, LogicalType::Float | LogicalType::Double);
        if !floating(a) && !floating(b) && a.ty().logical == b.ty().logical {
            return Some(Check::KeyNotNull(left));
        }
    }
    Some(Check::Compare { op, a: a_operand, b: b_operand })
}

/// The left column of `a = b` when the two are a pair of join-key columns.
fn key_pair(a: &Operand, b: &Operand, keys: &[Vec<usize>; 2]) -> Option<usize> {
    let (left, right) = match (a, b) {
        (Operand::Left(l), Operand::Right(r)) | (Operand::Right(r), Operand::Left(l)) => (*l, *r),
        _ => return None,
    };
    keys[0].iter().zip(&keys[1]).any(|(&kl, &kr)| kl == left && kr == right).then_some(left)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use weir_runtime::{DataType, Value};

    use super::PairCondition;
    use crate::expr::{Expr, Function};

    /// The columns of each side: `[k INT, a INT, x DOUBLE]`; `k` is the join key.
    const WIDTH: usize = 3;

    fn value(rng: &mut impl Rng, column: usize) -> Value {
        match (rng.random_range(0..6), column % WIDTH) {
            (0, _) => Value::Null,
            (_, 2) => Value::Double([f64::NAN, -1.5, 0.0, 2.0][rng.random_range(0..4)]),
            _ => Value::Int(rng.random_range(-2..3)),
        }
    }

    fn column(index: usize) -> Expr {
        let ty = if index % WIDTH == 2 { DataType::double() } else { DataType::int() };
        Expr::column(index, ty)
    }

    /// A comparison of two columns or a column and a constant, or a call the condition
    /// evaluates on the joined row (`a + 1 > x`).
    fn conjunct(rng: &mut impl Rng) -> Expr {
        let comparisons = [
            Function::Equals,
            Function::NotEquals,
            Function::Less,
            Function::LessOrEqual,
            Function::Greater,
            Function::GreaterOrEqual,
        ];
        let function = comparisons[rng.random_range(0..comparisons.len())].clone();
        let a = column(rng.random_range(0..2 * WIDTH));
        let b = match rng.random_range(0..4) {
            0 => Expr::literal(Value::Int(rng.random_range(-2..3)), DataType::int()),
            1 => Expr::call(Function::Plus, vec![column(1), Expr::literal(Value::Int(1), DataType::int())]).unwrap(),
            _ => column(rng.random_range(0..2 * WIDTH)),
        };
        Expr::call(function, vec![a, b]).unwrap()
    }

    /// Whatever the conjuncts, the pair condition accepts exactly the pairs (of equal join keys,
    /// as the join's state finds them) on whose joined row the whole condition is TRUE.
    #[test]
    fn a_pair_condition_accepts_what_the_whole_condition_accepts() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let keys = [vec![0], vec![0]];
        for round in 0..500 {
            let mut parts = vec![Expr::call(Function::Equals, vec![column(0), column(WIDTH)]).unwrap()];
            parts.extend((0..rng.random_range(0..4)).map(|_| conjunct(&mut rng)));
            let whole = if parts.len() == 1 { parts.pop().unwrap() } else { Expr::call(Function::And, parts).unwrap() };
            let mut pair = PairCondition::new(Some(whole.clone()), WIDTH, &keys);
            for _ in 0..20 {
                let left: Vec<Value> = (0..WIDTH).map(|c| value(&mut rng, c)).collect();
                let mut right: Vec<Value> = (0..WIDTH).map(|c| value(&mut rng, c)).collect();
                right[0] = left[0].clone();
                let joined: Vec<Value> = left.iter().chain(&right).cloned().collect();
                let expected = whole.eval(&joined).unwrap() == Value::Boolean(true);
                assert_eq!(pair.accepts(&left, &right).unwrap(), expected, "round {round}: {whole:?} on {joined:?}");
            }
        }
    }
}
