//! The store against a `BTreeMap` recomputation on random operations, checkpoints and
//! restores at other key-group ranges, and damage detection.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;

/// Small enough that a few thousand writes flush and compact many times.
const SMALL: Options = Options { write_buffer_bytes: 4 << 10, block_cache_bytes: 16 << 10, base_files: 8 };

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

/// Random puts and deletes, over all key groups or a few, with a checkpoint every few hundred
/// steps (so fresh runs become
/// layers and layers merge into the base, tombstones and all), checked against a map: every
/// read, a scan of each key group after each checkpoint, and the store restored from each
/// checkpoint whole and split three ways; every other checkpoint the store goes on as its
/// restored copy, as a job does after a failure.
#[test]
fn layers_and_base_read_back_as_a_map_holds_them_through_checkpoints_and_restores() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let mut rng = SmallRng::seed_from_u64(44);
    let mut store = Store::create(&dir.path().join("s"), SMALL).unwrap();
    let mut model = BTreeMap::new();
    let (mut merged_layers, mut base_files) = (0, 0);
    for round in 0..40 {
        // Some rounds write a key group or two only: their layers are merged and gone while
        // older, wider layers still hold dead entries of those groups.
        let groups = if rng.random_bool(0.5) {
            0..16
        } else {
            let g = rng.random_range(0..15);
            g..g + rng.random_range(1..3)
        };
        for _ in 0..rng.random_range(50..600) {
            let k = key(rng.random_range(groups.clone()), rng.random_range(0..200));
            if rng.random_bool(0.3) {
                store.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v: Vec<u8> = (0..rng.random_range(0..60)).map(|_| rng.random()).collect();
                store.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            let probe = key(rng.random_range(0..16), rng.random_range(0..200));
            assert_eq!(store.get(&probe).unwrap(), model.get(&probe).cloned(), "round {round}");
        }
        let manifest = Manifest::decode(&store.checkpoint(&shared).unwrap().encode()).unwrap();
        merged_layers += manifest.runs.iter().filter(|r| !r.merged.is_empty()).count();
        base_files = base_files.max(manifest.runs.iter().filter(|r| r.kind == RunKind::Base).count());
        assert_eq!(scan_all(&store), model, "round {round}");
        for group in 0..16u16 {
            let (from, until) = (key(group, 0), key(group + 1, 0));
            let range: BTreeMap<_, _> =
                store.scan_range(&from, &until).map(|e| e.unwrap()).map(|(k, v)| (k, v.unwrap())).collect();
            assert_eq!(range, model.range(from..until).map(|(k, v)| (k.clone(), v.clone())).collect());
        }
        let mut union = BTreeMap::new();
        for (i, range) in [0..=3, 4..=12, 13..=15].into_iter().enumerate() {
            let part = dir.path().join(format!("r{round}-{i}"));
            let part = Store::restore(&part, SMALL, &shared, std::slice::from_ref(&manifest), range).unwrap();
            union.extend(scan_all(&part));
        }
        assert_eq!(union, model, "round {round}, split");
        if round % 2 == 1 {
            let restored = dir.path().join(format!("w{round}"));
            store = Store::restore(&restored, SMALL, &shared, &[manifest], 0..=u16::MAX).unwrap();
            for (k, v) in model.iter().step_by(7) {
                assert_eq!(store.get(k).unwrap().as_ref(), Some(v));
            }
        }
    }
    assert!(merged_layers > 0 && base_files > 1, "merged layers {merged_layers}, base files {base_files}");
}

#[test]
fn a_manifest_from_before_layers_reads_as_layers() {
    let mut old = b"WSM1".to_vec();
    old.extend_from_slice(&1u32.to_le_bytes());
    for part in [&b"a.run"[..], &[0, 1, 7], &[0, 9, 1]] {
        old.extend_from_slice(&(part.len() as u32).to_le_bytes());
        old.extend_from_slice(part);
    }
    old.extend_from_slice(&5u64.to_le_bytes());
    old.extend_from_slice(&100u64.to_le_bytes());
    let manifest = Manifest::decode(&old).unwrap();
    assert_eq!(manifest.runs[0].kind, RunKind::Layer);
    assert!(manifest.runs[0].merged.is_empty() && manifest.runs[0].bytes == 100);
    assert_eq!(Manifest::decode(&manifest.encode()).unwrap(), manifest);
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

/// State of 100 000 keys with 100-byte values (lz4 cannot shrink them), then 150 checkpoints
/// each after 1 % of the keys changed (the first passes of merges into the base and the
/// steady state after them): every checkpoint writes less than 5 % of the state (its layer
/// and the base files its merges rewrote), under 4 % on average.
#[test]
fn checkpoints_after_one_percent_of_keys_changed_write_under_five_percent_of_the_state() {
    const KEYS: u32 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let options = Options { write_buffer_bytes: 1 << 20, block_cache_bytes: 1 << 20, ..Options::default() };
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
    for _ in 0..150 {
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
    assert!(mean < 0.04, "the checkpoints wrote {:.1} % of the state on average: {written:.3?}", mean * 100.0);
    assert!(written.iter().all(|&w| w < 0.05), "a checkpoint wrote 5 % of the state or more: {written:.3?}");
}

#[test]
fn a_checkpoint_after_a_few_changes_writes_only_the_new_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let options = Options { write_buffer_bytes: 64 << 10, block_cache_bytes: 64 << 10, ..Options::default() };
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

/// A run file replaced by another valid run (of another store, another checkpoint) is refused
/// on restore, naming the file and what does not match; restored as it was, the store would
/// read the other run's entries.
#[test]
fn a_run_replaced_by_another_valid_run_is_refused_on_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (shared, other_shared) = (dir.path().join("shared"), dir.path().join("other"));
    let (mut store, _) = random_store(&dir.path().join("s"), 44, 3_000);
    let (mut other, _) = random_store(&dir.path().join("o"), 45, 3_000);
    let manifest = store.checkpoint(&shared).unwrap();
    let foreign = other.checkpoint(&other_shared).unwrap();
    let victim = shared.join(&manifest.runs[0].name);
    std::fs::remove_file(&victim).unwrap();
    std::fs::copy(other_shared.join(&foreign.runs[0].name), &victim).unwrap();
    let err = Store::restore(&dir.path().join("r"), SMALL, &shared, &[manifest], 0..=u16::MAX).unwrap_err();
    assert!(
        err.to_string().contains(&manifest_name(&victim))
            && err.to_string().contains("is not the run the checkpoint names"),
        "{err}"
    );
}

fn manifest_name(path: &std::path::Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}
