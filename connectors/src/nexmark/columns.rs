//! The Nexmark table's columns for a chunk of events: `event_type` and the three ROW columns,
//! each a struct array NULL where the event is of another kind, as Flink's
//! `RowDataEventDeserializer` leaves them.
//!
//! An event is added in two steps: `begin_*` appends the event's kind and returns the buffer its
//! `extra` text is generated into (the longest text, written in place rather than copied), and
//! `end_*` appends the other fields.

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder};
use arrow_array::{ArrayRef, StringArray, StructArray};
use arrow_buffer::{Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::Fields;

use super::generator::{Auction, Bid, Person, Texts};

/// Builds the columns of one chunk, an event at a time.
pub(crate) struct EventColumns {
    event_type: Int32Builder,
    person: PersonColumns,
    auction: AuctionColumns,
    bid: BidColumns,
}

struct PersonColumns {
    valid: Vec<bool>,
    /// NULL rows not yet appended to the children (appended as one run).
    gap: usize,
    id: Int64Builder,
    name: StringBuilder,
    email: StringBuilder,
    credit_card: StringBuilder,
    city: StringBuilder,
    state: StringBuilder,
    date_time: TimestampMicrosecondBuilder,
    extra: TextColumn,
}

struct AuctionColumns {
    valid: Vec<bool>,
    /// NULL rows not yet appended to the children (appended as one run).
    gap: usize,
    id: Int64Builder,
    item_name: StringBuilder,
    description: StringBuilder,
    initial_bid: Int64Builder,
    reserve: Int64Builder,
    date_time: TimestampMicrosecondBuilder,
    expires: TimestampMicrosecondBuilder,
    seller: Int64Builder,
    category: Int64Builder,
    extra: TextColumn,
}

struct BidColumns {
    valid: Vec<bool>,
    /// NULL rows not yet appended to the children (appended as one run).
    gap: usize,
    auction: Int64Builder,
    bidder: Int64Builder,
    price: Int64Builder,
    channel: StringBuilder,
    url: StringBuilder,
    date_time: TimestampMicrosecondBuilder,
    extra: TextColumn,
}

fn micros(millis: i64) -> i64 {
    millis * 1000
}

impl EventColumns {
    /// Builders for `rows` events.
    pub fn with_capacity(rows: usize) -> Self {
        let longs = || Int64Builder::with_capacity(rows);
        let strings = |bytes: usize| StringBuilder::with_capacity(rows, rows * bytes);
        let texts = |bytes: usize| TextColumn::with_capacity(rows, rows * bytes);
        let times = || TimestampMicrosecondBuilder::with_capacity(rows);
        EventColumns {
            event_type: Int32Builder::with_capacity(rows),
            person: PersonColumns {
                valid: Vec::with_capacity(rows),
                gap: 0,
                id: longs(),
                name: strings(1),
                email: strings(1),
                credit_card: strings(1),
                city: strings(1),
                state: strings(1),
                date_time: times(),
                extra: texts(4),
            },
            auction: AuctionColumns {
                valid: Vec::with_capacity(rows),
                gap: 0,
                id: longs(),
                item_name: strings(1),
                description: strings(4),
                initial_bid: longs(),
                reserve: longs(),
                date_time: times(),
                expires: times(),
                seller: longs(),
                category: longs(),
                extra: texts(16),
            },
            bid: BidColumns {
                valid: Vec::with_capacity(rows),
                gap: 0,
                auction: longs(),
                bidder: longs(),
                price: longs(),
                channel: strings(10),
                url: strings(64),
                date_time: times(),
                extra: texts(72),
            },
        }
    }

    /// Starts a person: the buffer its `extra` is written into, then [`end_person`](Self::end_person).
    pub fn begin_person(&mut self) -> &mut Vec<u8> {
        self.event_type.append_value(0);
        self.auction.push_null();
        self.bid.push_null();
        let p = &mut self.person;
        p.flush();
        p.valid.push(true);
        &mut p.extra.bytes
    }

    /// The person's other fields, after its `extra`.
    pub fn end_person(&mut self, person: &Person, timestamp: i64, texts: &Texts) {
        let p = &mut self.person;
        p.id.append_value(person.id);
        p.name.append_value(&texts.name);
        p.email.append_value(&texts.email);
        p.credit_card.append_value(&texts.credit_card);
        p.city.append_value(texts.city);
        p.state.append_value(texts.state);
        p.date_time.append_value(micros(timestamp));
        p.extra.end_value();
    }

    /// Starts an auction: the buffer its `extra` is written into, then [`end_auction`](Self::end_auction).
    pub fn begin_auction(&mut self) -> &mut Vec<u8> {
        self.event_type.append_value(1);
        self.person.push_null();
        self.bid.push_null();
        let a = &mut self.auction;
        a.flush();
        a.valid.push(true);
        &mut a.extra.bytes
    }

    /// The auction's other fields, after its `extra`.
    pub fn end_auction(&mut self, auction: &Auction, timestamp: i64, texts: &Texts) {
        let a = &mut self.auction;
        a.id.append_value(auction.id);
        a.item_name.append_value(&texts.name);
        a.description.append_value(&texts.description);
        a.initial_bid.append_value(auction.initial_bid);
        a.reserve.append_value(auction.reserve);
        a.date_time.append_value(micros(timestamp));
        a.expires.append_value(micros(auction.expires));
        a.seller.append_value(auction.seller);
        a.category.append_value(auction.category);
        a.extra.end_value();
    }

    /// Starts a bid: the buffer its `extra` is written into, then [`end_bid`](Self::end_bid).
    pub fn begin_bid(&mut self) -> &mut Vec<u8> {
        self.event_type.append_value(2);
        self.person.push_null();
        self.auction.push_null();
        let b = &mut self.bid;
        b.flush();
        b.valid.push(true);
        &mut b.extra.bytes
    }

    /// The bid's other fields, after its `extra`.
    pub fn end_bid(&mut self, bid: &Bid, timestamp: i64, channel: &(String, String)) {
        let b = &mut self.bid;
        b.auction.append_value(bid.auction);
        b.bidder.append_value(bid.bidder);
        b.price.append_value(bid.price);
        b.channel.append_value(&channel.0);
        b.url.append_value(&channel.1);
        b.date_time.append_value(micros(timestamp));
        b.extra.end_value();
    }

    /// The four columns, the ROW columns with `fields` (the declared ROW types' Arrow fields).
    pub fn finish(self, fields: &[Fields; 3]) -> Vec<ArrayRef> {
        let [person_fields, auction_fields, bid_fields] = fields;
        let EventColumns { mut event_type, person: mut p, auction: mut a, bid: mut b } = self;
        p.flush();
        a.flush();
        b.flush();
        let person = struct_array(
            person_fields,
            vec![
                Arc::new(p.id.finish()),
                Arc::new(p.name.finish()),
                Arc::new(p.email.finish()),
                Arc::new(p.credit_card.finish()),
                Arc::new(p.city.finish()),
                Arc::new(p.state.finish()),
                Arc::new(p.date_time.finish()),
                p.extra.finish(),
            ],
            &p.valid,
        );
        let auction = struct_array(
            auction_fields,
            vec![
                Arc::new(a.id.finish()),
                Arc::new(a.item_name.finish()),
                Arc::new(a.description.finish()),
                Arc::new(a.initial_bid.finish()),
                Arc::new(a.reserve.finish()),
                Arc::new(a.date_time.finish()),
                Arc::new(a.expires.finish()),
                Arc::new(a.seller.finish()),
                Arc::new(a.category.finish()),
                a.extra.finish(),
            ],
            &a.valid,
        );
        let bid = struct_array(
            bid_fields,
            vec![
                Arc::new(b.auction.finish()),
                Arc::new(b.bidder.finish()),
                Arc::new(b.price.finish()),
                Arc::new(b.channel.finish()),
                Arc::new(b.url.finish()),
                Arc::new(b.date_time.finish()),
                b.extra.finish(),
            ],
            &b.valid,
        );
        vec![Arc::new(event_type.finish()), person, auction, bid]
    }
}

impl PersonColumns {
    fn push_null(&mut self) {
        self.valid.push(false);
        self.gap += 1;
    }

    /// Appends the pending NULL rows to every child.
    fn flush(&mut self) {
        let n = std::mem::take(&mut self.gap);
        if n == 0 {
            return;
        }
        self.id.append_nulls(n);
        self.name.append_nulls(n);
        self.email.append_nulls(n);
        self.credit_card.append_nulls(n);
        self.city.append_nulls(n);
        self.state.append_nulls(n);
        self.date_time.append_nulls(n);
        self.extra.append_nulls(n);
    }
}

impl AuctionColumns {
    fn push_null(&mut self) {
        self.valid.push(false);
        self.gap += 1;
    }

    /// Appends the pending NULL rows to every child.
    fn flush(&mut self) {
        let n = std::mem::take(&mut self.gap);
        if n == 0 {
            return;
        }
        self.id.append_nulls(n);
        self.item_name.append_nulls(n);
        self.description.append_nulls(n);
        self.initial_bid.append_nulls(n);
        self.reserve.append_nulls(n);
        self.date_time.append_nulls(n);
        self.expires.append_nulls(n);
        self.seller.append_nulls(n);
        self.category.append_nulls(n);
        self.extra.append_nulls(n);
    }
}

impl BidColumns {
    fn push_null(&mut self) {
        self.valid.push(false);
        self.gap += 1;
    }

    /// Appends the pending NULL rows to every child.
    fn flush(&mut self) {
        let n = std::mem::take(&mut self.gap);
        if n == 0 {
            return;
        }
        self.auction.append_nulls(n);
        self.bidder.append_nulls(n);
        self.price.append_nulls(n);
        self.channel.append_nulls(n);
        self.url.append_nulls(n);
        self.date_time.append_nulls(n);
        self.extra.append_nulls(n);
    }
}

/// A string column whose values' bytes are written into `bytes` in place and closed with
/// [`end_value`](Self::end_value). Its text is checked to be UTF-8 once, when the column is
/// finished.
struct TextColumn {
    offsets: Vec<i32>,
    bytes: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl TextColumn {
    fn with_capacity(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        TextColumn { offsets, bytes: Vec::with_capacity(bytes), nulls: NullBufferBuilder::new(rows) }
    }

    /// Ends the value whose bytes were written into `bytes` since the last one ended.
    fn end_value(&mut self) {
        self.offsets.push(self.bytes.len() as i32);
        self.nulls.append_non_null();
    }

    fn append_nulls(&mut self, n: usize) {
        let end = self.bytes.len() as i32;
        self.offsets.extend(std::iter::repeat_n(end, n));
        self.nulls.append_n_nulls(n);
    }

    fn finish(mut self) -> ArrayRef {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(self.offsets));
        let text = StringArray::try_new(offsets, Buffer::from_vec(self.bytes), self.nulls.finish());
        Arc::new(text.unwrap_or_else(|e| unreachable!("the generator writes ASCII text: {e}")))
    }
}

/// The struct column; the fields were checked against the children's types when the table
/// was resolved, so building it cannot fail.
fn struct_array(fields: &Fields, children: Vec<ArrayRef>, valid: &[bool]) -> ArrayRef {
    let nulls = NullBuffer::from(valid.to_vec());
    Arc::new(StructArray::new(fields.clone(), children, Some(nulls)))
}
