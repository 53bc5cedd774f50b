//! Calcs of Python calls as Flink's EXPLAIN prints them: Flink evaluates Python calls in a
//! `PythonCalc` of their own, split from the Java expressions around them
//! (`PythonCalcSplitRule`), where weir evaluates one Calc; EXPLAIN prints the split.

use weir_operators::expr::{Expr, Function};
use weir_operators::CalcSpec;
use weir_runtime::Field;

use crate::physical::op::calc::{calls_python, Calc};
use crate::physical::PhysicalNode;

/// Whether `e` is a Python call whose arguments are columns or such calls
/// (`add_one(add_one(x))`): Flink evaluates it in one PythonCalc.
fn is_python_tree(e: &Expr) -> bool {
    match e {
        Expr::Call { function: Function::Scalar(f), args, .. } if f.0.is_python() => {
            args.iter().all(|a| matches!(a, Expr::Column { .. }) || is_python_tree(a))
        }
        _ => false,
    }
}

/// `node` with each Calc of Python calls printed as Flink splits it:
///
/// - projections of columns and Python calls on columns: a `PythonCalc` of the calls over a
///   `Calc` of the columns they read (in the order they read them) and the condition;
/// - Python calls inside other expressions (`add_one(x) + 1`), without a condition: a
///   `PythonCalc` of the columns the other expressions read (first read first) and of the calls (`f0`, `f1`, …),
///   under a `Calc` of the other expressions over them.
///
/// Other Calcs with Python calls (one in the condition, one whose argument is another
/// expression) stay one Calc.
pub(super) fn split_python_calcs(mut node: PhysicalNode) -> PhysicalNode {
    node.inputs = std::mem::take(&mut node.inputs).into_iter().map(split_python_calcs).collect();
    let Some(Calc(CalcSpec { projections, condition })) = node.op::<Calc>() else { return node };
    if !projections.iter().any(calls_python) || condition.as_ref().is_some_and(calls_python) {
        return node;
    }
    let on_columns = |p: &Expr| match p {
        Expr::Column { .. } => true,
        Expr::Call { function: Function::Scalar(f), args, .. } => {
            f.0.is_python() && args.iter().all(|a| matches!(a, Expr::Column { .. }))
        }
        Expr::Call { .. } | Expr::Literal { .. } => false,
    };
    if projections.iter().all(on_columns) {
        return columns_under_calls(node);
    }
    let nested = projections.iter().any(|p| !is_python_tree(p) && calls_python(p));
    if nested && condition.is_none() {
        return calls_under_expressions(node);
    }
    node
}

/// A Calc of columns and Python calls on columns: the calls over a Calc of the columns they read
/// and the condition (the Calc as it is when it reads every column, in order, unfiltered).
fn columns_under_calls(node: PhysicalNode) -> PhysicalNode {
    let Some(Calc(CalcSpec { projections, condition })) = node.op::<Calc>() else { return node };
    let mut read = Vec::new();
    projections.iter().for_each(|p| p.columns_in_order(&mut read));
    let input = &node.inputs[0];
    if condition.is_none() && read.iter().copied().eq(0..input.fields.len()) {
        return node;
    }
    let lower = PhysicalNode {
        operator: Calc(CalcSpec {
            projections: read.iter().map(|&c| Expr::column(c, input.fields[c].data_type.clone())).collect(),
            condition: condition.clone(),
        })
        .into(),
        fields: read.iter().map(|&c| input.fields[c].clone()).collect(),
        changelog: node.changelog,
        parallelism: node.parallelism,
        inputs: vec![input.clone()],
    };
    let map: Vec<Option<usize>> = (0..input.fields.len()).map(|c| read.iter().position(|&r| r == c)).collect();
    let projections = projections.iter().map(|p| p.clone().remap(&map)).collect();
    PhysicalNode { operator: Calc(CalcSpec { projections, condition: None }).into(), inputs: vec![lower], ..node }
}

/// A Calc with Python calls inside other expressions (and no condition): a PythonCalc of the
/// columns those expressions read (in the order first read) and of every Python call (`f0`, `f1`,
/// … in the order they are written, a call written twice computed twice, as in Flink), under a Calc of the projections over them.
fn calls_under_expressions(node: PhysicalNode) -> PhysicalNode {
    let Some(Calc(CalcSpec { projections, .. })) = node.op::<Calc>() else { return node };
    let mut calls: Vec<Expr> = Vec::new();
    let mut columns: Vec<usize> = Vec::new();
    for p in projections {
        if !collect_calls(p, &mut calls, &mut columns) {
            return node;
        }
    }
    let input = &node.inputs[0];
    let mut fields: Vec<Field> = columns.iter().map(|&c| input.fields[c].clone()).collect();
    fields.extend(calls.iter().enumerate().map(|(i, call)| Field::new(format!("f{i}"), call.ty().clone())));
    let lower_projections = columns
        .iter()
        .map(|&c| Expr::column(c, input.fields[c].data_type.clone()))
        .chain(calls.iter().cloned())
        .collect();
    let lower = PhysicalNode {
        operator: Calc(CalcSpec { projections: lower_projections, condition: None }).into(),
        fields,
        changelog: node.changelog,
        parallelism: node.parallelism,
        inputs: vec![input.clone()],
    };
    let at = |c: usize| columns.iter().position(|&k| k == c).expect("a column the projections read");
    let mut next = 0;
    let projections = projections.iter().map(|p| over_calls(p, &mut next, columns.len(), &at)).collect();
    PhysicalNode { operator: Calc(CalcSpec { projections, condition: None }).into(), inputs: vec![lower], ..node }
}

/// Collects the Python calls of `e` into `calls` (each time one is written, as Flink computes
/// each) and marks the columns read outside
/// them in `used`; `false` when a Python call takes an argument that is neither a column nor a
/// Python call (Flink computes it in a Calc of its own first, which weir does not print).
fn collect_calls(e: &Expr, calls: &mut Vec<Expr>, columns: &mut Vec<usize>) -> bool {
    match e {
        _ if is_python_tree(e) => {
            calls.push(e.clone());
            true
        }
        Expr::Call { function: Function::Scalar(f), .. } if f.0.is_python() => false,
        Expr::Call { args, .. } => args.iter().all(|a| collect_calls(a, calls, columns)),
        Expr::Column { index, .. } => {
            if !columns.contains(index) {
                columns.push(*index);
            }
            true
        }
        Expr::Literal { .. } => true,
    }
}

/// `e` over the PythonCalc below: its Python calls, in the order [`collect_calls`] met them
/// (`next` counts them), as the columns after the `passed` ones; its other columns where `at`
/// puts them.
fn over_calls(e: &Expr, next: &mut usize, passed: usize, at: &dyn Fn(usize) -> usize) -> Expr {
    if is_python_tree(e) {
        *next += 1;
        return Expr::column(passed + *next - 1, e.ty().clone());
    }
    match e {
        Expr::Column { index, ty } => Expr::column(at(*index), ty.clone()),
        Expr::Literal { .. } => e.clone(),
        Expr::Call { function, args, ty } => Expr::Call {
            function: function.clone(),
            args: args.iter().map(|a| over_calls(a, next, passed, at)).collect(),
            ty: ty.clone(),
        },
    }
}
