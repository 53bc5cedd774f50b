//! The `datagen` connector: rows of random or sequential values, as fast or as slow as asked.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `rows-per-second` | 10000 | total rate over all subtasks |
//! | `number-of-rows` | unbounded | total rows; the source then ends |
//! | `scan.parallelism` | the job's | number of source subtasks |
//! | `fields.#.kind` | `random` | `random` or `sequence` |
//! | `fields.#.min`, `fields.#.max` | the type's range | bounds of random numbers |
//! | `fields.#.max-past` | `0` | random timestamps lie up to this far before now |
//! | `fields.#.length` | 100 (strings, bytes), 3 (arrays, maps) | size of random values |
//! | `fields.#.var-len` | `false` | random strings and bytes of length 1 up to `length` |
//! | `fields.#.null-rate` | `0` | share of NULLs |
//! | `fields.#.start`, `fields.#.end` | required for sequences | the sequence, inclusive |
//!
//! A sequence is split over the subtasks in contiguous ranges, so every value is produced
//! exactly once; a table with a sequence ends when its shortest sequence (or `number-of-rows`)
//! is exhausted.

mod column;
mod field;
mod source;

use std::sync::Arc;

pub use source::DatagenSource;

use crate::api::ResolvedSource;
use crate::api::{ConnectorFactory, FactoryContext, ScanContext, SourceAbilities, SourceProvider, TableDescriptor};
use crate::error::{Error, Result};
use crate::options::{invalid, TableOptions};

/// Creates `datagen` sources.
#[derive(Debug, Clone, Copy, Default)]
pub struct DatagenFactory;

impl ConnectorFactory for DatagenFactory {
    fn identifier(&self) -> &'static str {
        "datagen"
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        let rows_per_second = match options.parse::<u64>("rows-per-second", "a positive integer")? {
            None => 10_000,
            Some(0) => return Err(invalid("rows-per-second", "0", "a positive integer")),
            Some(n) => n,
        };
        let number_of_rows = options.parse::<u64>("number-of-rows", "a non-negative integer")?;
        let parallelism = match options.parse::<usize>("scan.parallelism", "a positive integer")? {
            Some(0) => return Err(invalid("scan.parallelism", "0", "a positive integer")),
            other => other,
        };
        let fields = table
            .schema
            .fields
            .iter()
            .map(|f| field::field_generator(&f.name, &f.data_type, options))
            .collect::<Result<Vec<_>>>()?;
        let shortest_sequence = fields.iter().filter_map(field::FieldGenerator::sequence_length).min();
        let rows = match (number_of_rows, shortest_sequence) {
            (Some(n), Some(s)) => Some(n.min(s)),
            (n, s) => n.or(s),
        };
        if fields.is_empty() {
            return Err(Error::Validation(format!("Table '{}' has no columns to generate.", table.name)));
        }
        let types = table.schema.fields.iter().map(|f| f.data_type.clone()).collect();
        let source = DatagenSource::new(table.name.clone(), Arc::new(fields), types, rows, rows_per_second);
        Ok(Arc::new(DatagenTable { source, parallelism, bounded: rows.is_some() }))
    }
}

/// A `datagen` table resolved as a source.
struct DatagenTable {
    source: DatagenSource,
    parallelism: Option<usize>,
    bounded: bool,
}

impl ResolvedSource for DatagenTable {
    /// As Flink's datagen (a `ScanTableSource` without `SupportsProjectionPushDown`), every
    /// column is read; a query's projection is a Calc above the scan.
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        SourceAbilities { accepts_projection: false, ..SourceAbilities::plain(self.parallelism, self.bounded) }
    }

    fn create(&self, _scan: &ScanContext) -> Result<SourceProvider> {
        let source = self.source.clone();
        Ok(SourceProvider {
            parallelism: self.parallelism,
            bounded: self.bounded,
            factory: Arc::new(move |info| Box::new(source.for_subtask(info))),
        })
    }
}
