//! The access pattern of a GROUP BY's state on disk: for each row, read its key's accumulator,
//! change it, write it back; keys uniform over `WEIR_BENCH_KEYS` (2 000 000), `WEIR_BENCH_OPS`
//! (4 000 000) rows with a checkpoint every `WEIR_BENCH_CHECKPOINT_EVERY` rows (0, the
//! default: none), then a checkpoint, 1 % of the keys changed and a second checkpoint.
//!
//! `cargo bench -p weir-statestore --bench read_modify_write`; prints rows per second, what
//! the checkpoints wrote (the largest and the mean share of the state), and the store's
//! statistics.

use std::time::Instant;

use weir_statestore::{Options, Store};

fn key(id: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[..2].copy_from_slice(&((id % 32_768) as u16).to_be_bytes());
    k[2..].copy_from_slice(&id.to_be_bytes());
    k
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() -> weir_statestore::Result<()> {
    let (keys, ops) = (env("WEIR_BENCH_KEYS", 2_000_000), env("WEIR_BENCH_OPS", 4_000_000));
    let dir = tempfile::tempdir().map_err(weir_statestore::Error::io_at("tempdir"))?;
    let options = Options { write_buffer_bytes: 16 << 20, block_cache_bytes: 64 << 20, ..Options::default() };
    let mut store = Store::create(&dir.path().join("store"), options)?;
    let every = env("WEIR_BENCH_CHECKPOINT_EVERY", 0);
    let shared = dir.path().join("shared");
    let mut known = std::collections::HashSet::new();
    let mut shares = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let start = Instant::now();
    for op in 0..ops {
        if every > 0 && op > 0 && op % every == 0 {
            let manifest = store.checkpoint(&shared)?;
            let new: u64 = manifest.runs.iter().filter(|r| !known.contains(&r.name)).map(|r| r.bytes).sum();
            shares.push(new as f64 / manifest.bytes().max(1) as f64);
            known = manifest.runs.into_iter().map(|r| r.name).collect();
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = key(x % keys);
        let mut v = store.get(&k)?.unwrap_or_else(|| vec![0u8; 32]);
        let n = u64::from_le_bytes(v[..8].try_into().unwrap_or_default()) + 1;
        v[..8].copy_from_slice(&n.to_le_bytes());
        store.put(&k, &v)?;
    }
    let secs = start.elapsed().as_secs_f64();
    println!("weir-statestore keys={keys} ops={ops} secs={secs:.2} ops/s={:.0}", ops as f64 / secs);
    // The first half of the checkpoints sees the state grow (most rows add a key); the second
    // half sees it change in place.
    let settled = &shares[shares.len() / 2..];
    if let Some(largest) = settled.iter().copied().reduce(f64::max) {
        println!(
            "the last {} checkpoints wrote {:.1} % of the state at most, {:.1} % on average",
            settled.len(),
            largest * 100.0,
            settled.iter().sum::<f64>() * 100.0 / settled.len() as f64
        );
    }
    let t = Instant::now();
    let first = store.checkpoint(&shared)?;
    println!("first checkpoint: {} bytes in {:.2} s", first.bytes(), t.elapsed().as_secs_f64());
    for id in 0..keys / 100 {
        store.put(&key(id * 100), &[1u8; 32])?;
    }
    let t = Instant::now();
    let second = store.checkpoint(&shared)?;
    let old: std::collections::HashSet<&str> = first.runs.iter().map(|r| r.name.as_str()).collect();
    let new: u64 = second.runs.iter().filter(|r| !old.contains(r.name.as_str())).map(|r| r.bytes).sum();
    println!(
        "second checkpoint after 1% of keys changed: {new} new bytes of {} ({:.1}%) in {:.2} s",
        second.bytes(),
        new as f64 * 100.0 / second.bytes() as f64,
        t.elapsed().as_secs_f64()
    );
    println!("{:?}", store.stats());
    Ok(())
}
