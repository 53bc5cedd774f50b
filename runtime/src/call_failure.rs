//! A failure found where an operator cannot return it: a user-defined aggregate whose
//! `get_value` fails while an output row is being built, say. It is recorded for the operator
//! call in progress on this thread, and that call then fails with it as if it had returned the
//! error (the job fails; what the call emitted is not forwarded), never a silent NULL.

use std::cell::RefCell;

thread_local! {
    static FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Fails the operator call in progress on this thread with `message` once it returns (the
/// first failure recorded wins).
pub fn fail_current_call(message: impl Into<String>) {
    FAILURE.with(|f| {
        f.borrow_mut().get_or_insert_with(|| message.into());
    });
}

/// Takes the failure recorded since the last take, if any.
pub(crate) fn take() -> Option<String> {
    FAILURE.with(|f| f.borrow_mut().take())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_failure_is_taken_once() {
        super::fail_current_call("first");
        super::fail_current_call("second");
        assert_eq!(super::take().as_deref(), Some("first"));
        assert_eq!(super::take(), None);
    }
}
