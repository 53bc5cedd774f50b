//! The Nexmark event generator: which event an id is, its person, auction and bidder ids, its
//! event time, and its field values.
//!
//! Ids, event types and event times follow the Flink Nexmark generator (`GeneratorConfig`,
//! `NexmarkGenerator` and the `model/*Generator` classes of the `nexmark/nexmark` repository)
//! exactly: an event's type is `id % (person + auction + bid proportions)`, its person and
//! auction ids are functions of its id, and its time is `base + number × inter-event delay`.
//! Field values are drawn with the same calls in the same order, from a `java.util.Random`
//! seeded per event ([`event_seed`]). Flink's generator draws from one unseeded `Random` per
//! split instead, so two Flink runs never agree on names, prices or hot-bidder choices; weir's
//! stream is the same in every run, at every parallelism, and after a restore.

use std::sync::OnceLock;

use weir_runtime::java_random::JavaRandom;

/// The first person id, the first auction id and the first category, as Flink's.
pub(crate) const FIRST_PERSON_ID: i64 = 1000;
pub(crate) const FIRST_AUCTION_ID: i64 = 1000;
const FIRST_CATEGORY_ID: i64 = 10;
/// People bidding and selling are among the newest this many (plus a lead of ten).
const NUM_ACTIVE_PEOPLE: i64 = 1000;
/// Bids go to one of the newest this many auctions (plus a lead of ten).
const NUM_IN_FLIGHT_AUCTIONS: i64 = 100;
const PERSON_ID_LEAD: i64 = 10;
const AUCTION_ID_LEAD: i64 = 10;
const HOT_SELLER_RATIO: i64 = 100;
const HOT_AUCTION_RATIO: i64 = 100;
const HOT_BIDDER_RATIO: i64 = 100;
const NUM_CATEGORIES: i32 = 5;
const CHANNELS_NUMBER: i32 = 10_000;
const HOT_CHANNELS: [&str; 4] = ["Google", "Facebook", "Baidu", "Apple"];
const US_STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
const US_CITIES: [&str; 10] =
    ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"];
const FIRST_NAMES: [&str; 11] =
    ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"];
const LAST_NAMES: [&str; 9] = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"];

/// The seed of event `id`'s `java.util.Random`: the id mixed by SplitMix64's finalizer. (The
/// id itself will not do: Java's generator gives nearby seeds nearly the same first draws, so
/// every bid would go to a hot auction.)
pub(crate) fn event_seed(id: i64) -> i64 {
    let mut z = (id as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as i64
}

/// The options that shape the stream (Flink's `NexmarkConfiguration`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeneratorConfig {
    pub person_proportion: i64,
    pub auction_proportion: i64,
    pub bid_proportion: i64,
    pub avg_person_bytes: i32,
    pub avg_auction_bytes: i32,
    pub avg_bid_bytes: i32,
    pub hot_auction_ratio: i32,
    pub hot_bidders_ratio: i32,
    pub hot_sellers_ratio: i32,
    /// Event time of event number 0, in epoch milliseconds.
    pub base_time: i64,
    /// Microseconds of event time between two events of one split: `1e6 / first-event.rate ×
    /// generators`, so that the splits together advance at `first-event.rate`.
    pub inter_event_delay_us: f64,
}

/// Which event an id is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    Person,
    Auction,
    Bid,
}

impl GeneratorConfig {
    pub fn total_proportion(&self) -> i64 {
        self.person_proportion + self.auction_proportion + self.bid_proportion
    }

    /// The event time of the split's event `number` (Java: `base + (long) (n × delay) / 1000`).
    pub fn timestamp_for_event(&self, number: i64) -> i64 {
        self.base_time + ((number as f64 * self.inter_event_delay_us) as i64) / 1000
    }

    pub fn kind(&self, event_id: i64) -> EventKind {
        let rem = event_id % self.total_proportion();
        if rem < self.person_proportion {
            EventKind::Person
        } else if rem < self.person_proportion + self.auction_proportion {
            EventKind::Auction
        } else {
            EventKind::Bid
        }
    }

    /// The newest person id (less [`FIRST_PERSON_ID`]) at `event_id`: the event's own when it
    /// is a person.
    fn last_base0_person_id(&self, event_id: i64) -> i64 {
        let epoch = event_id / self.total_proportion();
        let offset = (event_id % self.total_proportion()).min(self.person_proportion - 1);
        epoch * self.person_proportion + offset
    }

    /// The newest auction id (less [`FIRST_AUCTION_ID`]) at `event_id`: the event's own when
    /// it is an auction.
    fn last_base0_auction_id(&self, event_id: i64) -> i64 {
        let mut epoch = event_id / self.total_proportion();
        let mut offset = event_id % self.total_proportion();
        if offset < self.person_proportion {
            epoch -= 1;
            offset = self.auction_proportion - 1;
        } else if offset >= self.person_proportion + self.auction_proportion {
            offset = self.auction_proportion - 1;
        } else {
            offset -= self.person_proportion;
        }
        epoch * self.auction_proportion + offset
    }

    /// One of the active people (or a few ahead of the newest).
    fn next_base0_person_id(&self, event_id: i64, random: &mut JavaRandom) -> i64 {
        let people = self.last_base0_person_id(event_id) + 1;
        let active = people.min(NUM_ACTIVE_PEOPLE);
        people - active + next_long(random, active + PERSON_ID_LEAD)
    }

    /// One of the auctions likely still open (or a few ahead of the newest).
    fn next_base0_auction_id(&self, event_id: i64, random: &mut JavaRandom) -> i64 {
        let max = self.last_base0_auction_id(event_id);
        let min = (max - NUM_IN_FLIGHT_AUCTIONS).max(0);
        min + next_long(random, max - min + 1 + AUCTION_ID_LEAD)
    }
}

/// A person's fields (the strings are appended to the caller's buffers by [`Fields`]).
pub(crate) struct Person {
    pub id: i64,
}

pub(crate) struct Auction {
    pub id: i64,
    pub initial_bid: i64,
    pub reserve: i64,
    pub expires: i64,
    pub seller: i64,
    pub category: i64,
}

pub(crate) struct Bid {
    pub auction: i64,
    pub bidder: i64,
    pub price: i64,
    /// Index into [`channels`]: hot channels first, then `channel-<n>`.
    pub channel: usize,
}

/// The string fields of one event, written into buffers reused from event to event.
#[derive(Debug, Default, Clone)]
pub(crate) struct Texts {
    pub name: String,
    pub email: String,
    pub credit_card: String,
    pub city: &'static str,
    pub state: &'static str,
    pub description: String,
}

/// A person, drawing as Flink's `PersonGenerator.nextPerson` draws.
pub(crate) fn next_person(
    config: &GeneratorConfig,
    event_id: i64,
    random: &mut JavaRandom,
    texts: &mut Texts,
    extra: &mut Vec<u8>,
) -> Person {
    let id = config.last_base0_person_id(event_id) + FIRST_PERSON_ID;
    texts.name.clear();
    texts.name.push_str(FIRST_NAMES[random.next_int_below(FIRST_NAMES.len() as i32) as usize]);
    texts.name.push(' ');
    texts.name.push_str(LAST_NAMES[random.next_int_below(LAST_NAMES.len() as i32) as usize]);
    texts.email.clear();
    push_string(random, 7, ' ', &mut texts.email);
    texts.email.push('@');
    push_string(random, 5, ' ', &mut texts.email);
    texts.email.push_str(".com");
    texts.credit_card.clear();
    for i in 0..4 {
        if i > 0 {
            texts.credit_card.push(' ');
        }
        let group = random.next_int_below(10_000);
        push_four_digits(group, &mut texts.credit_card);
    }
    texts.city = US_CITIES[random.next_int_below(US_CITIES.len() as i32) as usize];
    texts.state = US_STATES[random.next_int_below(US_STATES.len() as i32) as usize];
    let size =
        8 + texts.name.len() + texts.email.len() + texts.credit_card.len() + texts.city.len() + texts.state.len();
    push_extra(random, size as i32, config.avg_person_bytes, extra);
    Person { id }
}

/// An auction, drawing as Flink's `AuctionGenerator.nextAuction` draws; `number` is the
/// event's number within its split, `timestamp` its event time. The item name goes to
/// `texts.name`.
pub(crate) fn next_auction(
    config: &GeneratorConfig,
    number: i64,
    event_id: i64,
    timestamp: i64,
    random: &mut JavaRandom,
    texts: &mut Texts,
    extra: &mut Vec<u8>,
) -> Auction {
    let id = config.last_base0_auction_id(event_id) + FIRST_AUCTION_ID;
    let seller = if random.next_int_below(config.hot_sellers_ratio) > 0 {
        (config.last_base0_person_id(event_id) / HOT_SELLER_RATIO) * HOT_SELLER_RATIO
    } else {
        config.next_base0_person_id(event_id, random)
    } + FIRST_PERSON_ID;
    let category = FIRST_CATEGORY_ID + i64::from(random.next_int_below(NUM_CATEGORIES));
    let initial_bid = next_price(random);
    // The auction lasts on average until the auction `NUM_IN_FLIGHT_AUCTIONS` ahead is made.
    let events_for_auctions = (NUM_IN_FLIGHT_AUCTIONS * config.total_proportion()) / config.auction_proportion;
    let horizon = config.timestamp_for_event(number + events_for_auctions) - timestamp;
    let expires = timestamp + 1 + next_long(random, (horizon * 2).max(1));
    texts.name.clear();
    push_string(random, 20, ' ', &mut texts.name);
    texts.description.clear();
    push_string(random, 100, ' ', &mut texts.description);
    let reserve = initial_bid + next_price(random);
    let size = 8 + texts.name.len() + texts.description.len() + 40;
    push_extra(random, size as i32, config.avg_auction_bytes, extra);
    Auction { id, initial_bid, reserve, expires, seller, category }
}

/// A bid, drawing as Flink's `BidGenerator.nextBid` draws (its bidder id, as Flink's, carries
/// [`FIRST_PERSON_ID`] twice).
pub(crate) fn next_bid(config: &GeneratorConfig, event_id: i64, random: &mut JavaRandom, extra: &mut Vec<u8>) -> Bid {
    let auction = if random.next_int_below(config.hot_auction_ratio) > 0 {
        (config.last_base0_auction_id(event_id) / HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO
    } else {
        config.next_base0_auction_id(event_id, random)
    } + FIRST_AUCTION_ID;
    let bidder = if random.next_int_below(config.hot_bidders_ratio) > 0 {
        (config.last_base0_person_id(event_id) / HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1
    } else {
        config.next_base0_person_id(event_id, random)
    } + FIRST_PERSON_ID;
    let price = next_price(random);
    let channel = if random.next_int_below(2) > 0 {
        random.next_int_below(HOT_CHANNELS.len() as i32) as usize
    } else {
        HOT_CHANNELS.len() + random.next_int_below(CHANNELS_NUMBER) as usize
    };
    push_extra(random, 32, config.avg_bid_bytes, extra);
    Bid { auction, bidder: bidder + FIRST_PERSON_ID, price, channel }
}

/// The channels and their URLs: the four hot channels, then `channel-0` … `channel-9999`.
/// Flink draws each URL from an unseeded `Random` once per JVM; weir draws hot channel `i`'s
/// from `Random(-1 - i)` and channel `n`'s from `Random(n)`, so they are the same everywhere.
/// Nine channels in ten carry `&channel_id=<|Integer.reverse(n)|>`, as Flink's.
pub(crate) fn channels() -> &'static [(String, String)] {
    static CHANNELS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CHANNELS.get_or_init(|| {
        let hot = HOT_CHANNELS.iter().enumerate().map(|(i, name)| {
            let mut random = JavaRandom::new(-1 - i as i64);
            (name.to_string(), base_url(&mut random))
        });
        let numbered = (0..CHANNELS_NUMBER).map(|n| {
            let mut random = JavaRandom::new(i64::from(n));
            let mut url = base_url(&mut random);
            if random.next_int_below(10) > 0 {
                url.push_str("&channel_id=");
                url.push_str(&n.reverse_bits().unsigned_abs().to_string());
            }
            (format!("channel-{n}"), url)
        });
        hot.chain(numbered).collect()
    })
}

fn base_url(random: &mut JavaRandom) -> String {
    let mut url = String::from("https://www.nexmark.com/");
    for _ in 0..3 {
        push_string(random, 5, '_', &mut url);
        url.push('/');
    }
    url.push_str("item.htm?query=1");
    url
}

/// `LongGenerator.nextLong`: a long in `[0, n)`.
fn next_long(random: &mut JavaRandom, n: i64) -> i64 {
    if n < i64::from(i32::MAX) {
        i64::from(random.next_int_below(n as i32))
    } else {
        (random.next_long() % n).abs()
    }
}

/// `PriceGenerator.nextPrice`: log-uniform between 100 and 10⁸.
fn next_price(random: &mut JavaRandom) -> i64 {
    java_round(10f64.powf(random.next_double() * 6.0) * 100.0)
}

/// Java's `Math.round(double)`.
fn java_round(x: f64) -> i64 {
    (x + 0.5).floor() as i64
}

/// `StringsGenerator.nextString`: 3 to `max_length - 1` letters, about one in 13 `special`,
/// trimmed as Java's `String.trim` trims.
fn push_string(random: &mut JavaRandom, max_length: i32, special: char, out: &mut String) {
    let len = 3 + random.next_int_below(max_length - 3);
    let start = out.len();
    for _ in 0..len {
        if random.next_int_below(13) == 0 {
            out.push(special);
        } else {
            out.push((b'a' + random.next_int_below(26) as u8) as char);
        }
    }
    // Java's `trim`, in place: only the special character can be blank.
    let kept = out[start..].trim_end_matches(|c: char| c <= ' ').len();
    out.truncate(start + kept);
    let leading = out[start..].len() - out[start..].trim_start_matches(|c: char| c <= ' ').len();
    out.drain(start..start + leading);
}

/// `StringsGenerator.nextExtra`: letters padding a record of `current` bytes to `average` on
/// average (± 20 %), appended to `out`.
fn push_extra(random: &mut JavaRandom, current: i32, average: i32, out: &mut Vec<u8>) {
    if current > average {
        return;
    }
    let wanted = average - current;
    let delta = java_round(f64::from(wanted) * 0.2) as i32;
    let size = wanted - delta + if delta == 0 { 0 } else { random.next_int_below(2 * delta) };
    push_exact_string(random, size, out);
}

/// The two letters `StringsGenerator.nextExactString` makes of a remainder `r` of a draw by
/// 676 (`-675..=675`), at index `r + 675`: `'a' + r % 26`, then `'a' + (r / 26) % 26`.
const LETTER_PAIRS: [[u8; 2]; 1351] = {
    let mut pairs = [[0u8; 2]; 1351];
    let mut i = 0;
    while i < 1351 {
        let r = i as i32 - 675;
        pairs[i] = [(b'a' as i32 + r % 26) as u8, (b'a' as i32 + (r / 26) % 26) as u8];
        i += 1;
    }
    pairs
};

/// `StringsGenerator.nextExactString`: six characters from each `nextInt()`, `'a' + rnd % 26`
/// then `rnd /= 26`, with Java's signed remainder (so a negative draw gives letters below `a`,
/// as in Flink). Truncating divisions compose, so characters `2k` and `2k + 1` of a draw are
/// the pair of `(rnd / 676^k) % 676` ([`LETTER_PAIRS`]): three lookups per draw.
/// Appended to `out` ('a' ± 25 is ASCII), drawing from a copy of `random` that stays in a
/// register, put back at the end.
fn push_exact_string(random: &mut JavaRandom, length: i32, out: &mut Vec<u8>) {
    let pair = |q: i32| LETTER_PAIRS[(q % 676 + 675) as usize];
    let letters = |rnd: i32| {
        let ([a, b], [c, d], [e, f]) = (pair(rnd), pair(rnd / 676), pair(rnd / 456_976));
        [a, b, c, d, e, f]
    };
    let start = out.len();
    out.resize(start + length.max(0) as usize, 0);
    let mut draws = *random;
    let mut sixes = out[start..].chunks_exact_mut(6);
    for six in &mut sixes {
        six.copy_from_slice(&letters(draws.next_int()));
    }
    let rest = sixes.into_remainder();
    if !rest.is_empty() {
        rest.copy_from_slice(&letters(draws.next_int())[..rest.len()]);
    }
    *random = draws;
}

fn push_four_digits(n: i32, out: &mut String) {
    for divisor in [1000, 100, 10, 1] {
        out.push((b'0' + (n / divisor % 10) as u8) as char);
    }
}
