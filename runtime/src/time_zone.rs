//! The session time zone (`table.local-time-zone`): how an instant (a TIMESTAMP_LTZ, epoch
//! milliseconds) reads as a local date and time (a TIMESTAMP) and back, daylight saving time
//! included, as Java's `java.time` does it for Flink.
//!
//! Local times are "local epoch milliseconds": the milliseconds a TIMESTAMP of that wall-clock
//! time holds. Going back from a local time to an instant is not one-to-one where the clocks
//! change: a local time the clocks skipped (a gap) is read with the offset before the gap, and
//! one they passed twice (an overlap) as its earlier instant, as `LocalDateTime.atZone` reads
//! them.

use chrono::{Offset, TimeZone as _};

/// A time zone: UTC, a fixed offset, or a region of the time zone database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeZone {
    /// UTC: local times are instants.
    Utc,
    /// A fixed offset from UTC, in seconds (`GMT+08:00`).
    Fixed(i32),
    /// A region with its rules (`Asia/Shanghai`, `America/Los_Angeles`).
    Region(chrono_tz::Tz),
}

const DAY: i64 = 86_400_000;

impl TimeZone {
    /// The zone a Flink session names: a time zone database ID (`America/Los_Angeles`), `UTC`
    /// (or `Z`, `GMT`, `UTC0`-style aliases the database has), or a fixed offset written
    /// `GMT+08:00`, `GMT-3`, `GMT+0830`. `None` for anything else (`UTC+8`, `PST`, `bogus`),
    /// which Flink refuses too.
    pub fn parse(text: &str) -> Option<TimeZone> {
        let text = text.trim();
        const UTC_NAMES: [&str; 8] = ["UTC", "Z", "GMT", "Etc/UTC", "Etc/GMT", "Etc/Universal", "Etc/Zulu", "Etc/UCT"];
        if UTC_NAMES.iter().any(|name| name.eq_ignore_ascii_case(text)) {
            return Some(TimeZone::Utc);
        }
        if let Some(offset) = text.strip_prefix("GMT").filter(|o| o.starts_with(['+', '-'])) {
            return fixed_offset(offset).map(|s| if s == 0 { TimeZone::Utc } else { TimeZone::Fixed(s) });
        }
        // Region IDs only: the database's three-letter aliases (`PST`) are not IDs Flink takes.
        if !text.contains('/') && text != "UTC" {
            return None;
        }
        text.parse::<chrono_tz::Tz>().ok().map(TimeZone::Region)
    }

    /// The machine's own zone (Flink's `default`: the JVM's), UTC when it cannot be told.
    pub fn system() -> TimeZone {
        std::env::var("TZ")
            .ok()
            .and_then(|tz| TimeZone::parse(tz.trim_start_matches(':')))
            .or_else(|| iana_time_zone::get_timezone().ok().and_then(|name| TimeZone::parse(&name)))
            .unwrap_or(TimeZone::Utc)
    }

    /// Whether local times are the instants themselves.
    pub fn is_utc(self) -> bool {
        self == TimeZone::Utc
    }

    /// The zone's offset from UTC at instant `utc`, in milliseconds.
    pub fn offset_at(self, utc: i64) -> i64 {
        match self {
            TimeZone::Utc => 0,
            TimeZone::Fixed(seconds) => i64::from(seconds) * 1000,
            TimeZone::Region(tz) => match chrono::DateTime::from_timestamp_millis(utc) {
                Some(at) => i64::from(tz.offset_from_utc_datetime(&at.naive_utc()).fix().local_minus_utc()) * 1000,
                None => 0,
            },
        }
    }

    /// The local time of instant `utc`.
    pub fn to_local(self, utc: i64) -> i64 {
        utc + self.offset_at(utc)
    }

    /// The instant of local time `local`: in a gap, read with the offset before it; in an
    /// overlap, the earlier instant (`LocalDateTime.atZone`).
    pub fn to_utc(self, local: i64) -> i64 {
        self.instants(local).0
    }

    /// As [`TimeZone::to_utc`], but the later instant in an overlap
    /// (`withLaterOffsetAtOverlap`).
    pub fn to_utc_later(self, local: i64) -> i64 {
        self.instants(local).1
    }

    /// The earlier and the later instant of local time `local` (equal but in an overlap).
    fn instants(self, local: i64) -> (i64, i64) {
        if let TimeZone::Utc | TimeZone::Fixed(_) = self {
            let utc = local - self.offset_at(0);
            return (utc, utc);
        }
        // The offsets a day before and after bracket any one change of the clocks.
        let (before, after) = (self.offset_at(local - DAY), self.offset_at(local + DAY));
        let valid = |offset: i64| self.offset_at(local - offset) == offset;
        match (valid(before), valid(after)) {
            (true, true) => (local - before.max(after), local - before.min(after)),
            (true, false) => (local - before, local - before),
            (false, true) => (local - after, local - after),
            // A gap: with the offset before it.
            (false, false) => (local - before, local - before),
        }
    }
}

/// Seconds of `+08:00`, `-3`, `+0830`, `+8:30`.
fn fixed_offset(text: &str) -> Option<i32> {
    let (sign, digits) = text.split_at(1);
    let sign = if sign == "-" { -1 } else { 1 };
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() > 2 => digits.split_at(digits.len() - 2),
        None => (digits, "0"),
    };
    let all_digits = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(hours) || !all_digits(minutes) {
        return None;
    }
    let (hours, minutes): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
    (hours <= 18 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::days_from_civil;

    fn local(y: i64, mo: u32, d: u32, h: i64, mi: i64) -> i64 {
        days_from_civil(y, mo, d) * DAY + h * 3_600_000 + mi * 60_000
    }

    #[test]
    fn zones_parse_as_flink_takes_them() {
        assert_eq!(TimeZone::parse("UTC"), Some(TimeZone::Utc));
        assert_eq!(TimeZone::parse("Etc/UTC"), Some(TimeZone::Utc));
        assert_eq!(TimeZone::parse("GMT+08:00"), Some(TimeZone::Fixed(8 * 3600)));
        assert_eq!(TimeZone::parse("GMT-3"), Some(TimeZone::Fixed(-3 * 3600)));
        assert_eq!(TimeZone::parse("GMT+0530"), Some(TimeZone::Fixed(5 * 3600 + 1800)));
        assert!(matches!(TimeZone::parse("Asia/Shanghai"), Some(TimeZone::Region(_))));
        for refused in ["UTC+8", "PST", "bogus", "GMT+25:00", "Mars/Olympus"] {
            assert_eq!(TimeZone::parse(refused), None, "{refused}");
        }
    }

    #[test]
    fn fixed_offsets_shift_both_ways() {
        let shanghai = TimeZone::parse("Asia/Shanghai").unwrap();
        let utc = local(2024, 1, 1, 0, 0);
        assert_eq!(shanghai.to_local(utc), utc + 8 * 3_600_000);
        assert_eq!(shanghai.to_utc(utc + 8 * 3_600_000), utc);
        let fixed = TimeZone::Fixed(-3 * 3600);
        assert_eq!(fixed.to_utc(fixed.to_local(utc)), utc);
    }

    /// New York, 2024: clocks skip 02:00–03:00 on March 10 and pass 01:00–02:00 twice on
    /// November 3.
    #[test]
    fn gaps_and_overlaps_read_as_java_reads_them() {
        let new_york = TimeZone::parse("America/New_York").unwrap();
        let hour = 3_600_000;
        // In the gap: with the offset before it (EST, -5 h), so 02:30 is 07:30 UTC.
        let in_gap = local(2024, 3, 10, 2, 30);
        assert_eq!(new_york.to_utc(in_gap), in_gap + 5 * hour);
        assert_eq!(new_york.to_utc_later(in_gap), in_gap + 5 * hour);
        // After it: EDT, -4 h.
        let after = local(2024, 3, 10, 3, 0);
        assert_eq!(new_york.to_utc(after), after + 4 * hour);
        // In the overlap: the earlier instant (EDT).
        let twice = local(2024, 11, 3, 1, 30);
        assert_eq!(new_york.to_utc(twice), twice + 4 * hour);
        assert_eq!(new_york.to_utc_later(twice), twice + 5 * hour);
        assert_eq!(new_york.to_local(twice + 5 * hour), twice, "the second 01:30 (EST)");
        // Away from changes, the two are inverse.
        for t in (0..400).map(|d| local(2024, 1, 1, 0, 0) + d * DAY + 17 * 60_000) {
            assert_eq!(new_york.to_utc(new_york.to_local(t)), t);
            assert_eq!(new_york.to_utc_later(new_york.to_local(t)), t);
        }
    }
}
