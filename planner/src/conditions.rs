//! Conditions as lists of conjuncts, as Calcite keeps them: an AND is one flat n-ary call.

use weir_operators::expr::{Expr, Function};
use weir_runtime::DataType;

/// The conjuncts of `expr`: the arguments of its ANDs, however nested, or `expr` itself.
pub(crate) fn conjuncts(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::Call { function: Function::And, args, .. } => args.iter().flat_map(conjuncts).collect(),
        other => vec![other],
    }
}

/// The AND of `parts` as one flat call (a single part as it is); `None` when there are none.
pub(crate) fn conjunction(parts: Vec<Expr>) -> Option<Expr> {
    let mut flat: Vec<Expr> = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            Expr::Call { function: Function::And, args, .. } => flat.extend(args),
            other => flat.push(other),
        }
    }
    match flat.len() {
        0 => None,
        1 => flat.pop(),
        _ => Some(Expr::Call { function: Function::And, args: flat, ty: DataType::boolean() }),
    }
}

/// Whether `expr` is `a = b` of columns `a` and `b`, either way round.
pub(crate) fn is_equality(expr: &Expr, a: usize, b: usize) -> bool {
    match expr {
        Expr::Call { function: Function::Equals, args, .. } => matches!(
            args.as_slice(),
            [Expr::Column { index: x, .. }, Expr::Column { index: y, .. }] if (*x, *y) == (a, b) || (*x, *y) == (b, a)
        ),
        _ => false,
    }
}
