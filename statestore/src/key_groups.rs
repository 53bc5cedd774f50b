//! Sets of key groups, kept as sorted, disjoint, non-adjacent ranges: the key groups of a
//! layer whose entries have been merged into the base (and are dead in the layer).

use std::ops::RangeInclusive;

/// A set of key groups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyGroupSet {
    /// Sorted, disjoint and non-adjacent.
    ranges: Vec<(u16, u16)>,
}

impl KeyGroupSet {
    /// The set's ranges, in order.
    pub fn ranges(&self) -> impl Iterator<Item = RangeInclusive<u16>> + '_ {
        self.ranges.iter().map(|&(a, b)| a..=b)
    }

    /// Whether it holds no key group.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Adds the key groups of `range`.
    pub fn insert(&mut self, range: RangeInclusive<u16>) {
        let (mut a, mut b) = (*range.start(), *range.end());
        if a > b {
            return;
        }
        // The ranges that overlap or touch `a..=b` join it.
        let first = self.ranges.partition_point(|&(_, end)| u32::from(end) + 1 < u32::from(a));
        let mut last = first;
        while last < self.ranges.len() && u32::from(self.ranges[last].0) <= u32::from(b) + 1 {
            a = a.min(self.ranges[last].0);
            b = b.max(self.ranges[last].1);
            last += 1;
        }
        self.ranges.splice(first..last, [(a, b)]);
    }

    /// The range of the set holding `group`.
    pub fn range_of(&self, group: u16) -> Option<RangeInclusive<u16>> {
        let i = self.ranges.partition_point(|&(_, end)| end < group);
        self.ranges.get(i).filter(|&&(a, _)| a <= group).map(|&(a, b)| a..=b)
    }

    /// Whether it holds `group`.
    pub fn contains(&self, group: u16) -> bool {
        self.range_of(group).is_some()
    }

    /// Whether it holds every key group of `range`.
    pub fn covers(&self, range: RangeInclusive<u16>) -> bool {
        self.range_of(*range.start()).is_some_and(|held| held.end() >= range.end())
    }

    /// Appends the set to `out`: its range count, then each range's ends (little-endian).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.ranges.len() as u32).to_le_bytes());
        for &(a, b) in &self.ranges {
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        }
    }

    /// A set of the ranges `pairs`, which must be sorted, disjoint and non-adjacent.
    pub(crate) fn from_sorted(pairs: Vec<(u16, u16)>) -> Option<KeyGroupSet> {
        let ordered =
            pairs.iter().all(|(a, b)| a <= b) && pairs.windows(2).all(|w| u32::from(w[0].1) + 1 < u32::from(w[1].0));
        ordered.then_some(KeyGroupSet { ranges: pairs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_join_when_they_overlap_or_touch() {
        let mut set = KeyGroupSet::default();
        set.insert(10..=12);
        set.insert(20..=20);
        set.insert(14..=15);
        assert!(set.contains(11) && !set.contains(13) && set.covers(14..=15) && !set.covers(12..=14));
        set.insert(13..=13);
        set.insert(16..=19);
        assert_eq!(set.ranges().collect::<Vec<_>>(), [10..=20]);
        set.insert(0..=0);
        set.insert(u16::MAX..=u16::MAX);
        assert_eq!(set.ranges().collect::<Vec<_>>(), [0..=0, 10..=20, u16::MAX..=u16::MAX]);
        assert_eq!(set.range_of(15), Some(10..=20));
        assert!(KeyGroupSet::from_sorted(vec![(1, 2), (3, 4)]).is_none());
        assert!(KeyGroupSet::from_sorted(vec![(1, 2), (4, 4)]).is_some());
    }
}
