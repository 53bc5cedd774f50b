//! Window table functions in FROM: `TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))`,
//! `HOP(…, slide, size [, offset])` and `CUMULATE(…, step, size [, offset])`, with positional
//! or named arguments (`DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => …`), as Flink
//! binds them: the input's columns, then `window_start`, `window_end` and `window_time`.

use crate::catalog::UserFunctions;
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};
use weir_operators::expr::Expr;
use weir_operators::{WindowKind, WindowSpec};
use weir_runtime::time_zone::TimeZone;
use weir_runtime::types::{LogicalType, TimeAttribute};
use weir_runtime::{DataType, Field, Value};

use super::expr::ExprBinder;
use super::scope::{position_of, Scope};
use super::{unsupported_at, Binder};
use crate::dialect::TABLE_ARGUMENT;
use crate::error::{Error, Result};
use crate::plan::{Node, Plan};

/// The arguments of a window function, by Flink's parameter names.
#[derive(Default)]
struct Arguments<'a> {
    data: Option<&'a ast::Expr>,
    timecol: Option<&'a ast::Expr>,
    size: Option<&'a ast::Expr>,
    gap: Option<&'a ast::Expr>,
    slide: Option<&'a ast::Expr>,
    step: Option<&'a ast::Expr>,
    offset: Option<&'a ast::Expr>,
}

/// The name of a call, upper-cased.
fn call_name(function: &ast::Function) -> String {
    function.name.0.last().and_then(|p| p.as_ident()).map_or(String::new(), |i| i.value.to_uppercase())
}

/// The plain arguments of a call (named ones are `None`).
fn call_args(function: &ast::Function) -> Vec<&FunctionArg> {
    match &function.args {
        FunctionArguments::List(list) => list.args.iter().collect(),
        _ => Vec::new(),
    }
}

fn expr_of(arg: &FunctionArgExpr) -> Option<&ast::Expr> {
    match arg {
        FunctionArgExpr::Expr(e) => Some(e),
        _ => None,
    }
}

impl Binder<'_> {
    /// The plan of `TABLE(<window function>(…))` in FROM, and its qualifier (the alias).
    pub(super) fn bind_window_function(
        &mut self,
        factor: &ast::TableFactor,
        expr: &ast::Expr,
        alias: Option<&ast::TableAlias>,
    ) -> Result<(Plan, Option<String>)> {
        let ast::Expr::Function(function) = expr else {
            return Err(unsupported_at(factor, format!("The table function '{expr}'")));
        };
        let name = call_name(function);
        // The parameters in their positional order.
        let positional: &[&str] = match name.as_str() {
            "TUMBLE" => &["DATA", "TIMECOL", "SIZE", "OFFSET"],
            "HOP" => &["DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"],
            "CUMULATE" => &["DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"],
            "SESSION" => &["DATA", "TIMECOL", "GAP"],
            _ => return Err(unsupported_at(factor, format!("The table function '{}'", function.name))),
        };
        let mut args = Arguments::default();
        let args_given = call_args(function);
        if args_given.len() > positional.len() || args_given.len() < positional.len() - 1 {
            return Err(Error::validation(
                position_of(function),
                format!(
                    "Invalid number of arguments to function '{name}'. Was expecting {} arguments",
                    positional.len() - 1
                ),
            ));
        }
        for (i, arg) in args_given.iter().enumerate() {
            let (parameter, value) = match arg {
                FunctionArg::Unnamed(value) => (positional[i].to_string(), value),
                FunctionArg::Named { name, arg, .. } => (name.value.to_uppercase(), arg),
                FunctionArg::ExprNamed { name: ast::Expr::Identifier(name), arg, .. } => {
                    (name.value.to_uppercase(), arg)
                }
                other => return Err(unsupported_at(factor, format!("The argument '{other}'"))),
            };
            let value = expr_of(value).ok_or_else(|| Error::validation(position_of(function), "Invalid argument"))?;
            let slot = match parameter.as_str() {
                "DATA" => &mut args.data,
                "TIMECOL" => &mut args.timecol,
                "SIZE" if name != "SESSION" => &mut args.size,
                "GAP" if name == "SESSION" => &mut args.gap,
                "SLIDE" if name == "HOP" => &mut args.slide,
                "STEP" if name == "CUMULATE" => &mut args.step,
                "OFFSET" => &mut args.offset,
                other => {
                    return Err(Error::validation(
                        position_of(function),
                        format!("No match found for function signature {name}(<{other}>)"),
                    ))
                }
            };
            // A parameter named twice takes its first value, as Flink's does.
            slot.get_or_insert(value);
        }
        let (input, partition) = self.window_data(function, args.data)?;
        if name != "SESSION" && !partition.is_empty() {
            return Err(Error::validation(position_of(function), format!("{name} windows take no PARTITION BY")));
        }
        let time_col = time_column(&input, function, args.timecol)?;
        let interval = |what: &str, arg: Option<&ast::Expr>| match arg {
            Some(e) => interval_millis(e, what != "OFFSET").map(Some),
            None if what == "OFFSET" => Ok(None),
            None => Err(Error::validation(
                position_of(function),
                format!("Invalid number of arguments to function '{name}': the parameter {what} is missing"),
            )),
        };
        let kind = match name.as_str() {
            "SESSION" => WindowKind::Session { gap: interval("GAP", args.gap)?.unwrap_or(0) },
            "TUMBLE" => WindowKind::Tumble { size: interval("SIZE", args.size)?.unwrap_or(0) },
            "HOP" => WindowKind::Hop {
                size: interval("SIZE", args.size)?.unwrap_or(0),
                slide: interval("SLIDE", args.slide)?.unwrap_or(0),
            },
            _ => WindowKind::Cumulate {
                max_size: interval("SIZE", args.size)?.unwrap_or(0),
                step: interval("STEP", args.step)?.unwrap_or(0),
            },
        };
        let offset = interval("OFFSET", args.offset)?.unwrap_or(0);
        let window = WindowSpec::new(kind, offset);
        let mut fields = input.fields.clone();
        let timestamp = DataType::new(LogicalType::Timestamp(3)).not_null();
        fields.push(Field::new("window_start", timestamp.clone()));
        fields.push(Field::new("window_end", timestamp.clone()));
        fields.push(Field::new("window_time", window_time_type(&input.fields[time_col].data_type)));
        let node =
            Node::WindowTableFunction { input: Box::new(input), time_col, window, partition, group_window: false };
        let plan = Plan { node, fields };
        let qualifier = alias.map(|a| a.name.value.clone());
        Ok((super::rename(plan, alias)?, qualifier))
    }

    /// The rows of the `DATA` argument, `TABLE name [PARTITION BY keys]`, and the keys.
    fn window_data(&mut self, function: &ast::Function, data: Option<&ast::Expr>) -> Result<(Plan, Vec<usize>)> {
        let args = match data {
            Some(ast::Expr::Function(f)) if f.name.to_string() == TABLE_ARGUMENT => call_args(f),
            _ => Vec::new(),
        };
        let table = args.first().copied();
        let name = match table {
            Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::CompoundIdentifier(parts)))) => parts.clone(),
            Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Identifier(part)))) => vec![part.clone()],
            _ => {
                return Err(Error::validation(
                    position_of(function),
                    "The first argument of a window function must be a table: TABLE name",
                ))
            }
        };
        let name = ast::ObjectName(name.into_iter().map(ast::ObjectNamePart::Identifier).collect());
        let plan = self.bind_table_name(&name)?;
        let scope = Scope::new(&plan.fields, None);
        let mut partition = Vec::new();
        for key in &args[1..] {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Identifier(id))) = key else {
                return Err(Error::validation(position_of(function), "PARTITION BY takes columns"));
            };
            partition.push(scope.resolve(std::slice::from_ref(id))?.0);
        }
        Ok((plan, partition))
    }
}

/// The column `DESCRIPTOR(col)` names: a rowtime attribute of `input`.
fn time_column(input: &Plan, function: &ast::Function, timecol: Option<&ast::Expr>) -> Result<usize> {
    let column = match timecol {
        Some(ast::Expr::Function(f)) if call_name(f) == "DESCRIPTOR" => match call_args(f).as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Identifier(id)))] => id.clone(),
            _ => return Err(Error::validation(position_of(f), "DESCRIPTOR takes one column")),
        },
        _ => {
            return Err(Error::validation(
                position_of(function),
                "The second argument of a window function must be DESCRIPTOR(time column)",
            ))
        }
    };
    time_attribute_column(&Scope::new(&input.fields, None), std::slice::from_ref(&column), function)
}

/// The index of column `column` of `scope`, which must be a rowtime attribute of TIMESTAMP type
/// or a processing-time attribute (`at` is where an error is reported).
pub(super) fn time_attribute_column(scope: &Scope, column: &[ast::Ident], at: &impl ast::Spanned) -> Result<usize> {
    let (index, ty) = scope.resolve(column)?;
    let function = at;
    match ty.time_attribute {
        Some(TimeAttribute::Rowtime | TimeAttribute::Proctime) => Ok(index),
        None => Err(Error::validation(
            position_of(function),
            format!("The window function requires the timecol is a time attribute type, but is {ty}."),
        )),
    }
}

/// The type of `window_time` over a time column of type `time`: a rowtime TIMESTAMP(3), or over
/// processing time a proctime TIMESTAMP_LTZ(3), as Flink types it.
pub(super) fn window_time_type(time: &DataType) -> DataType {
    match time.time_attribute {
        Some(TimeAttribute::Proctime) => {
            DataType::new(LogicalType::TimestampLtz(3)).not_null().with_time_attribute(TimeAttribute::Proctime)
        }
        _ => DataType::new(LogicalType::Timestamp(3)).not_null().with_time_attribute(TimeAttribute::Rowtime),
    }
}

/// The milliseconds of a day-time interval literal (`INTERVAL '1' MINUTE`), positive unless it
/// is an offset.
pub(super) fn interval_millis(e: &ast::Expr, positive: bool) -> Result<i64> {
    let empty = Scope::default();
    let bound = ExprBinder { scope: &empty, aggregates: None, functions: UserFunctions::none(), zone: TimeZone::Utc }
        .bind(e)?;
    let value = match &bound {
        Expr::Literal { value, .. } => Some(value.clone()),
        other => other.eval(&[]).ok(),
    };
    match value {
        Some(Value::IntervalDayTime(millis)) if millis > 0 || !positive => Ok(millis),
        Some(Value::IntervalDayTime(_)) => {
            Err(Error::validation(position_of(e), "A window's size, slide and step must be positive"))
        }
        _ => Err(Error::validation(
            position_of(e),
            format!("A window's size, slide, step and offset are day-time intervals, not '{e}'"),
        )),
    }
}
