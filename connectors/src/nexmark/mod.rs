//! The `nexmark` connector: the event stream of the Nexmark benchmark, as the Flink Nexmark
//! connector (`nexmark/nexmark`) generates it, so its `ddl_gen.sql`, views and q0–q22 run on
//! weir unchanged.
//!
//! | option | default | meaning |
//! |---|---|---|
//! | `events.num` | `0` (unbounded) | events in all; the source then ends |
//! | `first-event.rate` | 10000 | events per second of event time, all subtasks together |
//! | `next-event.rate` | 10000 | accepted; as in Flink's generator, only the first rate sets the step |
//! | `rate.shape`, `rate.period` | `SQUARE`, `600 s` | accepted; as `next-event.rate` |
//! | `rate.limited` | `false` | emit an event no sooner than its event time, in wall-clock time from the start; else as fast as possible |
//! | `person.proportion`, `auction.proportion`, `bid.proportion` | 1, 3, 46 | the event mix: id `n` is a person when `n % total < person`, then an auction, else a bid |
//! | `person.avg-size`, `auction.avg-size`, `bid.avg-size` | `200b`, `500b`, `100b` | the `extra` padding brings each record to this on average |
//! | `bid.hot-ratio.auctions`, `bid.hot-ratio.bidders`, `auction.hot-ratio.sellers` | 2, 4, 4 | one event in this many goes to a random auction / bidder / seller, the others to the hot one |
//! | `base-time` (weir) | the time the table is resolved | event time of the first event: epoch milliseconds or `yyyy-MM-dd HH:mm:ss[.SSS]` |
//!
//! The table must declare Flink's Nexmark schema (`event_type INT`, `person ROW<…>`, `auction
//! ROW<…>`, `bid ROW<…>`, as `ddl_gen.sql` writes it); computed columns and a watermark may
//! follow. The events are cut into one split per subtask as Flink cuts them; see [`generator`]
//! for what is the same as Flink's stream and what is not.

mod columns;
mod generator;
mod source;

use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Fields};
use weir_runtime::columnar::arrow_type;
use weir_runtime::parse::parse_timestamp;
use weir_runtime::{DataType, Field, LogicalType};

pub use source::NexmarkSource;

use crate::api::ResolvedSource;
use crate::api::{ConnectorFactory, FactoryContext, ScanContext, SourceAbilities, SourceProvider, TableDescriptor};
use crate::error::{Error, Result};
use crate::options::{invalid, TableOptions};
use generator::GeneratorConfig;

/// A column of the Nexmark schema: BIGINT, STRING or TIMESTAMP(3).
#[derive(Clone, Copy)]
enum Column {
    Long,
    Text,
    Time,
}

use Column::{Long, Text, Time};

/// The ROW columns of a Nexmark table, as Flink's `NexmarkTableSource.NEXMARK_SCHEMA` (after
/// `event_type INT`).
const ROWS: [(&str, &[(&str, Column)]); 3] = [
    (
        "person",
        &[
            ("id", Long),
            ("name", Text),
            ("emailAddress", Text),
            ("creditCard", Text),
            ("city", Text),
            ("state", Text),
            ("dateTime", Time),
            ("extra", Text),
        ],
    ),
    (
        "auction",
        &[
            ("id", Long),
            ("itemName", Text),
            ("description", Text),
            ("initialBid", Long),
            ("reserve", Long),
            ("dateTime", Time),
            ("expires", Time),
            ("seller", Long),
            ("category", Long),
            ("extra", Text),
        ],
    ),
    (
        "bid",
        &[
            ("auction", Long),
            ("bidder", Long),
            ("price", Long),
            ("channel", Text),
            ("url", Text),
            ("dateTime", Time),
            ("extra", Text),
        ],
    ),
];

/// The physical columns of a Nexmark table.
fn nexmark_schema() -> Vec<Field> {
    let column = |ty: Column| match ty {
        Long => DataType::bigint(),
        Text => DataType::string(),
        Time => DataType::timestamp(3),
    };
    let rows = ROWS.iter().map(|(name, fields)| {
        let fields = fields.iter().map(|(n, ty)| Field::new(*n, column(*ty))).collect();
        Field::new(*name, DataType::new(LogicalType::Row(fields)))
    });
    std::iter::once(Field::new("event_type", DataType::int())).chain(rows).collect()
}

/// Creates `nexmark` sources.
#[derive(Debug, Clone, Copy, Default)]
pub struct NexmarkFactory;

impl ConnectorFactory for NexmarkFactory {
    fn identifier(&self) -> &'static str {
        "nexmark"
    }

    fn resolve_source(
        &self,
        table: &TableDescriptor,
        options: &mut TableOptions,
        _ctx: &FactoryContext<'_>,
    ) -> Result<Arc<dyn ResolvedSource>> {
        let fields = row_fields(table)?;
        let positive = |options: &mut TableOptions, key: &str, default: i64| -> Result<i64> {
            match options.parse::<i64>(key, "a positive integer")? {
                None => Ok(default),
                Some(n) if n > 0 && n <= i64::from(i32::MAX) => Ok(n),
                Some(n) => Err(invalid(key, &n.to_string(), "a positive integer")),
            }
        };
        let first_rate = positive(options, "first-event.rate", 10_000)?;
        positive(options, "next-event.rate", 10_000)?;
        options.one_of("rate.shape", &["SQUARE", "SINE"], "SQUARE")?;
        options.duration("rate.period")?;
        let rate_limited = options.boolean("rate.limited", false)?;
        let size = |options: &mut TableOptions, key: &str, default: i32| -> Result<i32> {
            match options.optional(key) {
                None => Ok(default),
                Some(text) => weir_runtime::settings::memory_size(text.trim())
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| invalid(key, text, "a memory size such as '100b'")),
            }
        };
        let avg_person_bytes = size(options, "person.avg-size", 200)?;
        let avg_auction_bytes = size(options, "auction.avg-size", 500)?;
        let avg_bid_bytes = size(options, "bid.avg-size", 100)?;
        let person_proportion = positive(options, "person.proportion", 1)?;
        let auction_proportion = positive(options, "auction.proportion", 3)?;
        let bid_proportion = positive(options, "bid.proportion", 46)?;
        let hot_auction_ratio = positive(options, "bid.hot-ratio.auctions", 2)? as i32;
        let hot_bidders_ratio = positive(options, "bid.hot-ratio.bidders", 4)? as i32;
        let hot_sellers_ratio = positive(options, "auction.hot-ratio.sellers", 4)? as i32;
        let events = match options.parse::<i64>("events.num", "a non-negative integer")? {
            Some(n) if n < 0 => return Err(invalid("events.num", &n.to_string(), "a non-negative integer")),
            other => other.unwrap_or(0),
        };
        let base_time = match options.optional("base-time") {
            None => weir_runtime::Clock::now_millis(&weir_runtime::SystemClock),
            Some(text) => text
                .trim()
                .parse::<i64>()
                .ok()
                .or_else(|| parse_timestamp(text.trim()).map(|t| t.millis))
                .ok_or_else(|| invalid("base-time", text, "epoch milliseconds or 'yyyy-MM-dd HH:mm:ss[.SSS]'"))?,
        };
        let config = GeneratorConfig {
            person_proportion,
            auction_proportion,
            bid_proportion,
            avg_person_bytes,
            avg_auction_bytes,
            avg_bid_bytes,
            hot_auction_ratio,
            hot_bidders_ratio,
            hot_sellers_ratio,
            base_time,
            inter_event_delay_us: 1_000_000.0 / first_rate as f64,
        };
        // Flink's bound for an unbounded stream: as many events as its size estimate allows.
        let max_events = if events > 0 {
            events
        } else {
            let widest = i64::from(avg_person_bytes.max(avg_auction_bytes).max(avg_bid_bytes));
            i64::MAX / (config.total_proportion() * widest)
        };
        let source = NexmarkSource::new(table.name.clone(), config, max_events, rate_limited, fields);
        Ok(Arc::new(NexmarkTable { source, bounded: events > 0 }))
    }
}

/// The Arrow fields of the three ROW columns, once the table is checked to declare Flink's
/// Nexmark columns.
fn row_fields(table: &TableDescriptor) -> Result<[Fields; 3]> {
    let physical = table.physical_schema();
    let declared: Vec<(String, ArrowType)> =
        physical.fields.iter().map(|f| (f.name.clone(), arrow_type(&f.data_type))).collect();
    let schema = nexmark_schema();
    let expected: Vec<(String, ArrowType)> =
        schema.iter().map(|f| (f.name.clone(), arrow_type(&f.data_type))).collect();
    if declared != expected {
        let columns: Vec<String> = schema.iter().map(|f| format!("`{}` {}", f.name, f.data_type)).collect();
        return Err(Error::Validation(format!(
            "The nexmark source table '{}' must have the physical columns of Flink's Nexmark schema: {}.",
            table.name,
            columns.join(", ")
        )));
    }
    let struct_fields = |i: usize| match &expected[i].1 {
        ArrowType::Struct(fields) => fields.clone(),
        other => unreachable!("column {i} of the Nexmark schema is a ROW, not {other}"),
    };
    Ok([struct_fields(1), struct_fields(2), struct_fields(3)])
}

/// A `nexmark` table resolved as a source.
struct NexmarkTable {
    source: NexmarkSource,
    bounded: bool,
}

impl ResolvedSource for NexmarkTable {
    /// As Flink's Nexmark source (no `SupportsProjectionPushDown`), every column is generated;
    /// a query's projection is a Calc above the scan.
    fn abilities(&self, _scan: &ScanContext) -> SourceAbilities {
        SourceAbilities { accepts_projection: false, ..SourceAbilities::plain(None, self.bounded) }
    }

    fn create(&self, _scan: &ScanContext) -> Result<SourceProvider> {
        let source = self.source.clone();
        Ok(SourceProvider {
            parallelism: None,
            bounded: self.bounded,
            factory: Arc::new(move |info| Box::new(source.for_subtask(info))),
        })
    }
}
