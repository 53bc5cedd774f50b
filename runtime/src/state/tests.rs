//! Keyed state against a from-scratch model on random operations, through checkpoints and
//! restores at other parallelisms, with and without a TTL.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::backend::scoped;
use super::{owns_key, Key, KeyedTimers, ListState, MapState, StateBackend, ValueState};
use crate::checkpoint::{StateReader, StateWriter};
use crate::subtask::SubtaskInfo;
use crate::value::Value;

/// Runs `test` with its states on the heap, then on disk with full and with incremental
/// checkpoints, with a budget of a few kilobytes (entries leave the heap all the time, for a
/// test of more than a few keys: `spills`).
fn on_each_backend(spills: bool, test: impl Fn(&str)) {
    let shared = tempfile::tempdir().unwrap();
    let backends = [
        ("hashmap", StateBackend::heap()),
        ("rocksdb", StateBackend::disk(16 << 10, None).unwrap()),
        ("rocksdb incremental", StateBackend::disk(16 << 10, Some(shared.path().to_path_buf())).unwrap()),
    ];
    for (name, backend) in backends {
        let max_parallelism = info(0, 1).max_parallelism;
        scoped(&backend, max_parallelism, || {
            test(name);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        if spills {
            assert_eq!(backend.entries_written() > 0, name != "hashmap", "{name}: entries left the heap");
        }
    }
}

fn info(index: usize, parallelism: usize) -> SubtaskInfo {
    SubtaskInfo::new("op", index, parallelism)
}

fn key(k: i64) -> Key {
    smallvec::smallvec![Value::BigInt(k), Value::string(&format!("k{}", k % 3))]
}

/// Restores `parallelism` subtasks from `states` with `restore`.
fn rescaled<S>(
    states: &[StateReader],
    parallelism: usize,
    new: impl Fn() -> S,
    restore: impl Fn(&mut S, &[StateReader], &SubtaskInfo),
) -> Vec<S> {
    (0..parallelism)
        .map(|i| {
            let mut s = new();
            restore(&mut s, states, &info(i, parallelism));
            s
        })
        .collect()
}

/// The subtask of `parts` (of `parallelism`) that owns `key`.
fn owner(key: &Key, parallelism: usize) -> usize {
    (0..parallelism).find(|&i| owns_key(key, &info(i, parallelism))).expect("every key has an owner")
}

#[test]
fn value_list_and_map_state_follow_a_model_through_rescaling_restores() {
    on_each_backend(true, follow_a_model);
}

fn follow_a_model(backend: &str) {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut parallelism = 2;
    let new_values = || ValueState::<i64>::new("values", None);
    let new_lists = || ListState::<Value>::new("lists", None);
    let new_maps = || MapState::<Value, i64>::new("maps", None);
    let mut values: Vec<_> = (0..parallelism).map(|_| new_values()).collect();
    let mut lists: Vec<_> = (0..parallelism).map(|_| new_lists()).collect();
    let mut maps: Vec<_> = (0..parallelism).map(|_| new_maps()).collect();
    let mut value_model: BTreeMap<i64, i64> = BTreeMap::new();
    let mut list_model: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    let mut map_model: BTreeMap<i64, BTreeMap<i64, i64>> = BTreeMap::new();
    for round in 0..6 {
        for _ in 0..2_000 {
            let k = rng.random_range(0..200);
            let s = owner(&key(k), parallelism);
            let n: i64 = rng.random_range(0..1000);
            match rng.random_range(0..6) {
                0 => {
                    values[s].put(&key(k), n, 0);
                    value_model.insert(k, n);
                }
                1 => assert_eq!(values[s].remove(&key(k)), value_model.remove(&k)),
                2 => {
                    lists[s].add(&key(k), Value::BigInt(n), 0);
                    list_model.entry(k).or_default().push(Value::BigInt(n));
                }
                3 => {
                    lists[s].clear(&key(k));
                    list_model.remove(&k);
                }
                4 => {
                    maps[s].put(&key(k), Value::BigInt(n % 5), n, 0);
                    map_model.entry(k).or_default().insert(n % 5, n);
                }
                _ => {
                    let removed = maps[s].remove(&key(k), &Value::BigInt(n % 5));
                    let model = map_model.get_mut(&k).and_then(|m| m.remove(&(n % 5)));
                    map_model.retain(|_, m| !m.is_empty());
                    assert_eq!(removed, model);
                }
            }
        }
        for k in 0..200 {
            let s = owner(&key(k), parallelism);
            assert_eq!(
                values[s].get(&key(k), 0).copied(),
                value_model.get(&k).copied(),
                "{backend}: round {round}, key {k}"
            );
            let list: Vec<Value> = lists[s].get(&key(k), 0).cloned().collect();
            assert_eq!(list, list_model.get(&k).cloned().unwrap_or_default(), "{backend}: round {round}, key {k}");
            let mut map: Vec<(i64, i64)> =
                maps[s].entries(&key(k), 0).map(|(u, v)| (u.as_i64().unwrap(), *v)).collect();
            map.sort_unstable();
            let model: Vec<(i64, i64)> = map_model.get(&k).map(|m| m.clone().into_iter().collect()).unwrap_or_default();
            assert_eq!(map, model, "{backend}: round {round}, key {k}");
        }
        // A checkpoint of every subtask, restored at another parallelism.
        let snapshot = |write: &mut dyn FnMut(&mut StateWriter)| {
            let mut w = StateWriter::new();
            write(&mut w);
            w.into_reader()
        };
        let value_states: Vec<StateReader> = values.iter_mut().map(|v| snapshot(&mut |w| v.snapshot(w, 0))).collect();
        let list_states: Vec<StateReader> = lists.iter_mut().map(|v| snapshot(&mut |w| v.snapshot(w, 0))).collect();
        let map_states: Vec<StateReader> = maps.iter_mut().map(|v| snapshot(&mut |w| v.snapshot(w, 0))).collect();
        parallelism = [3, 1, 4, 2, 5, 2][round];
        values = rescaled(&value_states, parallelism, new_values, |s, st, i| s.restore(st, i).unwrap());
        lists = rescaled(&list_states, parallelism, new_lists, |s, st, i| s.restore(st, i).unwrap());
        maps = rescaled(&map_states, parallelism, new_maps, |s, st, i| s.restore(st, i).unwrap());
        assert_eq!(
            values.iter().map(ValueState::len).sum::<usize>(),
            value_model.len(),
            "{backend}: no key lost or doubled"
        );
    }
}

#[test]
fn expired_entries_are_never_returned_nor_checkpointed() {
    on_each_backend(false, |_| expired_entries());
}

fn expired_entries() {
    let ttl = Some(Duration::from_millis(100));
    let mut values = ValueState::<i64>::new("v", ttl);
    let mut lists = ListState::<i64>::new("l", ttl);
    let mut maps = MapState::<i64, i64>::new("m", ttl);
    values.put(&key(1), 1, 0);
    values.put(&key(2), 2, 50);
    lists.add(&key(1), 10, 0);
    lists.add(&key(1), 11, 60);
    maps.put(&key(1), 5, 50, 0);
    maps.put(&key(1), 6, 60, 60);
    // Written at 0: expired at 100; written at 50 or 60: live until 150 or 160.
    assert_eq!(values.get(&key(1), 99), Some(&1));
    assert_eq!(values.get(&key(1), 100), None);
    assert_eq!(values.get(&key(2), 100), Some(&2));
    assert_eq!(lists.get(&key(1), 100).copied().collect::<Vec<_>>(), vec![11]);
    assert_eq!(maps.get(&key(1), &5, 100), None);
    assert_eq!(maps.get(&key(1), &6, 100), Some(&60));
    // A write renews the entry.
    values.put(&key(2), 3, 140);
    let mut state = StateWriter::new();
    values.snapshot(&mut state, 200);
    maps.snapshot(&mut state, 200);
    let mut restored_values = ValueState::<i64>::new("v", ttl);
    let mut restored_maps = MapState::<i64, i64>::new("m", ttl);
    let state = vec![state.into_reader()];
    restored_values.restore(&state, &info(0, 1)).unwrap();
    restored_maps.restore(&state, &info(0, 1)).unwrap();
    assert_eq!(restored_values.len(), 1, "only the renewed entry is in the checkpoint");
    assert_eq!(restored_values.get(&key(2), 200), Some(&3));
    assert_eq!(restored_maps.entries(&key(1), 200).count(), 0, "expired map entries are not checkpointed");
    lists.purge_expired(1_000);
    assert_eq!(lists.get(&key(1), 1_000).count(), 0);
}

#[test]
fn a_damaged_section_is_refused_naming_the_state() {
    let mut state = StateWriter::new();
    state.section("counts").u32(3);
    let mut values = ValueState::<i64>::new("counts", None);
    let error = values.restore(&[state.into_reader()], &info(0, 1)).unwrap_err().to_string();
    assert!(error.contains("the keyed state 'counts' is malformed"), "{error}");
}

#[test]
fn changing_a_value_in_place_renews_it_and_an_expired_one_starts_over() {
    on_each_backend(false, |_| changing_in_place());
}

fn changing_in_place() {
    let mut values = ValueState::<i64>::new("v", Some(Duration::from_millis(100)));
    let change = |values: &mut ValueState<i64>, now, make: Option<i64>| {
        values.get_mut_or_insert_with(&key(1), now, || make).unwrap().map(|v| {
            *v += 1;
            *v
        })
    };
    assert_eq!(change(&mut values, 0, None), None, "no value and none to make: nothing");
    assert!(values.is_empty());
    assert_eq!(change(&mut values, 0, Some(10)), Some(11), "made, then changed");
    assert_eq!(change(&mut values, 90, Some(100)), Some(12), "a live value is changed, not made");
    assert_eq!(change(&mut values, 189, None), Some(13), "the change at 90 renewed it");
    assert_eq!(change(&mut values, 289, Some(0)), Some(1), "expired at 289: made anew");
    assert_eq!(change(&mut values, 389, None), None, "expired, nothing made: dropped");
    assert!(values.is_empty());
    values.put(&key(1), 1, 0);
    values.put(&key(2), 2, 50);
    values.put(&key(3), 3, 50);
    let mut visited = Vec::new();
    values.retain(120, |k, v| {
        visited.push(*v);
        k != &key(3)[..]
    });
    assert_eq!(visited.len(), 2, "the expired key is not visited");
    assert_eq!((values.len(), values.get(&key(2), 120)), (1, Some(&2)));
}

#[test]
fn timers_fire_in_time_order_as_a_model_through_rescaling_restores() {
    on_each_backend(true, timers_follow_a_model);
}

/// Random registrations, removals and watermarks over timers of 300 keys, each pop checked
/// against a set of (time, key): what fires is due, in time order, and once.
fn timers_follow_a_model(backend: &str) {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut parallelism = 2;
    let new_timers = || KeyedTimers::new("timers");
    let mut timers: Vec<KeyedTimers> = (0..parallelism).map(|_| new_timers()).collect();
    let mut model: BTreeSet<(i64, i64)> = BTreeSet::new();
    let mut watermark = 0;
    for round in 0..6 {
        for step in 0..3_000 {
            let k = rng.random_range(0..300);
            let s = owner(&key(k), parallelism);
            let time = watermark + rng.random_range(1..2_000);
            match rng.random_range(0..10) {
                0..=5 => assert_eq!(timers[s].register(&key(k), time), model.insert((time, k)), "{backend}: {step}"),
                6 | 7 => {
                    // A timer that may exist: one of the model's, or a random one.
                    let (time, k) =
                        model.iter().nth(rng.random_range(0..model.len().max(1))).copied().unwrap_or((time, k));
                    let s = owner(&key(k), parallelism);
                    assert_eq!(timers[s].remove(&key(k), time), model.remove(&(time, k)), "{backend}: {step}");
                }
                _ => {
                    // Slowly: hundreds of timers wait at once, more than the heap may hold.
                    watermark += rng.random_range(0..5);
                    for (s, subtask) in timers.iter_mut().enumerate() {
                        let mut fired: Vec<(i64, i64)> = Vec::new();
                        while let Some((time, keys)) = subtask.pop_due(watermark) {
                            fired.extend(keys.iter().map(|key| (time, key[0].as_i64().unwrap())));
                        }
                        assert!(fired.windows(2).all(|w| w[0].0 <= w[1].0), "{backend}: fired in time order");
                        let mut due: Vec<(i64, i64)> = model
                            .iter()
                            .filter(|(t, k)| *t <= watermark && owner(&key(*k), parallelism) == s)
                            .copied()
                            .collect();
                        model.retain(|t| !due.contains(t));
                        due.sort_unstable();
                        fired.sort_unstable();
                        assert_eq!(fired, due, "{backend}: round {round}, step {step}, subtask {s}");
                        let next = model.iter().find(|(_, k)| owner(&key(*k), parallelism) == s).map(|(t, _)| *t);
                        assert_eq!(subtask.next_time(), next, "{backend}: round {round}, step {step}");
                    }
                }
            }
        }
        assert_eq!(timers.iter().map(KeyedTimers::len).sum::<usize>(), model.len(), "{backend}: round {round}");
        let states: Vec<StateReader> = timers
            .iter_mut()
            .map(|t| {
                let mut w = StateWriter::new();
                t.snapshot(&mut w);
                w.into_reader()
            })
            .collect();
        parallelism = [3, 1, 4, 2, 5, 2][round];
        timers = rescaled(&states, parallelism, new_timers, |t, st, i| t.restore(st, i).unwrap());
        assert_eq!(
            timers.iter().map(KeyedTimers::len).sum::<usize>(),
            model.len(),
            "{backend}: no timer lost or doubled"
        );
    }
}
