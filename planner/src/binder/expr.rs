//! Binding expressions: SQL syntax to typed [`Expr`] trees over a scope.

use crate::catalog::UserFunctions;
use sqlparser::ast::{self, BinaryOperator, CastKind, DateTimeField, Spanned, TrimWhereField, UnaryOperator};
use weir_operators::aggregate::AggregateCall;
use weir_operators::expr::functions::zoned::{InSessionZone, ZonedCast};
use weir_operators::expr::functions::{self, calendar, choice, collection, datetime, string, truth};
use weir_operators::expr::{like_regex_escaped, types::common_type, Expr, Function, TimeUnit, TrimSide};
use weir_runtime::parse::{parse_value, read_type, TypeError};
use weir_runtime::time_zone::TimeZone;
use weir_runtime::{DataType, LogicalType, Value};

use super::aggregate::{aggregate_call, is_aggregate};
use super::grouping_sets::{is_grouping_function, Grouping};
use super::scope::{position_of, Scope};
use crate::error::{Error, Position, Result};

/// What post-aggregation expressions may refer to: group keys and aggregate results.
#[derive(Debug, Default)]
pub struct AggregateContext {
    /// The GROUP BY expressions as written.
    pub group_asts: Vec<ast::Expr>,
    /// The scope of the aggregate's input.
    pub input_scope: Scope,
    /// Expressions over the input that feed the aggregate: the keys first, then arguments.
    pub input_exprs: Vec<Expr>,
    /// The aggregates found so far, with the calls they came from.
    pub calls: Vec<(ast::Expr, AggregateCall)>,
    /// The grouping sets over the keys (`None`: one set of every key).
    pub grouping: Option<Grouping>,
}

impl AggregateContext {
    /// Adds an expression to the aggregate's input and returns its column; an expression
    /// already there (compared structurally) is not added twice.
    pub fn input_column(&mut self, expr: Expr) -> usize {
        let text = format!("{expr:?}");
        if let Some(i) = self.input_exprs.iter().position(|e| format!("{e:?}") == text) {
            return i;
        }
        self.input_exprs.push(expr);
        self.input_exprs.len() - 1
    }

    fn key_count(&self) -> usize {
        self.group_asts.len()
    }

    /// The aggregate's output column of its first call: after the keys, and after the
    /// grouping set id `$e` when it runs over an Expand.
    pub fn first_call_column(&self) -> usize {
        self.key_count() + usize::from(self.grouping.as_ref().is_some_and(|g| g.expanded))
    }
}

/// Binds expressions over one scope, optionally above an aggregation.
pub struct ExprBinder<'a> {
    /// The visible columns (below an aggregation: the aggregate's output is resolved instead).
    pub scope: &'a Scope,
    /// Set when binding the SELECT list or HAVING of an aggregating query.
    pub aggregates: Option<&'a mut AggregateContext>,
    /// The functions created with `CREATE FUNCTION`, called before built-ins of the same name.
    pub functions: &'a UserFunctions,
    /// The session time zone (`table.local-time-zone`): calls that read or write its wall clock
    /// take it ([`InSessionZone`]).
    pub zone: TimeZone,
}

/// The deepest expression weir plans: operators evaluate expressions recursively, a level per
/// node, and this many levels fit the worker threads' stacks many times over. AND and OR chains
/// are one level, however long.
pub const MAX_EXPRESSION_DEPTH: usize = 10_000;

thread_local! {
    /// How deep the binder is in the expression it binds.
    static BIND_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn too_deep(node: &ast::Expr) -> Error {
    validation(
        node,
        format!(
            "The expression is more than {MAX_EXPRESSION_DEPTH} operations deep; weir plans expressions up to \
             that depth (AND and OR chains count once). Split it, or sum rows rather than columns."
        ),
    )
}

fn unsupported(node: &impl std::fmt::Display) -> Error {
    Error::Unsupported(format!("The expression '{node}'"))
}

fn validation(node: &impl Spanned, message: impl Into<String>) -> Error {
    Error::validation(position_of(node), message)
}

/// Refuses a `clause` condition (`WHERE`, `HAVING`, `ON`) that is not a BOOLEAN, as Calcite does:
/// `WHERE a` on an INT column would otherwise drop every row.
///
/// # Errors
/// `WHERE clause must be a condition`, at the condition.
pub fn expect_condition(condition: &Expr, clause: &str, node: &impl Spanned) -> Result<()> {
    if condition.is_null_literal() || matches!(condition.ty().logical, LogicalType::Boolean) {
        Ok(())
    } else {
        Err(validation(node, format!("{clause} clause must be a condition")))
    }
}

/// A SQL type written in a CAST or literal.
pub fn data_type(ty: &ast::DataType, at: Position) -> Result<DataType> {
    // A nested type the dialect read itself, named as weir writes it (a type with parameters,
    // `TIMESTAMP_LTZ(3)`, is read whole below).
    if let ast::DataType::Custom(name, modifiers) = ty {
        if let Some(nested) = crate::column_type::read_written_type(&name.to_string()).filter(|_| modifiers.is_empty())
        {
            return Ok(nested);
        }
    }
    read_type(&ty.to_string()).map_err(|e| match e {
        TypeError::InvalidParameters(message) => Error::validation(at, message),
        TypeError::NotAType => Error::validation(at, format!("Unsupported type {ty}")),
    })
}

fn time_unit(field: &DateTimeField) -> Option<TimeUnit> {
    Some(match field {
        DateTimeField::Year | DateTimeField::Years => TimeUnit::Year,
        DateTimeField::Quarter => TimeUnit::Quarter,
        DateTimeField::Month | DateTimeField::Months => TimeUnit::Month,
        DateTimeField::Week(_) | DateTimeField::Weeks => TimeUnit::Week,
        DateTimeField::Day | DateTimeField::Days => TimeUnit::Day,
        DateTimeField::Hour | DateTimeField::Hours => TimeUnit::Hour,
        DateTimeField::Minute | DateTimeField::Minutes => TimeUnit::Minute,
        DateTimeField::Second | DateTimeField::Seconds => TimeUnit::Second,
        DateTimeField::Millisecond | DateTimeField::Milliseconds => TimeUnit::Millisecond,
        _ => return None,
    })
}

/// The literal of a number as written: INT, BIGINT, DECIMAL(p, s) or DOUBLE.
fn number(text: &str, at: Position) -> Result<Expr> {
    let bad = || Error::validation(at, format!("Invalid number '{text}'"));
    if text.contains(['e', 'E']) {
        return Ok(Expr::literal(Value::Double(text.parse().map_err(|_| bad())?), DataType::double().not_null()));
    }
    if !text.contains('.') {
        if let Ok(v) = text.parse::<i32>() {
            return Ok(Expr::literal(Value::Int(v), DataType::int().not_null()));
        }
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Expr::literal(Value::BigInt(v), DataType::bigint().not_null()));
        }
    }
    let digits = text.chars().filter(char::is_ascii_digit).count().max(1);
    let scale = text.split_once('.').map_or(0, |(_, f)| f.len());
    let ty = DataType::decimal(digits.clamp(1, 38) as u8, scale.min(38) as u8).not_null();
    let value = parse_value(text, &ty).map_err(|_| bad())?;
    Ok(Expr::literal(value, ty))
}

/// A character literal: `CHAR(n) NOT NULL` of its `n` characters, as Flink types `'abc'`.
pub(super) fn string_literal(text: &str) -> Expr {
    let length = u32::try_from(text.chars().count()).unwrap_or(weir_runtime::types::MAX_LENGTH);
    Expr::literal(Value::string(text), DataType::new(LogicalType::Char(length)).not_null())
}

fn null_literal() -> Expr {
    Expr::literal(Value::Null, DataType::string())
}

/// The type `exprs` meet in (bare NULLs aside), or Flink's "Illegal mixing of types" naming
/// `what`; `None` when all are bare NULLs.
fn common_of(exprs: &[Expr], what: &str, at: Position) -> Result<Option<DataType>> {
    let mut common: Option<DataType> = None;
    for e in exprs.iter().filter(|e| !e.is_null_literal()) {
        common = Some(match common {
            None => e.ty().clone(),
            Some(c) => common_type(&c, e.ty()).ok_or_else(|| {
                Error::validation(at, format!("Illegal mixing of types in {what}: {} and {}", c, e.ty()))
            })?,
        });
    }
    Ok(common)
}

/// `exprs` with their bare NULLs typed as `common`, nullable.
fn typed_nulls(exprs: Vec<Expr>, common: &DataType) -> Vec<Expr> {
    let mut null_type = common.clone();
    null_type.nullable = true;
    exprs
        .into_iter()
        .map(|e| if e.is_null_literal() { Expr::literal(Value::Null, null_type.clone()) } else { e })
        .collect()
}

/// The arguments with their bare NULLs typed as the type the others meet in.
fn unify(exprs: Vec<Expr>, what: &str, at: Position) -> Result<Vec<Expr>> {
    Ok(match common_of(&exprs, what, at)? {
        Some(common) => typed_nulls(exprs, &common),
        None => exprs,
    })
}

/// `exprs` cast to the type they meet in (`ARRAY[1, 2.5]` holds DECIMALs), or Flink's
/// "Illegal mixing of types" naming `what`.
fn to_common_type(exprs: Vec<Expr>, what: &str, at: Position) -> Result<Vec<Expr>> {
    let Some(common) = common_of(&exprs, what, at)? else { return Ok(exprs) };
    Ok(typed_nulls(exprs, &common).into_iter().map(|e| e.cast_to(&common)).collect())
}

impl ExprBinder<'_> {
    pub(super) fn call(&self, function: Function, args: Vec<Expr>, node: &impl Spanned) -> Result<Expr> {
        let args = self.wall_clock_meets(args);
        let call = Expr::call(function, args).map_err(|e| validation(node, e.0))?;
        Ok(match call {
            Expr::Call { function: Function::Scalar(f), args, ty } => {
                let types: Vec<&DataType> = args.iter().map(Expr::ty).collect();
                let function = Function::Scalar(InSessionZone::wrap(&f, &types, self.zone).unwrap_or(f));
                Expr::Call { function, args, ty }
            }
            other => other,
        })
    }

    /// `args` where a TIMESTAMP_LTZ meets a TIMESTAMP (a comparison, the branches of a CASE, a
    /// COALESCE): each TIMESTAMP_LTZ cast to the TIMESTAMP of its wall-clock time in the session
    /// zone, as Flink's implicit cast takes them to their common type, TIMESTAMP. Other
    /// arguments as they are.
    fn wall_clock_meets(&self, args: Vec<Expr>) -> Vec<Expr> {
        let has = |ltz: bool| {
            args.iter().any(|a| match a.ty().logical {
                LogicalType::TimestampLtz(_) => ltz,
                LogicalType::Timestamp(_) => !ltz,
                _ => false,
            })
        };
        if !(has(true) && has(false)) {
            return args;
        }
        args.into_iter()
            .map(|arg| {
                let LogicalType::TimestampLtz(precision) = arg.ty().logical else { return arg };
                let mut target = DataType::new(LogicalType::Timestamp(precision));
                target.nullable = arg.ty().nullable;
                match ZonedCast::cast(arg.ty(), &target, self.zone) {
                    Some(zoned) => Expr::Call { function: Function::Scalar(zoned), args: vec![arg], ty: target },
                    None => arg.cast_to(&target),
                }
            })
            .collect()
    }

    /// Binds a chain of binary operators (`a + b - c`, `x = 1 OR x = 2 OR …`) along its left
    /// spine without recursion: machine-generated SQL chains thousands of them, and the parser
    /// builds them left-deep.
    fn binary_chain(&mut self, node: &ast::Expr) -> Result<Expr> {
        let mut spine = Vec::new();
        let mut leftmost = node;
        while let ast::Expr::BinaryOp { left, op, right } = leftmost {
            spine.push((op, right, leftmost));
            leftmost = left;
        }
        let mut bound = self.bind_node(leftmost)?;
        for (op, right, at) in spine.into_iter().rev() {
            let right = self.bind_node(right)?;
            bound = self.binary(op, bound, right, at)?;
        }
        Ok(bound)
    }

    /// `left op right`.
    fn binary(&self, op: &BinaryOperator, left: Expr, right: Expr, node: &ast::Expr) -> Result<Expr> {
        let function = match op {
            BinaryOperator::Plus => Function::Plus,
            BinaryOperator::Minus => Function::Minus,
            BinaryOperator::Multiply => Function::Times,
            BinaryOperator::Divide => Function::Divide,
            BinaryOperator::Modulo => Function::Modulo,
            BinaryOperator::Gt => Function::Greater,
            BinaryOperator::Lt => Function::Less,
            BinaryOperator::GtEq => Function::GreaterOrEqual,
            BinaryOperator::LtEq => Function::LessOrEqual,
            BinaryOperator::Eq => Function::Equals,
            BinaryOperator::NotEq => Function::NotEquals,
            BinaryOperator::And => Function::And,
            BinaryOperator::Or => Function::Or,
            BinaryOperator::StringConcat => Function::named("||"),
            _ => return Err(unsupported(node)),
        };
        // AND and OR are n-ary, as Calcite flattens them: a chain of a thousand ORs is one call
        // (evaluated without recursion), printed `OR(a, b, c)`.
        let same = |e: &Expr| {
            matches!(
                (e, &function),
                (Expr::Call { function: Function::And, .. }, Function::And)
                    | (Expr::Call { function: Function::Or, .. }, Function::Or)
            )
        };
        let mut args = Vec::new();
        for side in [left, right] {
            match side {
                Expr::Call { args: chain, .. } if same(&side) => args.extend(chain),
                side => args.push(side),
            }
        }
        self.call(function, args, node)
    }

    /// Binds `node`.
    ///
    /// # Errors
    /// Unknown columns or functions, type mismatches, expressions weir does not plan yet, and
    /// expressions more than [`MAX_EXPRESSION_DEPTH`] levels deep.
    pub fn bind(&mut self, node: &ast::Expr) -> Result<Expr> {
        let bound = self.bind_node(node)?;
        if bound.depth() > MAX_EXPRESSION_DEPTH {
            return Err(too_deep(node));
        }
        Ok(bound)
    }

    /// Binds `node`, a part of the expression [`ExprBinder::bind`] binds.
    pub(super) fn bind_node(&mut self, node: &ast::Expr) -> Result<Expr> {
        let nested = BIND_DEPTH.with(|d| d.replace(d.get() + 1));
        let bound = if nested >= MAX_EXPRESSION_DEPTH { Err(too_deep(node)) } else { self.bind_at(node) };
        BIND_DEPTH.with(|d| d.set(nested));
        bound
    }

    fn bind_at(&mut self, node: &ast::Expr) -> Result<Expr> {
        if let Some(agg) = self.aggregates.as_deref_mut() {
            if let Some(i) = agg.group_asts.iter().position(|g| g == node) {
                return Ok(Expr::column(i, agg.input_exprs[i].ty().clone()));
            }
            if let ast::Expr::Function(f) = node {
                if is_aggregate(&f.name.to_string(), self.functions) {
                    let index = match agg.calls.iter().position(|(a, _)| a == node) {
                        Some(i) => i,
                        None => {
                            let call = aggregate_call(f, agg, self.functions, self.zone)?;
                            agg.calls.push((node.clone(), call));
                            agg.calls.len() - 1
                        }
                    };
                    let ty = agg.calls[index].1.result_type.clone();
                    return Ok(Expr::column(agg.first_call_column() + index, ty));
                }
            }
        }
        if let ast::Expr::Function(f) = node {
            let name = f.name.to_string().to_ascii_uppercase();
            if is_grouping_function(&name) && f.over.is_none() {
                return self.grouping_function(&name, f, node);
            }
        }
        match node {
            ast::Expr::Identifier(ident) => self.column(node, std::slice::from_ref(ident)),
            ast::Expr::Array(array) => {
                let elements = array.elem.iter().map(|e| self.bind_node(e)).collect::<Result<Vec<_>>>()?;
                let elements = to_common_type(elements, "ARRAY", position_of(node))?;
                let constructor = functions::lookup(collection::ARRAY_CONSTRUCTOR).expect("ARRAY[…] is registered");
                self.call(Function::Scalar(constructor), elements, node)
            }
            ast::Expr::CompoundFieldAccess { root, access_chain } => {
                let mut bound = self.bind_node(root)?;
                for access in access_chain {
                    bound = match access {
                        ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => {
                            let index = self.bind_node(index)?;
                            self.item(bound, index, node)?
                        }
                        ast::AccessExpr::Dot(ast::Expr::Identifier(field)) => self.field(bound, &field.value, node)?,
                        _ => return Err(unsupported(node)),
                    };
                }
                Ok(bound)
            }
            ast::Expr::CompoundIdentifier(parts) => self.column(node, parts),
            ast::Expr::Nested(inner) => self.bind_node(inner),
            ast::Expr::Value(v) => self.value(&v.value, position_of(node)),
            ast::Expr::TypedString(t) => {
                let ty = data_type(&t.data_type, position_of(node))?;
                let text = t.value.value.clone().into_string().unwrap_or_default();
                let ty = match ty.logical {
                    // A literal's precision is its fraction's digits, as Calcite types it.
                    LogicalType::Timestamp(_) => {
                        let digits = text.split_once('.').map_or(0, |(_, f)| f.len()) as u8;
                        DataType::timestamp(digits)
                    }
                    LogicalType::Time(_) => {
                        let digits = text.trim().split_once('.').map_or(0, |(_, f)| f.len().min(9)) as u8;
                        DataType::new(LogicalType::Time(digits))
                    }
                    _ => ty,
                };
                let value = parse_value(&text, &ty).map_err(|e| validation(node, e.0))?;
                Ok(Expr::literal(value, ty.not_null()))
            }
            ast::Expr::BinaryOp { .. } => self.binary_chain(node),
            ast::Expr::UnaryOp { op, expr } => {
                let arg = self.bind_node(expr)?;
                match op {
                    UnaryOperator::Not => self.call(Function::Not, vec![arg], node),
                    UnaryOperator::Minus => self.call(Function::Negate, vec![arg], node),
                    UnaryOperator::Plus => Ok(arg),
                    _ => Err(unsupported(node)),
                }
            }
            ast::Expr::IsNull(e) => {
                let arg = self.bind_node(e)?;
                self.call(Function::IsNull, vec![arg], node)
            }
            ast::Expr::IsNotNull(e) => {
                let arg = self.bind_node(e)?;
                self.call(Function::IsNotNull, vec![arg], node)
            }
            ast::Expr::IsTrue(e) | ast::Expr::IsNotTrue(e) | ast::Expr::IsFalse(e) | ast::Expr::IsNotFalse(e) => {
                let test = match node {
                    ast::Expr::IsTrue(_) => "IS TRUE",
                    ast::Expr::IsNotTrue(_) => "IS NOT TRUE",
                    ast::Expr::IsFalse(_) => "IS FALSE",
                    _ => "IS NOT FALSE",
                };
                let arg = self.bind_node(e)?;
                self.call(Function::named(test), vec![arg], node)
            }
            // Flink plans `b IS [NOT] UNKNOWN` as `IS [NOT] NULL(b)`, for BOOLEAN operands only.
            ast::Expr::IsUnknown(e) | ast::Expr::IsNotUnknown(e) => {
                let negated = matches!(node, ast::Expr::IsNotUnknown(_));
                let arg = self.bind_node(e)?;
                let test = if negated { "IS NOT UNKNOWN" } else { "IS UNKNOWN" };
                truth::expect_boolean(test, arg.ty()).map_err(|e| validation(node, e.0))?;
                self.call(if negated { Function::IsNotNull } else { Function::IsNull }, vec![arg], node)
            }
            ast::Expr::InList { expr, list, negated } => {
                let mut args = vec![self.bind_node(expr)?];
                for item in list {
                    args.push(self.bind_node(item)?);
                }
                let args = unify(args, "IN", position_of(node))?;
                let found = self.call(Function::In, args, node)?;
                if *negated {
                    self.call(Function::Not, vec![found], node)
                } else {
                    Ok(found)
                }
            }
            ast::Expr::Between { expr, negated, low, high } => {
                // As Calcite expands it: `x >= low AND x <= high`, and NOT BETWEEN
                // `x < low OR x > high` (which a NaN makes false, not true).
                let (value, low, high) = (self.bind_node(expr)?, self.bind_node(low)?, self.bind_node(high)?);
                if *negated {
                    let below = self.call(Function::Less, vec![value.clone(), low], node)?;
                    let above = self.call(Function::Greater, vec![value, high], node)?;
                    self.call(Function::Or, vec![below, above], node)
                } else {
                    let above = self.call(Function::GreaterOrEqual, vec![value.clone(), low], node)?;
                    let below = self.call(Function::LessOrEqual, vec![value, high], node)?;
                    self.call(Function::And, vec![above, below], node)
                }
            }
            ast::Expr::SimilarTo { negated, expr, pattern, escape_char: None } => {
                let (value, pattern) = (self.bind_node(expr)?, self.bind_node(pattern)?);
                let Expr::Literal { value: Value::String(p), .. } = &pattern else { return Err(unsupported(node)) };
                let compiled = similar_regex(p).map_err(|e| validation(node, e))?;
                let similar = self.call(Function::Like(Some(compiled)), vec![value, pattern], node)?;
                if *negated {
                    self.call(Function::Not, vec![similar], node)
                } else {
                    Ok(similar)
                }
            }
            ast::Expr::Like { negated, expr, pattern, escape_char, any: false } => {
                let (value, pattern) = (self.bind_node(expr)?, self.bind_node(pattern)?);
                let escape = match escape_char {
                    None => None,
                    Some(ast::Value::SingleQuotedString(e)) if e.chars().count() == 1 => e.chars().next(),
                    Some(_) => return Err(unsupported(node)),
                };
                let compiled = match (&pattern, escape) {
                    (Expr::Literal { value: Value::String(p), .. }, _) => {
                        Some(like_regex_escaped(p, escape).map_err(|e| validation(node, e.0))?)
                    }
                    (_, None) => None,
                    (_, Some(_)) => return Err(unsupported(node)),
                };
                let like = self.call(Function::Like(compiled), vec![value, pattern], node)?;
                if *negated {
                    self.call(Function::Not, vec![like], node)
                } else {
                    Ok(like)
                }
            }
            ast::Expr::Case { operand, conditions, else_result, .. } => {
                let mut conditions_bound = Vec::new();
                let mut values = Vec::new();
                for when in conditions {
                    let condition = match operand {
                        Some(op) => {
                            let args = vec![self.bind_node(op)?, self.bind_node(&when.condition)?];
                            self.call(Function::Equals, args, node)?
                        }
                        None => {
                            let condition = self.bind_node(&when.condition)?;
                            if !condition.is_null_literal() && !matches!(condition.ty().logical, LogicalType::Boolean) {
                                return Err(validation(node, "Expected a boolean type"));
                            }
                            condition
                        }
                    };
                    conditions_bound.push(condition);
                    values.push(self.bind_node(&when.result)?);
                }
                let has_else = else_result.is_some();
                values.push(match else_result {
                    Some(e) => self.bind_node(e)?,
                    None => null_literal(),
                });
                let mut values = unify(values, "CASE", position_of(node))?.into_iter();
                let mut args = Vec::new();
                for condition in conditions_bound {
                    args.push(condition);
                    args.extend(values.next());
                }
                let otherwise = values.next();
                if has_else {
                    args.extend(otherwise);
                }
                self.call(Function::Case, args, node)
            }
            ast::Expr::Cast { kind, expr, data_type: ty, .. } => {
                let target = data_type(ty, position_of(node))?;
                let arg = self.bind_node(expr)?;
                if let Some(refused) = weir_operators::expr::cast::refused_cast(arg.ty(), &target) {
                    return Err(validation(node, refused));
                }
                let function = match kind {
                    CastKind::TryCast | CastKind::SafeCast => Function::TryCast,
                    _ => Function::Cast,
                };
                let mut target = target;
                target.nullable = arg.ty().nullable || matches!(function, Function::TryCast) || arg.is_null_literal();
                // A number cast to another integer type is a literal of it (Calcite reduces it).
                let integral = |t: &DataType| {
                    matches!(
                        t.logical,
                        LogicalType::TinyInt | LogicalType::SmallInt | LogicalType::Int | LogicalType::BigInt
                    )
                };
                if matches!(function, Function::Cast) {
                    if let Some(zoned) = ZonedCast::cast(arg.ty(), &target, self.zone) {
                        return Ok(Expr::Call { function: Function::Scalar(zoned), args: vec![arg], ty: target });
                    }
                }
                let cast = Expr::Call { function, args: vec![arg], ty: target };
                if let Expr::Call { args, ty, .. } = &cast {
                    if matches!(args[0], Expr::Literal { .. }) && integral(args[0].ty()) && integral(ty) {
                        if let Ok(value) = cast.eval(&[]) {
                            return Ok(Expr::literal(value, ty.clone()));
                        }
                    }
                }
                Ok(cast)
            }
            ast::Expr::Extract { field, expr, .. } => {
                let arg = self.bind_node(expr)?;
                let function = match time_unit(field) {
                    Some(unit) => datetime::UnitFunction::extract(unit),
                    None => {
                        let named = calendar::DateField::named(&field.to_string().to_ascii_uppercase());
                        calendar::ExtractField::of(named.ok_or_else(|| unsupported(node))?)
                    }
                };
                self.call(Function::Scalar(function), vec![arg], node)
            }
            ast::Expr::Ceil { expr, field: ast::CeilFloorKind::DateTimeField(field) }
            | ast::Expr::Floor { expr, field: ast::CeilFloorKind::DateTimeField(field) }
                if *field != DateTimeField::NoDateTime =>
            {
                let unit = time_unit(field).ok_or_else(|| unsupported(node))?;
                let arg = self.bind_node(expr)?;
                let ceil = matches!(node, ast::Expr::Ceil { .. });
                self.call(Function::Scalar(calendar::TimeFloor::of(unit, ceil)), vec![arg], node)
            }
            ast::Expr::IsNotDistinctFrom(a, b) | ast::Expr::IsDistinctFrom(a, b) => {
                // A bare NULL takes the other side's type, as Flink's NULL literal does.
                let (a, b) = (self.bind_node(a)?, self.bind_node(b)?);
                let typed_null = |other: &Expr| {
                    let mut ty = other.ty().clone();
                    (ty.nullable, ty.time_attribute) = (true, None);
                    Expr::literal(Value::Null, ty)
                };
                let args = match (a.is_null_literal(), b.is_null_literal()) {
                    (false, true) => {
                        let null = typed_null(&a);
                        vec![a, null]
                    }
                    (true, false) => vec![typed_null(&b), b],
                    _ => vec![a, b],
                };
                let same = self.call(Function::named(choice::NOT_DISTINCT), args, node)?;
                if matches!(node, ast::Expr::IsDistinctFrom(..)) {
                    self.call(Function::Not, vec![same], node)
                } else {
                    Ok(same)
                }
            }
            ast::Expr::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
                let mut args =
                    vec![self.bind_node(expr)?, self.bind_node(overlay_what)?, self.bind_node(overlay_from)?];
                if let Some(length) = overlay_for {
                    args.push(self.bind_node(length)?);
                }
                self.call(Function::named("OVERLAY"), args, node)
            }
            ast::Expr::Position { expr, r#in } => {
                let args = vec![self.bind_node(expr)?, self.bind_node(r#in)?];
                self.call(Function::named("POSITION"), args, node)
            }
            ast::Expr::Substring { expr, substring_from, substring_for, .. } => {
                let mut args = vec![self.bind_node(expr)?];
                // Flink's parser needs the start: `SUBSTRING(s)` stops at its `)`.
                let Some(from) = substring_from else {
                    // The span ends where the `)` is.
                    let end = node.span().end;
                    let at = Position { line: end.line, column: end.column };
                    return Err(Error::Parse {
                        position: at,
                        message: format!("Encountered \")\" at line {}, column {}.", at.line, at.column),
                    });
                };
                args.push(self.bind_node(from)?);
                if let Some(length) = substring_for {
                    args.push(self.bind_node(length)?);
                }
                self.call(Function::named("SUBSTRING"), args, node)
            }
            ast::Expr::Trim { expr, trim_where, trim_what, trim_characters: None } => {
                let side = match trim_where {
                    Some(TrimWhereField::Leading) => TrimSide::Leading,
                    Some(TrimWhereField::Trailing) => TrimSide::Trailing,
                    _ => TrimSide::Both,
                };
                let chars = match trim_what {
                    Some(w) => self.bind_node(w)?,
                    None => Expr::literal(Value::string(" "), DataType::string().not_null()),
                };
                let args = vec![self.bind_node(expr)?, chars];
                self.call(Function::Scalar(string::Trim::of(side)), args, node)
            }
            ast::Expr::Ceil { expr, field: ast::CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) } => {
                let arg = self.bind_node(expr)?;
                self.call(Function::named("CEIL"), vec![arg], node)
            }
            ast::Expr::Floor { expr, field: ast::CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) } => {
                let arg = self.bind_node(expr)?;
                self.call(Function::named("FLOOR"), vec![arg], node)
            }
            ast::Expr::Function(f) => self.function(f, node),
            ast::Expr::Interval(interval) => self.interval(interval, node),
            _ => Err(unsupported(node)),
        }
    }

    /// `INTERVAL '5' SECOND`, `INTERVAL '2' MONTH`, …
    fn interval(&mut self, interval: &ast::Interval, node: &ast::Expr) -> Result<Expr> {
        let text = match &*interval.value {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::Number(s, _) => s.clone(),
                _ => return Err(unsupported(node)),
            },
            _ => return Err(unsupported(node)),
        };
        let unit = interval.leading_field.as_ref().and_then(time_unit).ok_or_else(|| unsupported(node))?;
        let invalid = || validation(node, format!("Invalid interval '{text}'"));
        if let Some(last) = interval.last_field.as_ref() {
            let last = time_unit(last).ok_or_else(|| unsupported(node))?;
            return compound_interval(text.trim(), unit, last).ok_or_else(invalid);
        }
        if let (TimeUnit::Second, Some((whole, fraction))) = (unit, text.trim().split_once('.')) {
            // Fractional seconds, kept to the millisecond as Flink keeps day-time intervals.
            let negative = whole.starts_with('-');
            let whole: i64 = if whole.is_empty() || whole == "-" { 0 } else { whole.parse().map_err(|_| invalid())? };
            if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            let millis: i64 = format!("{fraction:0<3}")[..3].parse().map_err(|_| invalid())?;
            let value = whole * 1000 + if negative { -millis } else { millis };
            return Ok(Expr::literal(
                Value::IntervalDayTime(value),
                DataType::new(LogicalType::IntervalDayTime).not_null(),
            ));
        }
        let amount: i64 = text.trim().parse().map_err(|_| invalid())?;
        let (value, logical) = match unit {
            TimeUnit::Year => (Value::IntervalYearMonth((amount * 12) as i32), LogicalType::IntervalYearMonth),
            TimeUnit::Quarter => (Value::IntervalYearMonth((amount * 3) as i32), LogicalType::IntervalYearMonth),
            TimeUnit::Month => (Value::IntervalYearMonth(amount as i32), LogicalType::IntervalYearMonth),
            TimeUnit::Week => (Value::IntervalDayTime(amount * 7 * 86_400_000), LogicalType::IntervalDayTime),
            TimeUnit::Day => (Value::IntervalDayTime(amount * 86_400_000), LogicalType::IntervalDayTime),
            TimeUnit::Hour => (Value::IntervalDayTime(amount * 3_600_000), LogicalType::IntervalDayTime),
            TimeUnit::Minute => (Value::IntervalDayTime(amount * 60_000), LogicalType::IntervalDayTime),
            TimeUnit::Second => (Value::IntervalDayTime(amount * 1000), LogicalType::IntervalDayTime),
            TimeUnit::Millisecond => (Value::IntervalDayTime(amount), LogicalType::IntervalDayTime),
        };
        Ok(Expr::literal(value, DataType::new(logical).not_null()))
    }

    fn column(&mut self, node: &ast::Expr, parts: &[ast::Ident]) -> Result<Expr> {
        if self.aggregates.is_some() {
            return Err(validation(node, format!("Expression '{node}' is not being grouped")));
        }
        let unresolved = match self.scope.resolve(parts) {
            Ok((index, ty)) => return Ok(Expr::column(index, ty)),
            Err(error) => error,
        };
        // `PI` without parentheses, as Calcite reads it when no column has that name.
        if let [name] = parts {
            if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("PI") {
                return self.call(Function::named("PI"), Vec::new(), node);
            }
        }
        // `meta.device`, `t.meta.device`: a ROW column and the path of fields into it.
        for column_parts in (1..parts.len()).rev() {
            let Ok((index, ty)) = self.scope.resolve(&parts[..column_parts]) else { continue };
            if !matches!(ty.logical, LogicalType::Row(_)) {
                continue;
            }
            let mut bound = Expr::column(index, ty);
            for field in &parts[column_parts..] {
                match self.field(bound, &field.value, node) {
                    Ok(inner) => bound = inner,
                    Err(_) => return Err(unresolved),
                }
            }
            return Ok(bound);
        }
        Err(unresolved)
    }

    /// Field `name` of the ROW `row` (`row.name`).
    fn field(&self, row: Expr, name: &str, node: &ast::Expr) -> Result<Expr> {
        let LogicalType::Row(fields) = &row.ty().logical else {
            return Err(validation(node, format!("'{name}' is a field of a ROW, not of {}", row.ty())));
        };
        let index = fields
            .iter()
            .position(|f| f.name == name)
            .ok_or_else(|| validation(node, format!("Unknown field '{name}' of {}", row.ty())))?;
        self.call(Function::Scalar(collection::FieldAccess::of(name, index)), vec![row], node)
    }

    /// `collection[index]`: an element of an ARRAY (from 1) or the value of a MAP's key.
    fn item(&self, collection: Expr, index: Expr, node: &ast::Expr) -> Result<Expr> {
        if let (LogicalType::Array(_), Expr::Literal { value, .. }) = (&collection.ty().logical, &index) {
            if let Some(i) = value.as_i64().filter(|&i| i < 1) {
                return Err(validation(
                    node,
                    format!("Array element access needs an index starting at 1 but was {i}."),
                ));
            }
        }
        let item = functions::lookup("ITEM").expect("ITEM is registered");
        self.call(Function::Scalar(item), vec![collection, index], node)
    }

    fn value(&self, v: &ast::Value, at: Position) -> Result<Expr> {
        match v {
            ast::Value::Number(text, _) => number(text, at),
            ast::Value::SingleQuotedString(s) | ast::Value::UnicodeStringLiteral(s) => Ok(string_literal(s)),
            ast::Value::Boolean(b) => Ok(Expr::literal(Value::Boolean(*b), DataType::boolean().not_null())),
            ast::Value::Null => Ok(null_literal()),
            ast::Value::HexStringLiteral(hex) => {
                let bytes = decode_hex(hex).ok_or_else(|| {
                    Error::validation(
                        at,
                        format!("Invalid binary literal X'{hex}': expected pairs of hexadecimal digits"),
                    )
                })?;
                let ty = DataType::new(LogicalType::Binary(bytes.len().max(1) as u32)).not_null();
                Ok(Expr::literal(Value::Binary(bytes.into()), ty))
            }
            other => Err(Error::validation(at, format!("Unsupported literal {other}"))),
        }
    }

    /// `GROUPING(k…)`, `GROUPING_ID(k…)` or `GROUP_ID()` in the SELECT list or HAVING of an
    /// aggregating query: which of the keys `k` the row's grouping set leaves out.
    fn grouping_function(&mut self, name: &str, f: &ast::Function, node: &ast::Expr) -> Result<Expr> {
        let raw = self.args(f)?;
        let Some(agg) = self.aggregates.as_deref() else {
            return Err(validation(node, format!("{name} operator may only occur in an aggregate query")));
        };
        if name == "GROUP_ID" {
            if !raw.is_empty() {
                return Err(validation(
                    node,
                    "Invalid number of arguments to function 'GROUP_ID'. Was expecting 0 arguments",
                ));
            }
            // Each grouping set occurs once (a repeated one is refused), so every row's is 0.
            return Ok(Expr::literal(Value::BigInt(0), DataType::bigint().not_null()));
        }
        if raw.is_empty() {
            return Err(validation(node, format!("Invalid number of arguments to function '{name}'")));
        }
        let mut keys = Vec::with_capacity(raw.len());
        for arg in &raw {
            let key = match agg.group_asts.iter().position(|g| g == arg) {
                Some(k) => Some(k),
                None => {
                    let mut over_input = ExprBinder {
                        scope: &agg.input_scope,
                        aggregates: None,
                        functions: self.functions,
                        zone: self.zone,
                    };
                    let bound = over_input.bind_node(arg).ok().map(|e| format!("{e:?}"));
                    agg.input_exprs[..agg.key_count()].iter().position(|k| Some(format!("{k:?}")) == bound)
                }
            };
            let Some(key) = key else {
                return Err(validation(arg, "Argument to GROUPING operator must be a grouped expression"));
            };
            keys.push(key);
        }
        let grouping = agg.grouping.clone().unwrap_or_else(|| Grouping::plain(agg.key_count()));
        Ok(grouping.grouping_id(&keys, agg.key_count()))
    }

    fn args(&mut self, f: &ast::Function) -> Result<Vec<ast::Expr>> {
        match &f.args {
            ast::FunctionArguments::None => Ok(Vec::new()),
            ast::FunctionArguments::List(list) => list
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e.clone()),
                    other => Err(Error::Unsupported(format!("The argument '{other}'"))),
                })
                .collect(),
            ast::FunctionArguments::Subquery(_) => Err(Error::Unsupported(format!("The call '{f}'"))),
        }
    }

    /// The types of the arguments `raw` of an unknown function, for Flink's "No match found"
    /// message: that is the error, whatever else is wrong with the arguments. In a grouped
    /// query an argument that is not grouped is typed over the aggregate's input.
    fn argument_types(&mut self, raw: &[ast::Expr]) -> Result<Vec<DataType>> {
        let mut types = Vec::with_capacity(raw.len());
        for arg in raw {
            let ty = match self.bind_node(arg) {
                Ok(bound) => bound.ty().clone(),
                Err(error) => {
                    let Some(agg) = self.aggregates.as_deref() else { return Err(error) };
                    let mut over_input = ExprBinder {
                        scope: &agg.input_scope,
                        aggregates: None,
                        functions: self.functions,
                        zone: self.zone,
                    };
                    over_input.bind_node(arg).map_err(|_| error)?.ty().clone()
                }
            };
            types.push(ty);
        }
        Ok(types)
    }

    fn function(&mut self, f: &ast::Function, node: &ast::Expr) -> Result<Expr> {
        let name = f.name.to_string().to_ascii_uppercase();
        if is_aggregate(&name, self.functions) {
            return Err(validation(node, format!("Aggregate function '{name}' is not allowed here")));
        }
        if f.over.is_some() {
            return Err(Error::Unsupported("OVER windows".into()));
        }
        if let Some(bound) = super::json::bind(self, &name, f, node)? {
            return Ok(bound);
        }
        let raw = self.args(f)?;
        let unit_arg = |e: &ast::Expr| match e {
            ast::Expr::Identifier(i) => TimeUnit::named(&i.value),
            _ => None,
        };
        match name.as_str() {
            "TIMESTAMPADD" | "TIMESTAMPDIFF" if raw.len() == 3 => {
                let unit = unit_arg(&raw[0]).ok_or_else(|| validation(&raw[0], "Unknown time unit"))?;
                let args = vec![self.bind_node(&raw[1])?, self.bind_node(&raw[2])?];
                let function = if name == "TIMESTAMPADD" {
                    datetime::UnitFunction::timestamp_add(unit)
                } else {
                    datetime::UnitFunction::timestamp_diff(unit)
                };
                let function = Function::Scalar(function);
                return self.call(function, args, node);
            }
            _ => {}
        }
        let user = self.functions.get(&name).map(|f| Function::Scalar(f.clone()));
        let Some(function) = user.or_else(|| Function::by_name(&name)) else {
            let types = self.argument_types(&raw)?;
            // Named as written, as Calcite names an unknown function.
            let written = f.name.to_string();
            return Err(validation(node, functions::no_match(&written, &types.iter().collect::<Vec<_>>()).0));
        };
        // Calcite types IF's branches from each other and refuses a bare NULL among them.
        if matches!(function, Function::If) {
            let bare_null = |e: &&ast::Expr| matches!(e, ast::Expr::Value(v) if v.value == ast::Value::Null);
            if let Some(null) = raw.iter().skip(1).find(bare_null) {
                return Err(validation(null, "Illegal use of 'NULL'"));
            }
        }
        let mut args = raw.iter().map(|a| self.bind_node(a)).collect::<Result<Vec<_>>>()?;
        // Flink reads and writes bags but its code generator takes neither CARDINALITY nor
        // UNNEST of one; weir refuses them with its words.
        if name == "CARDINALITY" && args.first().is_some_and(|a| matches!(a.ty().logical, LogicalType::Multiset(_))) {
            return Err(Error::Table("Expect an array or a map.".into()));
        }
        if matches!(function, Function::Coalesce) {
            args = unify(args, "COALESCE", position_of(node))?;
        }
        match name.as_str() {
            collection::MAP_CONSTRUCTOR if args.len() % 2 == 0 => {
                let (mut keys, mut values) = (Vec::new(), Vec::new());
                for (i, arg) in args.into_iter().enumerate() {
                    if i % 2 == 0 {
                        keys.push(arg)
                    } else {
                        values.push(arg)
                    }
                }
                let keys = to_common_type(keys, "MAP", position_of(node))?;
                let values = to_common_type(values, "MAP", position_of(node))?;
                args = keys.into_iter().zip(values).flat_map(|(k, v)| [k, v]).collect();
            }
            _ => {}
        }
        if matches!(function, Function::If) && args.len() == 3 {
            let branches = unify(args.split_off(1), "IF", position_of(node))?;
            args.extend(branches);
        }
        if matches!(function, Function::NullIf) {
            args = unify(args, "NULLIF", position_of(node))?;
        }
        self.call(function, args, node)
    }
}

/// The bytes of a hexadecimal literal (`X'0A1b'`), when it has an even number of hex digits.
fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

/// `INTERVAL 'y-m' YEAR TO MONTH` and `INTERVAL 'd hh:mm:ss[.fff]' DAY TO SECOND` (or a shorter
/// run of its fields: `'hh:mm' HOUR TO MINUTE`, …), as a literal; `None` for text that does
/// not fit the fields.
fn compound_interval(text: &str, first: TimeUnit, last: TimeUnit) -> Option<Expr> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let sign = if negative { -1 } else { 1 };
    if first == TimeUnit::Year {
        let (years, months) = text.split_once('-')?;
        let months = years.parse::<i64>().ok()? * 12 + months.parse::<i64>().ok().filter(|m| *m < 12)?;
        let value = Value::IntervalYearMonth(i32::try_from(sign * months).ok()?);
        return Some(Expr::literal(value, DataType::new(LogicalType::IntervalYearMonth).not_null()));
    }
    // The fields from `first` to `last`, separated by a space (after days), `:` or `.`.
    let units = [TimeUnit::Day, TimeUnit::Hour, TimeUnit::Minute, TimeUnit::Second];
    let from = units.iter().position(|u| *u == first)?;
    let to = units.iter().position(|u| *u == last)?;
    let parts: Vec<&str> = text.split([' ', ':']).collect();
    if parts.len() != to - from + 1 {
        return None;
    }
    let scale = [86_400_000i64, 3_600_000, 60_000, 1000];
    let mut millis = 0i64;
    for (i, part) in parts.iter().enumerate() {
        let unit = from + i;
        let (whole, fraction) = part.split_once('.').unwrap_or((part, ""));
        millis += whole.parse::<i64>().ok()? * scale[unit];
        if !fraction.is_empty() {
            if unit != 3 || !fraction.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            millis += format!("{fraction:0<3}")[..3].parse::<i64>().ok()?;
        }
    }
    Some(Expr::literal(Value::IntervalDayTime(sign * millis), DataType::new(LogicalType::IntervalDayTime).not_null()))
}

/// The regular expression of a `SIMILAR TO` pattern: SQL's `%` and `_` with the regular
/// expression operators `| * + ? {m,n} ( ) [ ]`, matching the whole text.
fn similar_regex(pattern: &str) -> std::result::Result<regex::Regex, String> {
    let mut re = String::from("(?s)^(?:");
    for c in pattern.chars() {
        match c {
            '%' => re.push_str(".*"),
            '_' => re.push('.'),
            '|' | '*' | '+' | '?' | '{' | '}' | '(' | ')' | '[' | ']' | ',' | '-' => re.push(c),
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    re.push_str(")$");
    regex::Regex::new(&re).map_err(|e| format!("Invalid SIMILAR TO pattern '{pattern}': {e}"))
}
