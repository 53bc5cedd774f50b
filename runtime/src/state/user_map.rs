//! The entries of one key's map in a [`MapState`](super::MapState). Most keys hold a few
//! entries (a window aggregate's open slices, a join key's one row), for which a hash table —
//! at least four buckets, a hash per lookup — costs more memory and time than a short vector
//! searched in order. A map moves to a hash table once it holds more than [`SMALL`] entries
//! and stays there.

use std::hash::Hash;

/// The most entries a map keeps in a vector.
const SMALL: usize = 8;

/// One key's entries, in no particular order.
#[derive(Debug, Clone)]
pub(crate) enum UserMap<K, V> {
    /// At most [`SMALL`] entries, searched in order.
    Few(Vec<(K, V)>),
    /// More entries than that, by hash.
    Many(hashbrown::HashMap<K, V>),
}

impl<K, V> Default for UserMap<K, V> {
    fn default() -> Self {
        UserMap::Few(Vec::new())
    }
}

impl<K: Eq + Hash, V> UserMap<K, V> {
    /// The value of `key`.
    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        match self {
            UserMap::Few(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            UserMap::Many(map) => map.get(key),
        }
    }

    /// Sets `key` to `value`.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        match self {
            UserMap::Few(entries) => match entries.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = value,
                None => {
                    self.push(key, value);
                }
            },
            UserMap::Many(map) => {
                map.insert(key, value);
            }
        }
    }

    /// Adds `key`, which is not present, with `value`, and returns the value in place; a
    /// vector full at [`SMALL`] entries becomes a hash table first.
    fn push(&mut self, key: K, value: V) -> &mut V {
        if let UserMap::Few(entries) = self {
            if entries.len() >= SMALL {
                *self = UserMap::Many(std::mem::take(entries).into_iter().collect());
            }
        }
        match self {
            UserMap::Few(entries) => {
                // One entry is the common case: no room is reserved beyond it.
                entries.reserve_exact(entries.len().max(1));
                let at = entries.len();
                entries.push((key, value));
                &mut entries[at].1
            }
            UserMap::Many(map) => map.entry(key).insert(value).into_mut(),
        }
    }

    /// The value of `key` to change: a present one that `keep` accepts stays; otherwise
    /// `make` gives the new one, or `None`, which removes a present entry (and adds none).
    pub(crate) fn upsert(
        &mut self,
        key: K,
        keep: impl FnOnce(&V) -> bool,
        make: impl FnOnce() -> Option<V>,
    ) -> Option<&mut V> {
        let at = match self {
            UserMap::Few(entries) => Some(entries.iter().position(|(k, _)| *k == key)),
            UserMap::Many(_) => None,
        };
        match (self, at) {
            (UserMap::Few(entries), Some(Some(i))) => {
                if !keep(&entries[i].1) {
                    match make() {
                        Some(value) => entries[i].1 = value,
                        None => {
                            entries.swap_remove(i);
                            return None;
                        }
                    }
                }
                Some(&mut entries[i].1)
            }
            (few @ UserMap::Few(_), _) => {
                let value = make()?;
                Some(few.push(key, value))
            }
            (UserMap::Many(map), _) => match map.entry(key) {
                hashbrown::hash_map::Entry::Occupied(entry) if keep(entry.get()) => Some(entry.into_mut()),
                hashbrown::hash_map::Entry::Occupied(mut entry) => match make() {
                    Some(value) => {
                        *entry.get_mut() = value;
                        Some(entry.into_mut())
                    }
                    None => {
                        entry.remove();
                        None
                    }
                },
                hashbrown::hash_map::Entry::Vacant(entry) => Some(entry.insert(make()?)),
            },
        }
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        match self {
            UserMap::Few(entries) => {
                let i = entries.iter().position(|(k, _)| k == key)?;
                Some(entries.swap_remove(i).1)
            }
            UserMap::Many(map) => map.remove(key),
        }
    }

    /// Whether no entry is left.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            UserMap::Few(entries) => entries.is_empty(),
            UserMap::Many(map) => map.is_empty(),
        }
    }

    /// Keeps the entries `keep` accepts (it may change them).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        match self {
            UserMap::Few(entries) => entries.retain_mut(|(k, v)| keep(k, v)),
            UserMap::Many(map) => map.retain(|k, v| keep(k, v)),
        }
    }

    /// The entries.
    pub(crate) fn iter(&self) -> Iter<'_, K, V> {
        match self {
            UserMap::Few(entries) => Iter::Few(entries.iter()),
            UserMap::Many(map) => Iter::Many(map.iter()),
        }
    }

    /// The entries, values to change in place.
    pub(crate) fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        match self {
            UserMap::Few(entries) => IterMut::Few(entries.iter_mut()),
            UserMap::Many(map) => IterMut::Many(map.iter_mut()),
        }
    }
}

/// The entries of a [`UserMap`].
pub(crate) enum Iter<'a, K, V> {
    Few(std::slice::Iter<'a, (K, V)>),
    Many(hashbrown::hash_map::Iter<'a, K, V>),
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Few(entries) => entries.next().map(|(k, v)| (k, v)),
            Iter::Many(entries) => entries.next(),
        }
    }
}

/// The entries of a [`UserMap`], values to change in place.
pub(crate) enum IterMut<'a, K, V> {
    Few(std::slice::IterMut<'a, (K, V)>),
    Many(hashbrown::hash_map::IterMut<'a, K, V>),
}

impl<'a, K, V> Iterator for IterMut<'a, K, V> {
    type Item = (&'a K, &'a mut V);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            IterMut::Few(entries) => entries.next().map(|(k, v)| (&*k, v)),
            IterMut::Many(entries) => entries.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::{Rng, SeedableRng};

    use super::{UserMap, SMALL};

    /// Random inserts, upserts and removes over key ranges around [`SMALL`] leave the map
    /// holding what a hash map given the same operations holds.
    #[test]
    fn a_user_map_holds_what_a_hash_map_holds() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for round in 0..200 {
            let keys = [2, SMALL, SMALL + 1, 3 * SMALL][round % 4] as i64;
            let (mut map, mut model) = (UserMap::default(), HashMap::new());
            for _ in 0..rng.random_range(1..100) {
                let (key, value) = (rng.random_range(0..keys), rng.random_range(0..1000));
                match rng.random_range(0..5) {
                    0 => {
                        map.insert(key, value);
                        model.insert(key, value);
                    }
                    1 => assert_eq!(map.remove(&key), model.remove(&key)),
                    2 => {
                        map.retain(|k, v| {
                            *v += 1;
                            k % 3 != 0
                        });
                        model.retain(|k, v| {
                            *v += 1;
                            k % 3 != 0
                        });
                    }
                    _ => {
                        // Keep an even value, replace an odd one (or remove it when `value` is odd).
                        let got = map.upsert(key, |v| v % 2 == 0, || (value % 2 == 0).then_some(value)).copied();
                        let expected = match model.get(&key) {
                            Some(v) if v % 2 == 0 => Some(*v),
                            _ if value % 2 == 0 => model.insert(key, value).map_or(Some(value), |_| Some(value)),
                            _ => model.remove(&key).and(None),
                        };
                        assert_eq!(got, expected, "round {round}");
                    }
                }
                let mut entries: Vec<(i64, i64)> = map.iter().map(|(k, v)| (*k, *v)).collect();
                entries.sort_unstable();
                let mut expected: Vec<(i64, i64)> = model.iter().map(|(k, v)| (*k, *v)).collect();
                expected.sort_unstable();
                assert_eq!(entries, expected, "round {round}");
                assert_eq!(map.is_empty(), model.is_empty());
                assert!(model.keys().all(|k| map.get(k) == model.get(k)));
            }
        }
    }
}
