//! The `print` connector: writes every row to standard output (or error) as Flink does.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `print-identifier` | none | put in front of every line |
//! | `standard-error` | `false` | write to standard error instead |
//! | `sink.parallelism` | the input's | number of sink subtasks |
//!
//! Each line is `PREFIX+I[…]`: with an identifier and more than one subtask the prefix is
//! `IDENT:N> ` (N the 1-based subtask), with an identifier alone `IDENT> `, with more than one
//! subtask alone `N> `, and nothing otherwise.

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use weir_runtime::row::write_row;
use weir_runtime::{Chunk, Operator, OperatorContext, Output, Result as RuntimeResult};

use crate::api::ResolvedSink;
use crate::api::{
    sink_parallelism, ConnectorFactory, FactoryContext, SinkAbilities, SinkChangelogMode, SinkContext, SinkProvider,
    TableDescriptor,
};
use crate::error::Result;
use crate::options::TableOptions;

/// Where `print` writes.
#[derive(Debug, Clone, Default)]
pub enum PrintTarget {
    /// The process's standard output, or standard error with `'standard-error' = 'true'`.
    #[default]
    Console,
    /// An in-memory buffer (for tests and embedding); `standard-error` does not matter.
    Buffer(Arc<Mutex<Vec<u8>>>),
}

/// Flink's print prefix for subtask `index` (0-based) of `parallelism`.
pub fn print_prefix(identifier: &str, index: usize, parallelism: usize) -> String {
    match (identifier.is_empty(), parallelism > 1) {
        (false, true) => format!("{identifier}:{}> ", index + 1),
        (false, false) => format!("{identifier}> "),
        (true, true) => format!("{}> ", index + 1),
        (true, false) => String::new(),
    }
}

/// Writes rows as lines with a prefix.
#[derive(Debug)]
pub struct PrintSink {
    prefix: String,
    target: PrintTarget,
    standard_error: bool,
    text: String,
}

impl PrintSink {
    /// A sink writing lines that start with `prefix`.
    pub fn new(prefix: String, target: PrintTarget, standard_error: bool) -> Self {
        PrintSink { prefix, target, standard_error, text: String::new() }
    }
}

impl Operator for PrintSink {
    fn name(&self) -> &str {
        "Sink: Print"
    }

    fn process_chunk(
        &mut self,
        _input: usize,
        chunk: Chunk,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        self.text.clear();
        if chunk.is_columnar() {
            // Straight from the arrays: the same text as the rows'.
            weir_runtime::columnar::print::write_lines(&mut self.text, &self.prefix, &chunk);
        } else {
            for (kind, row) in chunk.rows() {
                self.text.push_str(&self.prefix);
                write_row(&mut self.text, kind, row);
                self.text.push('\n');
            }
        }
        let written = match &self.target {
            PrintTarget::Buffer(buffer) => {
                buffer.lock().extend_from_slice(self.text.as_bytes());
                Ok(())
            }
            PrintTarget::Console if self.standard_error => std::io::stderr().lock().write_all(self.text.as_bytes()),
            PrintTarget::Console => {
                let mut out = std::io::stdout().lock();
                out.write_all(self.text.as_bytes()).and_then(|()| out.flush())
            }
        };
        let stream = if self.standard_error { "standard error" } else { "standard output" };
        written.map_err(|e| weir_runtime::Error::writing(stream, &e))
    }

    fn process_watermark(
        &mut self,
        _watermark: i64,
        _ctx: &mut OperatorContext,
        _out: &mut Output,
    ) -> RuntimeResult<()> {
        Ok(())
    }
}

/// Creates `print` sinks.
#[derive(Debug, Clone, Default)]
pub struct PrintFactory {
    /// Where the sinks write.
    pub target: PrintTarget,
}

impl ConnectorFactory for PrintFactory {
    fn identifier(&self) -> &'static str {
        "print"
    }

    /// A partitioned table's rows are printed as any others, as Flink's print sink does.
    fn supports_partitioning(&self) -> bool {
        true
    }

    fn resolve_sink(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSink>> {
        let identifier = options.optional("print-identifier").unwrap_or_default().to_string();
        let standard_error = options.boolean("standard-error", false)?;
        let parallelism = sink_parallelism(options, table)?;
        Ok(Arc::new(PrintTable { identifier, standard_error, parallelism, target: self.target.clone() }))
    }
}

/// A `print` table resolved as a sink.
struct PrintTable {
    identifier: String,
    standard_error: bool,
    parallelism: Option<usize>,
    target: PrintTarget,
}

impl ResolvedSink for PrintTable {
    fn abilities(&self, _sink: &SinkContext) -> Result<SinkAbilities> {
        Ok(SinkAbilities { parallelism: self.parallelism, changelog_mode: SinkChangelogMode::Retract })
    }

    fn create(&self, _sink: &SinkContext) -> Result<SinkProvider> {
        let (identifier, target, standard_error) = (self.identifier.clone(), self.target.clone(), self.standard_error);
        Ok(SinkProvider {
            parallelism: self.parallelism,
            changelog_mode: SinkChangelogMode::Retract,
            factory: Arc::new(move |info| {
                let prefix = print_prefix(&identifier, info.index, info.parallelism);
                Box::new(PrintSink::new(prefix, target.clone(), standard_error))
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_follow_flinks_rules() {
        assert_eq!(print_prefix("sink", 0, 1), "sink> ");
        assert_eq!(print_prefix("sink", 2, 3), "sink:3> ");
        assert_eq!(print_prefix("", 1, 3), "2> ");
        assert_eq!(print_prefix("", 0, 1), "");
    }
}
