//! `GROUP BY GROUPING SETS (…)`, `ROLLUP (…)` and `CUBE (…)`, and the `GROUPING`,
//! `GROUPING_ID` and `GROUP_ID` functions, as Flink plans them: an `Expand` emits each input
//! row once per grouping set, with the keys the set leaves out NULL and the set's id `$e`; the
//! aggregate groups on the keys and `$e`; the functions are computed from `$e` in the Calc
//! above. A query with a single set of all its keys is a plain GROUP BY.
//!
//! The id of a set has a bit per key, the first key highest, set where the set leaves the key
//! out (Calcite's `genExpandId`). The sets are ordered as Calcite orders them: a set before the
//! sets it encloses, otherwise by their lowest key.

use sqlparser::ast;
use weir_operators::expr::{Expr, Function};
use weir_operators::ExpandProject;
use weir_runtime::{DataType, Value};

use super::scope::position_of;
use crate::error::{Error, Result};

/// The GROUP BY of a query: its distinct expressions, and the sets of them it groups on.
pub(super) struct GroupBy {
    /// Every expression grouped on in some set, in the order first written.
    pub exprs: Vec<ast::Expr>,
    /// The grouping sets, as positions in `exprs`; `None` for a plain GROUP BY.
    pub sets: Option<Vec<Vec<usize>>>,
}

impl GroupBy {
    /// The GROUP BY `items`: plain expressions, `GROUPING SETS`, `ROLLUP` and `CUBE`, the sets
    /// of the items being combined as a cross product (`GROUP BY a, ROLLUP(b)` is
    /// `GROUPING SETS ((a, b), (a))`), and a grouping inside `GROUPING SETS` giving its sets.
    pub fn of(items: &[ast::Expr]) -> Result<GroupBy> {
        if !items.iter().any(is_grouping) {
            return Ok(GroupBy { exprs: items.to_vec(), sets: None });
        }
        let mut exprs: Vec<ast::Expr> = Vec::new();
        let mut sets = Vec::new();
        for set in cross(items.iter().map(alternatives).collect::<Result<Vec<_>>>()?) {
            let mut positions: Vec<usize> = Vec::with_capacity(set.len());
            for e in set {
                let p = exprs.iter().position(|x| x == e).unwrap_or_else(|| {
                    exprs.push(e.clone());
                    exprs.len() - 1
                });
                if !positions.contains(&p) {
                    positions.push(p);
                }
            }
            sets.push(positions);
        }
        Ok(GroupBy { exprs, sets: Some(sets) })
    }
}

/// Whether `e` is a `GROUPING SETS`, `ROLLUP` or `CUBE`.
fn is_grouping(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::GroupingSets(_) | ast::Expr::Rollup(_) | ast::Expr::Cube(_))
}

/// The sets of expressions a GROUP BY item stands for.
fn alternatives(item: &ast::Expr) -> Result<Vec<Vec<&ast::Expr>>> {
    let plain = |parts: &[Vec<ast::Expr>]| match parts.iter().flatten().find(|e| is_grouping(e)) {
        Some(nested) => Err(Error::validation(position_of(nested), format!("'{nested}' is not allowed in '{item}'"))),
        None => Ok(()),
    };
    Ok(match item {
        ast::Expr::GroupingSets(sets) => {
            let mut all = Vec::new();
            for set in sets {
                all.extend(cross(set.iter().map(alternatives).collect::<Result<Vec<_>>>()?));
            }
            all
        }
        ast::Expr::Rollup(parts) => {
            plain(parts)?;
            (0..=parts.len()).rev().map(|n| parts[..n].iter().flatten().collect()).collect()
        }
        ast::Expr::Cube(parts) => {
            plain(parts)?;
            let n = parts.len();
            if n > 12 {
                return Err(Error::validation(
                    position_of(item),
                    format!("CUBE of {n} elements gives more than 4096 grouping sets"),
                ));
            }
            // As Calcite enumerates them: the set leaving out nothing first, the first part's
            // bit highest.
            (0..1usize << n)
                .map(|left_out| (0..n).filter(|j| left_out & (1 << (n - 1 - j)) == 0).flat_map(|j| &parts[j]).collect())
                .collect()
        }
        other => vec![vec![other]],
    })
}

/// Every combination of one set from each of `choices`, concatenated.
fn cross(choices: Vec<Vec<Vec<&ast::Expr>>>) -> Vec<Vec<&ast::Expr>> {
    let mut sets: Vec<Vec<&ast::Expr>> = vec![Vec::new()];
    for alternatives in choices {
        let mut combined = Vec::with_capacity(sets.len() * alternatives.len());
        for set in &sets {
            for alternative in &alternatives {
                combined.push(set.iter().chain(alternative).copied().collect());
            }
        }
        sets = combined;
    }
    sets
}

/// The grouping sets of an aggregate over its keys, as the Expand below it emits them.
#[derive(Debug, Clone)]
pub(crate) struct Grouping {
    /// How many keys the aggregate has (without `$e`).
    keys: usize,
    /// Each set's keys, in the order the Expand emits the sets.
    sets: Vec<Vec<bool>>,
    /// Whether the aggregate runs over an Expand; `false` for a single set of every key.
    pub expanded: bool,
}

impl Grouping {
    /// One set of all `keys` keys: a plain GROUP BY.
    pub fn plain(keys: usize) -> Grouping {
        Grouping { keys, sets: vec![vec![true; keys]], expanded: false }
    }

    /// The sets `sets`, each a list of key positions (any order, no duplicates within one),
    /// over `keys` keys.
    ///
    /// # Errors
    /// A set given twice: Flink plans that as a union of aggregates told apart by
    /// `GROUP_ID()`, which weir does not.
    pub fn of(keys: usize, sets: &[Vec<usize>]) -> Result<Grouping> {
        let mut masks: Vec<Vec<bool>> = sets
            .iter()
            .map(|set| {
                let mut mask = vec![false; keys];
                set.iter().for_each(|&k| mask[k] = true);
                mask
            })
            .collect();
        masks.sort_by(enclosing_first);
        if masks.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::Unsupported(
                "a grouping set given more than once (Flink plans the copies as a union told apart by GROUP_ID())"
                    .into(),
            ));
        }
        let expanded = !(masks.len() == 1 && masks[0].iter().all(|&k| k));
        Ok(Grouping { keys, sets: masks, expanded })
    }

    /// The id (`$e`) of set `s`.
    fn id(&self, s: usize) -> i64 {
        let set = &self.sets[s];
        (0..self.keys).filter(|&k| !set[k]).map(|k| 1i64 << (self.keys - 1 - k)).sum()
    }

    /// The Expand's sets over an input whose first `keys` columns are the keys.
    pub fn projects(&self) -> Vec<ExpandProject> {
        (0..self.sets.len())
            .map(|s| ExpandProject { nulled: (0..self.keys).filter(|&k| !self.sets[s][k]).collect(), id: self.id(s) })
            .collect()
    }

    /// `GROUPING_ID(keys…)` (`GROUPING` is the one-key case): per row, a bit per key given,
    /// the first highest, set when the row's set leaves the key out. Over `$e` at column
    /// `id_column`: a CASE over the sets' ids, or a literal when it is equal for every set.
    pub fn grouping_id(&self, keys: &[usize], id_column: usize) -> Expr {
        let bigint = DataType::bigint().not_null();
        let value = |s: usize| -> i64 { keys.iter().fold(0, |v, &k| (v << 1) | i64::from(!self.sets[s][k])) };
        let values: Vec<i64> = (0..self.sets.len()).map(value).collect();
        let literal = |v: i64| Expr::literal(Value::BigInt(v), bigint.clone());
        if !self.expanded || values.iter().all(|&v| v == values[0]) {
            return literal(values[0]);
        }
        let id = Expr::column(id_column, bigint.clone());
        let otherwise = values[values.len() - 1];
        // As Calcite simplifies it: the last sets that give the ELSE value need no branch.
        let branches = values.iter().rposition(|&v| v != otherwise).map_or(0, |last| last + 1);
        let mut args = Vec::new();
        for (s, &v) in values.iter().enumerate().take(branches) {
            let test = Expr::Call {
                function: Function::Equals,
                args: vec![id.clone(), literal(self.id(s))],
                ty: DataType::boolean().not_null(),
            };
            args.extend([test, literal(v)]);
        }
        args.push(literal(otherwise));
        Expr::Call { function: Function::Case, args, ty: bigint }
    }
}

/// Calcite's order of grouping sets (`ImmutableBitSet.COMPARATOR`): a set before the sets it
/// encloses, else by the first key where they differ, the set holding it first.
fn enclosing_first(a: &Vec<bool>, b: &Vec<bool>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let encloses = |x: &Vec<bool>, y: &Vec<bool>| x.iter().zip(y).all(|(&x, &y)| x || !y);
    if a == b {
        Ordering::Equal
    } else if encloses(a, b) {
        Ordering::Less
    } else if encloses(b, a) {
        Ordering::Greater
    } else {
        let first = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(0);
        if a[first] {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }
}

/// Whether `name` (upper case) is one of the functions over the grouping sets.
pub(super) fn is_grouping_function(name: &str) -> bool {
    matches!(name, "GROUPING" | "GROUPING_ID" | "GROUP_ID")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(sql: &str) -> (Vec<String>, Vec<Vec<usize>>) {
        let statement = crate::parser::parse_script(&format!("SELECT 1 FROM t GROUP BY {sql}")).unwrap();
        let crate::parser::Statement::Query(query) = &statement[0].statement else { panic!("a query") };
        let ast::SetExpr::Select(select) = query.body.as_ref() else { panic!("a select") };
        let ast::GroupByExpr::Expressions(items, _) = &select.group_by else { panic!("expressions") };
        let group_by = GroupBy::of(items).unwrap();
        (group_by.exprs.iter().map(|e| e.to_string()).collect(), group_by.sets.unwrap())
    }

    #[test]
    fn rollup_cube_and_plain_keys_combine_as_a_cross_product() {
        assert_eq!(sets("ROLLUP (a, b)"), (vec!["a".into(), "b".into()], vec![vec![0, 1], vec![0], vec![]]));
        assert_eq!(sets("CUBE (a, b)").1, vec![vec![0, 1], vec![0], vec![1], vec![]]);
        assert_eq!(sets("c, ROLLUP (a)").1, vec![vec![0, 1], vec![0]]);
        assert_eq!(sets("GROUPING SETS ((a, b), a, ())").1, vec![vec![0, 1], vec![0], vec![]]);
        assert_eq!(sets("ROLLUP ((a, b), c)").1, vec![vec![0, 1, 2], vec![0, 1], vec![]]);
        assert_eq!(sets("GROUPING SETS (ROLLUP (a, b), (c))").1, vec![vec![0, 1], vec![0], vec![], vec![2]]);
    }

    #[test]
    fn ids_and_grouping_ids_follow_calcite() {
        // CUBE(a, b), as Flink's EXPLAIN shows it: ids 0, 1, 2, 3.
        let cube = Grouping::of(2, &[vec![], vec![1], vec![0, 1], vec![0]]).unwrap();
        assert_eq!(cube.projects().iter().map(|p| p.id).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(cube.projects()[1].nulled, [1]);
        // GROUPING_ID(b, a) per set: 0, 2, 1, 3.
        let Expr::Call { function: Function::Case, args, .. } = cube.grouping_id(&[1, 0], 2) else { panic!("a CASE") };
        let values: Vec<&Value> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 1 || *i == args.len() - 1)
            .map(|(_, a)| match a {
                Expr::Literal { value, .. } => value,
                other => panic!("a literal, not {other:?}"),
            })
            .collect();
        assert_eq!(values, [&Value::BigInt(0), &Value::BigInt(2), &Value::BigInt(1), &Value::BigInt(3)]);
        assert!(Grouping::of(1, &[vec![0], vec![0]]).is_err());
        let plain = Grouping::of(2, &[vec![1, 0]]).unwrap();
        assert!(!plain.expanded);
        assert!(matches!(plain.grouping_id(&[0], 2), Expr::Literal { .. }));
    }
}
