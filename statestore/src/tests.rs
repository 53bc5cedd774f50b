//! The store against a `BTreeMap` recomputation on random operations, checkpoints and
//! restores at other key-group ranges, and damage detection.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;

/// Small enough that a few thousand writes flush and compact many times.
const SMALL: Options = Options { write_buffer_bytes: 4 << 10, block_cache_bytes: 16 << 10 };

fn key(group: u16, n: u32) -> Vec<u8> {
    let mut k = group.to_be_bytes().to_vec();
    k.extend_from_slice(&n.to_be_bytes());
    k
}

fn scan_all(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    store.scan(&[]).map(|e| e.unwrap()).map(|(k, v)| (k, v.unwrap())).collect()
}

/// Random puts and deletes over keys in 16 key groups, checked against a map after each step.
fn random_store(dir: &std::path::Path, seed: u64, steps: usize) -> (Store, BTreeMap<Vec<u8>, Vec<u8>>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut store = Store::create(dir, SMALL).unwrap();
    let mut model = BTreeMap::new();
    for step in 0..steps {
        let k = key(rng.random_range(0..16), rng.random_range(0..300));
        if rng.random_bool(0.2) {
            store.delete(&k).unwrap();
            model.remove(&k);
        } else {
            let v: Vec<u8> = (0..rng.random_range(0..40)).map(|_| rng.random()).collect();
            store.put(&k, &v).unwrap();
            model.insert(k.clone(), v);
        }
        let probe = key(rng.random_range(0..16), rng.random_range(0..300));
        assert_eq!(store.get(&probe).unwrap(), model.get(&probe).cloned(), "step {step}");
    }
    (store, model)
}

#[test]
fn random_writes_read_back_as_a_map_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, model) = random_store(&dir.path().join("s"), 41, 20_000);
    let stats = store.stats();
    assert!(stats.runs >= 2 && stats.runs <= 12, "{stats:?}");
    assert!(stats.cache_hits > 0 && stats.cache_misses > 0, "{stats:?}");
    for (k, v) in &model {
        assert_eq!(store.get(k).unwrap().as_ref(), Some(v));
    }
    assert_eq!(scan_all(&store), model);
    let from = key(7, 0);
    let tail: BTreeMap<_, _> = store.scan(&from).map(|e| e.unwrap()).map(|(k, v)| (k, v.unwrap())).collect();
    assert_eq!(tail, model.range(from..).map(|(k, v)| (k.clone(), v.clone())).collect());
    for group in 0..16u16 {
        let (from, until) = (key(group, 0), key(group + 1, 0));
        let range: BTreeMap<_, _> =
            store.scan_range(&from, &until).map(|e| e.unwrap()).map(|(k, v)| (k, v.unwrap())).collect();
        assert_eq!(range, model.range(from..until).map(|(k, v)| (k.clone(), v.clone())).collect(), "group {group}");
    }
}

#[test]
fn a_checkpoint_restores_whole_or_split_by_key_groups() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let (mut store, model) = random_store(&dir.path().join("s"), 42, 6_000);
    let manifest = Manifest::decode(&store.checkpoint(&shared).unwrap().encode()).unwrap();
    let whole =
        Store::restore(&dir.path().join("r"), SMALL, &shared, std::slice::from_ref(&manifest), 0..=u16::MAX).unwrap();
    assert_eq!(scan_all(&whole), model);
    // Three subtasks' ranges, as a rescale to three splits the key groups.
    let mut union = BTreeMap::new();
    for (i, range) in [0..=4, 5..=10, 11..=15].into_iter().enumerate() {
        let part = Store::restore(
            &dir.path().join(format!("p{i}")),
            SMALL,
            &shared,
            std::slice::from_ref(&manifest),
            range.clone(),
        )
        .unwrap();
        let rows = scan_all(&part);
        assert!(rows.keys().all(|k| range.contains(&key_group_of(k))));
        union.extend(rows);
    }
    assert_eq!(union, model);
}

/// State of 100 000 keys with 100-byte values (lz4 cannot shrink them), then 60 checkpoints
/// each after 1 % of the keys changed (a write buffer larger than a checkpoint's changes, so
/// each checkpoint flushes once, as a job's does): what the checkpoints write on average,
/// the runs compactions made included, stays under 5 % of the state, and half of them write
/// less than 3 % (the flush and a merge of small runs).
#[test]
fn checkpoints_after_one_percent_of_keys_changed_write_under_five_percent_of_the_state() {
    const KEYS: u32 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let options = Options { write_buffer_bytes: 1 << 20, block_cache_bytes: 1 << 20 };
    let mut store = Store::create(&dir.path().join("s"), options).unwrap();
    let mut rng = SmallRng::seed_from_u64(7);
    let value = |rng: &mut SmallRng| -> Vec<u8> { (0..100).map(|_| rng.random::<u8>()).collect() };
    for n in 0..KEYS {
        let v = value(&mut rng);
        store.put(&key((n % 128) as u16, n), &v).unwrap();
    }
    let mut known: std::collections::HashSet<String> =
        store.checkpoint(&shared).unwrap().runs.into_iter().map(|r| r.name).collect();
    let mut written = Vec::new();
    for _ in 0..60 {
        for _ in 0..KEYS / 100 {
            let n = rng.random_range(0..KEYS);
            let v = value(&mut rng);
            store.put(&key((n % 128) as u16, n), &v).unwrap();
        }
        let manifest = store.checkpoint(&shared).unwrap();
        let new: u64 = manifest.runs.iter().filter(|r| !known.contains(&r.name)).map(|r| r.bytes).sum();
        written.push(new as f64 / (u64::from(KEYS) * 100) as f64);
        known = manifest.runs.into_iter().map(|r| r.name).collect();
    }
    let mean = written.iter().sum::<f64>() / written.len() as f64;
    assert!(mean < 0.05, "the checkpoints wrote {:.1} % of the state on average: {written:.3?}", mean * 100.0);
    let mut sorted = written.clone();
    sorted.sort_by(f64::total_cmp);
    assert!(sorted[sorted.len() / 2] < 0.03, "the median checkpoint wrote more than 3 %: {written:.3?}");
}

#[test]
fn a_checkpoint_after_a_few_changes_writes_only_the_new_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let options = Options { write_buffer_bytes: 64 << 10, block_cache_bytes: 64 << 10 };
    let mut store = Store::create(&dir.path().join("s"), options).unwrap();
    for n in 0..200_000u32 {
        store.put(&key((n % 64) as u16, n), &n.to_le_bytes()).unwrap();
    }
    let first = store.checkpoint(&shared).unwrap();
    for n in 0..500u32 {
        store.put(&key((n % 64) as u16, n), b"changed").unwrap();
    }
    let second = store.checkpoint(&shared).unwrap();
    let old: std::collections::HashSet<&str> = first.runs.iter().map(|r| r.name.as_str()).collect();
    let new_bytes: u64 = second.runs.iter().filter(|r| !old.contains(r.name.as_str())).map(|r| r.bytes).sum();
    assert!(new_bytes * 20 < second.bytes(), "{new_bytes} new bytes of {}", second.bytes());
    // The first checkpoint's files stay while it is kept, and go when only the second is.
    assert_eq!(remove_unreferenced(&shared, &[first.clone(), second.clone()]).unwrap(), 0);
    let gone = remove_unreferenced(&shared, std::slice::from_ref(&second)).unwrap();
    assert_eq!(gone, first.runs.iter().filter(|r| !second.runs.contains(r)).count());
    let restored = Store::restore(&dir.path().join("r"), options, &shared, &[second], 0..=u16::MAX).unwrap();
    assert_eq!(restored.scan(&[]).count(), 200_000);
}

#[test]
fn a_damaged_run_is_an_error_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let (mut store, _) = random_store(&dir.path().join("s"), 43, 3_000);
    let manifest = store.checkpoint(&shared).unwrap();
    let victim = shared.join(&manifest.runs[0].name);
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[10] ^= 0xff;
    std::fs::remove_file(&victim).unwrap();
    std::fs::write(&victim, &bytes).unwrap();
    let restored = Store::restore(&dir.path().join("r"), SMALL, &shared, &[manifest], 0..=u16::MAX).unwrap();
    let err = restored.scan(&[]).find_map(Result::err).expect("the damaged block is found");
    assert!(err.to_string().contains(&manifest_name(&victim)) && err.to_string().contains("checksum"), "{err}");
    assert!(Manifest::decode(b"nonsense").is_err());
}

fn manifest_name(path: &std::path::Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}
