use super::answers::same_token;
use super::endpoint::new_token;
use super::requests::SETTLED_CALLS_KEPT;
use super::*;

#[test]
fn a_requester_gone_at_its_timeout_timed_out_and_one_gone_before_went_away() {
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    for (waited, timeout, timed_out) in [
        (s(60), s(60), true),
        (s(61), s(60), true),
        // It counted from before it connected.
        (ms(59_600), s(60), true),
        (s(59), s(60), false),
        (s(1), s(60), false),
        (ms(800), s(1), true),
        (ms(400), s(1), false),
    ] {
        let why = gone_why(Some((waited, timeout)));
        assert_eq!(
            why.starts_with("timed out: nobody answered within"),
            timed_out,
            "{waited:?} of {timeout:?}: {why}"
        );
        assert_eq!(why.contains("went away"), !timed_out, "{why}");
    }
}

#[test]
fn settled_call_ids_are_kept_up_to_the_bound_oldest_first_out() {
    let mut recent = RecentCalls::default();
    recent.insert("first");
    recent.insert("first");
    for n in 1..SETTLED_CALLS_KEPT {
        recent.insert(&format!("c{n}"));
    }
    assert!(recent.contains("first") && recent.contains("c1"));
    assert_eq!(recent.order.len(), SETTLED_CALLS_KEPT);
    recent.insert("one more");
    assert!(!recent.contains("first"), "the oldest goes first");
    assert!(recent.contains("c1") && recent.contains("one more"));
    assert_eq!(recent.set.len(), SETTLED_CALLS_KEPT);
}

#[test]
fn tokens_compare_whole() {
    assert!(same_token(b"abcd", b"abcd"));
    assert!(!same_token(b"abcd", b"abce"));
    assert!(!same_token(b"abc", b"abcd"));
    assert!(!same_token(b"", b"a"));
}

#[test]
fn a_token_is_64_hex_digits_and_fresh() {
    let a = new_token().unwrap();
    let b = new_token().unwrap();
    assert_eq!(a.len(), 64);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a, b);
}
