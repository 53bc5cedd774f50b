//! Lookups into a file, as Flink 1.x's `CsvTableSource` offered them to tables declared with
//! the legacy `'connector.type' = 'filesystem'` options: the whole file is read when the job
//! starts, and each lookup is answered from memory.

use std::path::PathBuf;
use std::sync::Arc;

use weir_runtime::{LookupFunction, LookupProvider, Result, Schema};

use super::source::list_files;
use crate::api::ResolvedLookup;
use crate::api::{LookupAbilities, LookupSource};
use crate::format::{decode_rows, Format, Lines};
use crate::memory_lookup::MemoryLookupTable;

/// A file (or the files of a directory) read whole for lookups.
pub(super) struct FileLookupTable {
    pub name: String,
    pub path: PathBuf,
    pub format: Arc<dyn Format>,
    pub schema: Schema,
}

impl ResolvedLookup for FileLookupTable {
    /// One lookup at a time: the answers are in memory.
    fn abilities(&self) -> LookupAbilities {
        LookupAbilities { supports_async: false }
    }

    fn create(&self) -> crate::error::Result<LookupSource> {
        let provider = FileLookup {
            name: self.name.clone(),
            path: self.path.clone(),
            format: Arc::clone(&self.format),
            schema: self.schema.clone(),
        };
        Ok(LookupSource { provider: Arc::new(provider), supports_async: false, cache: Default::default() })
    }
}

struct FileLookup {
    name: String,
    path: PathBuf,
    format: Arc<dyn Format>,
    schema: Schema,
}

impl LookupProvider for FileLookup {
    /// Reads every row of the files (when the job starts, once per subtask) and looks up by
    /// `keys` in them.
    fn lookup_function(&self, keys: &[usize]) -> Result<Arc<dyn LookupFunction>> {
        let failed = |what: String| weir_runtime::Error::execution(format!("lookup table '{}': {what}", self.name));
        let mut rows = Vec::new();
        for file in list_files(&self.path).map_err(|e| failed(e.to_string()))? {
            let opened = std::fs::File::open(&file).map_err(|e| failed(format!("{}: {e}", file.display())))?;
            let mut lines = Lines::new(Box::new(std::io::BufReader::new(opened)));
            let mut decoder = self.format.decoder();
            let read = decode_rows(decoder.as_mut(), &mut lines, &self.schema)
                .map_err(|e| failed(e.in_file(&file.display().to_string()).to_string()))?;
            rows.extend(read);
        }
        tracing::debug!(table = %self.name, rows = rows.len(), "file read for lookups");
        MemoryLookupTable::new(rows).lookup_function(keys)
    }
}
