//! Counts clicks per user with the pipeline API and prints the changelog as Flink's print
//! connector would: `cargo run --example click_counts`.
//!
//! The pipeline: an in-memory source of clicks → HASH on the user → a keyed count → a
//! collecting sink, at parallelism 2. The count emits `+I` for a user's first click, then
//! `-U`/`+U` pairs as the count grows, exactly like `SELECT user, COUNT(*) … GROUP BY user`.

use weir::prelude::*;

fn main() -> Result<()> {
    let clicks = Schema::new(vec![Field::new("user", DataType::string()), Field::new("url", DataType::string())]);
    let counts = Schema::new(vec![Field::new("user", DataType::string()), Field::new("cnt", DataType::bigint())]);
    let rows = [
        ("alice", "/home"),
        ("bob", "/cart"),
        ("alice", "/prod?id=1"),
        ("carol", "/home"),
        ("alice", "/checkout"),
        ("bob", "/home"),
    ]
    .iter()
    .map(|(user, url)| Row::insert(vec![Value::string(user), Value::string(url)]))
    .collect();

    let pipeline = Pipeline::new(RuntimeConfig::default().with_parallelism(2));
    let output =
        pipeline.from_rows("clicks", clicks, rows).key_by(&[0]).process("CountByKey", counts, CountByKey).collect();
    let status = pipeline.run()?;

    let mut by_subtask = output.rows_by_subtask();
    by_subtask.sort_by_key(|(subtask, _)| *subtask);
    for (subtask, row) in by_subtask {
        println!("{}> {row}", subtask + 1);
    }
    println!("job {status:?}");
    Ok(())
}
