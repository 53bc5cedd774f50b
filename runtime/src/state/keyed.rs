//! Value, list and map state, each scoped to a key (see the module docs of [`super`]), kept
//! in a [`Tier`]: on the heap, or with the on-disk backend a bounded part of it.

use std::hash::Hash;

use super::tier::{Codec, Tier};
use super::user_map::UserMap;
use super::{Key, StateValue, Ttl};
use crate::checkpoint::codec::{DecodeError, Decoder, Encoder};
use crate::checkpoint::{StateReader, StateWriter};
use crate::error::Result;
use crate::subtask::SubtaskInfo;
use crate::value::Value;

/// An entry and when it was last written (processing time, epoch milliseconds).
#[derive(Debug, Clone, PartialEq)]
struct Stamped<V> {
    value: V,
    written: i64,
}

impl<V: StateValue> Codec for Stamped<V> {
    fn encode(&self, out: &mut Encoder) {
        out.i64(self.written);
        self.value.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        let written = input.i64()?;
        Ok(Stamped { value: V::decode(input)?, written })
    }
}

/// A list, as its count and elements.
impl<V: StateValue> Codec for Vec<Stamped<V>> {
    fn encode(&self, out: &mut Encoder) {
        out.u32(self.len() as u32);
        self.iter().for_each(|e| e.encode(out));
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        (0..input.u32()?).map(|_| Stamped::decode(input)).collect()
    }
}

/// A map, as its count and entries.
impl<K: StateValue + Eq + Hash, V: StateValue> Codec for UserMap<K, Stamped<V>> {
    fn encode(&self, out: &mut Encoder) {
        let at = out.len();
        out.u32(0);
        let mut count = 0;
        for (user_key, e) in self.iter() {
            user_key.encode(out);
            e.encode(out);
            count += 1;
        }
        out.patch_u32(at, count);
    }

    fn decode(input: &mut Decoder<'_>) -> std::result::Result<Self, DecodeError> {
        let mut map = UserMap::default();
        for _ in 0..input.u32()? {
            let user_key = K::decode(input)?;
            map.insert(user_key, Stamped::decode(input)?);
        }
        Ok(map)
    }
}

/// One entry of a state's section: the key, then the entry.
fn read_entry<T: Codec>(input: &mut Decoder<'_>) -> std::result::Result<(Key, T), DecodeError> {
    let key: Key = input.values()?;
    Ok((key, T::decode(input)?))
}

/// One value per key.
#[derive(Debug)]
pub struct ValueState<V> {
    name: String,
    ttl: Ttl,
    entries: Tier<Stamped<V>>,
}

impl<V: StateValue> ValueState<V> {
    /// An empty state named `name` (its section in checkpoints), whose entries live `ttl`
    /// after their last write (`None`: forever).
    pub fn new(name: &str, ttl: Option<std::time::Duration>) -> Self {
        ValueState { name: name.to_string(), ttl: Ttl::new(ttl), entries: Tier::new() }
    }

    /// The value of `key` at processing time `now`; an expired one is dropped and not returned.
    pub fn get(&mut self, key: &[Value], now: i64) -> Option<&V> {
        if self.ttl.is_on() && self.entries.get(key).is_some_and(|e| self.ttl.expired(e.written, now)) {
            self.entries.remove(key);
        }
        self.entries.get(key).map(|e| &e.value)
    }

    /// Sets the value of `key`, written at `now`.
    pub fn put(&mut self, key: &[Value], value: V, now: i64) {
        self.entries.insert(Key::from(key), Stamped { value, written: now });
    }

    /// The value of `key` to change, counted as written at `now`. A key without a live value
    /// (none, or an expired one) takes the value `make` returns, or stays without one when it
    /// returns `None` (and `None` is returned). One hash lookup either way on the heap.
    ///
    /// # Errors
    /// The memory limit refuses the state room for one more key (nothing is changed then).
    pub fn get_mut_or_insert_with(
        &mut self,
        key: &[Value],
        now: i64,
        make: impl FnOnce() -> Option<V>,
    ) -> Result<Option<&mut V>> {
        self.entries.reserve_one()?;
        let ttl = self.ttl;
        let live = |e: &Stamped<V>| !ttl.expired(e.written, now);
        let made = || make().map(|value| Stamped { value, written: now });
        let Some(entry) = self.entries.upsert(key, live, made) else { return Ok(None) };
        entry.written = now;
        Ok(Some(&mut entry.value))
    }

    /// The live value of `key` at `now` to change, counted as written at `now`; an expired one
    /// is dropped and `None` returned.
    pub fn get_mut(&mut self, key: &[Value], now: i64) -> Option<&mut V> {
        if self.ttl.is_on() && self.entries.get(key).is_some_and(|e| self.ttl.expired(e.written, now)) {
            self.entries.remove(key);
        }
        let entry = self.entries.get_mut(key)?;
        entry.written = now;
        Some(&mut entry.value)
    }

    /// Keeps the live values at `now` for which `keep` returns true, after it had them to change
    /// (their write times stay as they were); expired ones are dropped without a visit.
    pub fn retain(&mut self, now: i64, mut keep: impl FnMut(&[Value], &mut V) -> bool) {
        let ttl = self.ttl;
        self.entries.retain(|key, e| !ttl.expired(e.written, now) && keep(key, &mut e.value));
    }

    /// Removes the value of `key`, returning it.
    pub fn remove(&mut self, key: &[Value]) -> Option<V> {
        self.entries.remove(key).map(|e| e.value)
    }

    /// How many keys hold a value (expired ones included until they are dropped; with the
    /// on-disk backend, a scan of the store).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key holds a value.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops every entry expired at `now`.
    pub fn purge_expired(&mut self, now: i64) {
        let ttl = self.ttl;
        self.entries.retain(|_, e| !ttl.expired(e.written, now));
    }

    /// Writes the live entries at `now` as the section of this state (with incremental
    /// checkpoints of the on-disk backend, its store's manifest).
    pub fn snapshot(&mut self, state: &mut StateWriter, now: i64) {
        let ttl = self.ttl;
        self.entries.snapshot(&self.name, state, |key, entry, out| {
            if ttl.expired(entry.written, now) {
                return false;
            }
            out.values(key);
            entry.encode(out);
            true
        });
    }

    /// Takes back the entries of every old subtask's state whose keys subtask `info` owns.
    ///
    /// # Errors
    /// A damaged section, naming the state.
    pub fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.entries.restore(&self.name, states, info, read_entry)
    }
}

impl<V: StateValue + Clone> Clone for ValueState<V> {
    fn clone(&self) -> Self {
        ValueState { name: self.name.clone(), ttl: self.ttl, entries: self.entries.clone() }
    }
}

/// A list of values per key; each element expires on its own.
#[derive(Debug)]
pub struct ListState<V> {
    name: String,
    ttl: Ttl,
    entries: Tier<Vec<Stamped<V>>>,
}

impl<V: StateValue> ListState<V> {
    /// An empty state named `name`, whose elements live `ttl` after they were added.
    pub fn new(name: &str, ttl: Option<std::time::Duration>) -> Self {
        ListState { name: name.to_string(), ttl: Ttl::new(ttl), entries: Tier::new() }
    }

    /// Drops the expired elements of the list of `key` at `now`, and the list if none is left
    /// (nothing to do without a TTL).
    fn drop_expired(&mut self, key: &[Value], now: i64) {
        let ttl = self.ttl;
        if !ttl.is_on() {
            return;
        }
        if let Some(list) = self.entries.get(key) {
            if !list.iter().any(|e| ttl.expired(e.written, now)) {
                return;
            }
        }
        if let Some(list) = self.entries.get_mut(key) {
            list.retain(|e| !ttl.expired(e.written, now));
            if list.is_empty() {
                self.entries.remove(key);
            }
        }
    }

    /// The live elements of `key` at `now`, in the order they were added.
    pub fn get(&mut self, key: &[Value], now: i64) -> impl Iterator<Item = &V> {
        self.drop_expired(key, now);
        self.entries.get(key).into_iter().flatten().map(|e| &e.value)
    }

    /// The live list of `key` at `now` to change in place, `None` when it has no live element
    /// (an emptied list stays until [`ListState::clear`] or a snapshot leaves it out).
    pub fn get_mut(&mut self, key: &[Value], now: i64) -> Option<ListMut<'_, V>> {
        let ttl = self.ttl;
        let list = self.entries.get_mut(key)?;
        if ttl.is_on() {
            list.retain(|e| !ttl.expired(e.written, now));
        }
        (!list.is_empty()).then_some(ListMut { list, now })
    }

    /// Appends `value` to the list of `key`, added at `now`.
    pub fn add(&mut self, key: &[Value], value: V, now: i64) {
        self.entries.get_or_insert_with(key, Vec::new).push(Stamped { value, written: now });
    }

    /// Replaces the list of `key` (an empty one removes it), written at `now`.
    pub fn update(&mut self, key: &[Value], values: Vec<V>, now: i64) {
        if values.is_empty() {
            self.entries.remove(key);
        } else {
            self.entries
                .insert(Key::from(key), values.into_iter().map(|value| Stamped { value, written: now }).collect());
        }
    }

    /// Removes the list of `key`.
    pub fn clear(&mut self, key: &[Value]) {
        self.entries.remove(key);
    }

    /// Removes the list of `key` and returns its elements (expired ones included), in order.
    pub fn take(&mut self, key: &[Value]) -> Vec<V> {
        self.entries.remove(key).unwrap_or_default().into_iter().map(|e| e.value).collect()
    }

    /// Visits every element of every key (expired ones included until they are dropped).
    pub fn for_each(&self, mut visit: impl FnMut(&[Value], &V)) {
        self.entries.for_each(|key, list| list.iter().for_each(|e| visit(key, &e.value)));
    }

    /// Drops every element expired at `now`.
    pub fn purge_expired(&mut self, now: i64) {
        let ttl = self.ttl;
        self.entries.retain(|_, list| {
            list.retain(|e| !ttl.expired(e.written, now));
            !list.is_empty()
        });
    }

    /// Writes the live elements at `now` as the section of this state.
    pub fn snapshot(&mut self, state: &mut StateWriter, now: i64) {
        let ttl = self.ttl;
        self.entries.snapshot(&self.name, state, |key, list, out| {
            let live = list.iter().filter(|e| !ttl.expired(e.written, now));
            let count = live.clone().count();
            if count == 0 {
                return false;
            }
            out.values(key);
            out.u32(count as u32);
            live.for_each(|e| e.encode(out));
            true
        });
    }

    /// Takes back the lists of every old subtask's state whose keys subtask `info` owns.
    ///
    /// # Errors
    /// A damaged section, naming the state.
    pub fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.entries.restore(&self.name, states, info, read_entry)
    }
}

impl<V: StateValue + Clone> Clone for ListState<V> {
    fn clone(&self) -> Self {
        ListState { name: self.name.clone(), ttl: self.ttl, entries: self.entries.clone() }
    }
}

/// One key's list, changed in place; what it writes is stamped with the time it was taken at.
#[derive(Debug)]
pub struct ListMut<'a, V> {
    list: &'a mut Vec<Stamped<V>>,
    now: i64,
}

impl<V> ListMut<'_, V> {
    /// How many elements the list has.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether it has none (after [`ListMut::remove`] took the last).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The index of the first element `matches` accepts.
    pub fn position(&self, mut matches: impl FnMut(&V) -> bool) -> Option<usize> {
        self.list.iter().position(|e| matches(&e.value))
    }

    /// The last element.
    pub fn last(&self) -> Option<&V> {
        self.list.last().map(|e| &e.value)
    }

    /// Replaces element `at`.
    pub fn set(&mut self, at: usize, value: V) {
        self.list[at] = Stamped { value, written: self.now };
    }

    /// Appends `value`.
    pub fn push(&mut self, value: V) {
        self.list.push(Stamped { value, written: self.now });
    }

    /// Removes element `at`, returning it.
    pub fn remove(&mut self, at: usize) -> V {
        self.list.remove(at).value
    }

    /// The elements, to change in place (a change does not count as a write).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.list.iter_mut().map(|e| &mut e.value)
    }

    /// Keeps the elements `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        self.list.retain(|e| keep(&e.value));
    }
}

/// A map per key (user key to value); each entry expires on its own.
#[derive(Debug)]
pub struct MapState<K, V> {
    name: String,
    ttl: Ttl,
    entries: Tier<UserMap<K, Stamped<V>>>,
}

impl<K: StateValue + Eq + Hash + Clone, V: StateValue> MapState<K, V> {
    /// An empty state named `name`, whose entries live `ttl` after their last write.
    pub fn new(name: &str, ttl: Option<std::time::Duration>) -> Self {
        MapState { name: name.to_string(), ttl: Ttl::new(ttl), entries: Tier::new() }
    }

    /// The value of `user_key` in the map of `key` at `now`; an expired one is dropped.
    pub fn get(&mut self, key: &[Value], user_key: &K, now: i64) -> Option<&V> {
        let ttl = self.ttl;
        let expired = self.entries.get(key)?.get(user_key).is_some_and(|e| ttl.expired(e.written, now));
        if expired {
            self.entries.get_mut(key)?.remove(user_key);
        }
        self.entries.get(key)?.get(user_key).map(|e| &e.value)
    }

    /// Sets `user_key` to `value` in the map of `key`, written at `now`.
    pub fn put(&mut self, key: &[Value], user_key: K, value: V, now: i64) {
        self.entries.get_or_insert_with(key, UserMap::default).insert(user_key, Stamped { value, written: now });
    }

    /// The value of `user_key` in the map of `key` to change, counted as written at `now`; a
    /// user key without a live value takes the value `make` returns, or stays without one when
    /// it returns `None` (and `None` is returned; the key's map is then kept even if empty, to
    /// keep this one lookup: it holds nothing, and a snapshot leaves it out).
    ///
    /// # Errors
    /// The memory limit refuses the state room for one more key (nothing is changed then).
    pub fn get_mut_or_insert_with(
        &mut self,
        key: &[Value],
        user_key: K,
        now: i64,
        make: impl FnOnce() -> Option<V>,
    ) -> Result<Option<&mut V>> {
        self.entries.reserve_one()?;
        let ttl = self.ttl;
        let map = self.entries.get_or_insert_with(key, UserMap::default);
        let live = |e: &Stamped<V>| !ttl.expired(e.written, now);
        let made = || make().map(|value| Stamped { value, written: now });
        let Some(entry) = map.upsert(user_key, live, made) else { return Ok(None) };
        entry.written = now;
        Ok(Some(&mut entry.value))
    }

    /// Visits every entry of every key (expired ones included until they are dropped).
    pub fn for_each(&self, mut visit: impl FnMut(&[Value], &K, &V)) {
        self.entries.for_each(|key, map| map.iter().for_each(|(user_key, e)| visit(key, user_key, &e.value)));
    }

    /// Changes every entry of every key in place (its last write stays as it was).
    pub fn for_each_mut(&mut self, mut change: impl FnMut(&[Value], &K, &mut V)) {
        self.entries.retain(|key, map| {
            map.iter_mut().for_each(|(user_key, e)| change(key, user_key, &mut e.value));
            true
        });
    }

    /// Removes `user_key` from the map of `key`, returning its value.
    pub fn remove(&mut self, key: &[Value], user_key: &K) -> Option<V> {
        let map = self.entries.get_mut(key)?;
        let removed = map.remove(user_key).map(|e| e.value);
        if map.is_empty() {
            self.entries.remove(key);
        }
        removed
    }

    /// Drops the expired entries of the map of `key` at `now` (nothing to do without a TTL).
    fn drop_expired(&mut self, key: &[Value], now: i64) {
        let ttl = self.ttl;
        if !ttl.is_on() {
            return;
        }
        if let Some(map) = self.entries.get_mut(key) {
            map.retain(|_, e| !ttl.expired(e.written, now));
            if map.is_empty() {
                self.entries.remove(key);
            }
        }
    }

    /// The live entries of the map of `key` at `now`, in no particular order.
    pub fn entries(&mut self, key: &[Value], now: i64) -> impl Iterator<Item = (&K, &V)> {
        self.drop_expired(key, now);
        self.entries.get(key).into_iter().flat_map(UserMap::iter).map(|(k, e)| (k, &e.value))
    }

    /// Removes the map of `key`.
    pub fn clear(&mut self, key: &[Value]) {
        self.entries.remove(key);
    }

    /// Drops every entry expired at `now`.
    pub fn purge_expired(&mut self, now: i64) {
        let ttl = self.ttl;
        self.entries.retain(|_, map| {
            map.retain(|_, e| !ttl.expired(e.written, now));
            !map.is_empty()
        });
    }

    /// Writes the live entries at `now` as the section of this state.
    pub fn snapshot(&mut self, state: &mut StateWriter, now: i64) {
        let ttl = self.ttl;
        self.entries.snapshot(&self.name, state, |key, map, out| {
            let live = || map.iter().filter(|(_, e)| !ttl.expired(e.written, now));
            let count = live().count();
            if count == 0 {
                return false;
            }
            out.values(key);
            out.u32(count as u32);
            for (user_key, e) in live() {
                user_key.encode(out);
                e.encode(out);
            }
            true
        });
    }

    /// Takes back the maps of every old subtask's state whose keys subtask `info` owns.
    ///
    /// # Errors
    /// A damaged section, naming the state.
    pub fn restore(&mut self, states: &[StateReader], info: &SubtaskInfo) -> Result<()> {
        self.entries.restore(&self.name, states, info, read_entry)
    }
}

impl<K: StateValue + Eq + Hash + Clone, V: StateValue + Clone> Clone for MapState<K, V> {
    fn clone(&self) -> Self {
        MapState { name: self.name.clone(), ttl: self.ttl, entries: self.entries.clone() }
    }
}
