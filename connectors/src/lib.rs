//! weir's connectors: where rows come from and where they go.
//!
//! For now: an in-memory source playing a script ([`MemorySource`]), a source computing rows
//! from their sequence number ([`GeneratorSource`]), a sink collecting rows in memory
//! ([`CollectSink`]) and one discarding them ([`DiscardSink`]). The connector registry and the
//! `'connector' = '…'` factories of SQL tables live here too.

pub mod collect_sink;
pub mod discard_sink;
pub mod generator_source;
pub mod memory_source;

pub use collect_sink::{CollectHandle, CollectSink};
pub use discard_sink::DiscardSink;
pub use generator_source::{GeneratorSource, RowGenerator};
pub use memory_source::{MemorySource, SourceStep};
