//! What keyed state can hold: values that write themselves into a checkpoint and read back.

use crate::checkpoint::codec::{DecodeError, Decoder, Encoder};
use crate::value::Value;

/// A value keyed state holds, in weir's checkpoint encoding.
pub trait StateValue: Sized {
    /// Writes the value.
    fn encode(&self, out: &mut Encoder);
    /// Reads what [`StateValue::encode`] wrote.
    ///
    /// # Errors
    /// A damaged encoding.
    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError>;
}

impl StateValue for Value {
    fn encode(&self, out: &mut Encoder) {
        out.value(self);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        input.value()
    }
}

impl StateValue for Vec<Value> {
    fn encode(&self, out: &mut Encoder) {
        out.values(self);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        input.values()
    }
}

impl StateValue for Box<[Value]> {
    fn encode(&self, out: &mut Encoder) {
        out.values(self);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        input.values()
    }
}

/// Nothing to keep but that the key has state.
impl StateValue for () {
    fn encode(&self, _out: &mut Encoder) {}

    fn decode(_input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl StateValue for i64 {
    fn encode(&self, out: &mut Encoder) {
        out.i64(*self);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        input.i64()
    }
}

impl StateValue for u64 {
    fn encode(&self, out: &mut Encoder) {
        out.u64(*self);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        input.u64()
    }
}

impl<A: StateValue, B: StateValue> StateValue for (A, B) {
    fn encode(&self, out: &mut Encoder) {
        self.0.encode(out);
        self.1.encode(out);
    }

    fn decode(input: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok((A::decode(input)?, B::decode(input)?))
    }
}
