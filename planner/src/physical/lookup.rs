//! Physical planning of lookup joins: how each one runs (sync, ordered, unordered or
//! key-ordered), from the options, its LOOKUP hint and its input's changes.

use weir_connectors::LookupTable;
use weir_operators::expr::Expr;
use weir_operators::{LookupJoinSpec, LookupJoinType};
use weir_runtime::Field;

use super::op::lookup_join::LookupJoin;
use super::{Physical, PhysicalNode};
use crate::lookup_options::lookup_execution;
use crate::plan::Plan;

/// A lookup join's parts, as the binder produced them.
pub(super) struct LookupJoinParts {
    pub input: Plan,
    pub table: Box<LookupTable>,
    pub alias: String,
    pub join_type: LookupJoinType,
    pub keys: Vec<(usize, Expr)>,
    pub dim_filter: Option<Expr>,
    pub join_condition: Option<Expr>,
}

impl Physical<'_> {
    /// The lookup join over the physical plan of its input; the rows keep their kinds, so the
    /// consumer's need for `-U` rows passes to the input.
    pub(super) fn lookup_join(&self, parts: LookupJoinParts, fields: Vec<Field>, update_before: bool) -> PhysicalNode {
        let input = self.physical(parts.input, update_before, false);
        let hint =
            self.options.lookup_hints.iter().rev().find(|h| h.table == parts.alias || h.table == parts.table.name);
        let supports_async = !self.options.sync_lookup_tables.contains(&parts.table.name);
        let execution = lookup_execution(
            &self.options.async_lookup,
            hint,
            supports_async,
            input.changelog.is_insert_only(),
            input.upsert_key(),
            input.fields.len(),
        );
        let changelog = input.changelog;
        let table = parts.table;
        let (dim_keys, keys): (Vec<usize>, Vec<Expr>) = parts.keys.into_iter().unzip();
        let spec = LookupJoinSpec {
            table: table.qualified_name(),
            join_type: parts.join_type,
            keys,
            key_names: dim_keys.iter().map(|&d| table.schema.fields[d].name.clone()).collect(),
            dim_arity: table.schema.fields.len(),
            dim_filter: parts.dim_filter,
            join_condition: parts.join_condition,
        };
        PhysicalNode {
            parallelism: super::UNASSIGNED,
            operator: LookupJoin { table, dim_keys, spec: std::sync::Arc::new(spec), execution }.into(),
            inputs: vec![input],
            fields,
            changelog,
        }
    }
}
