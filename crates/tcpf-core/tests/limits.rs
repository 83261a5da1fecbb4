//! Time arithmetic cannot overflow silently (issue 17, item 5).
use tcpf_core::sim::{secs, to_secs, TIME_MAX};

#[test]
fn secs_rounds_and_saturates() {
    assert_eq!(secs(0.0), 0);
    assert_eq!(secs(1.5e-9), 2);
    assert_eq!(secs(0.05), 50_000_000);
    assert_eq!(secs(1e7), 10_000_000_000_000_000);
    assert_eq!(to_secs(secs(123.456789)), 123.456789);
    // 1e12 s used to become u64::MAX ns, and `now + it` wrapped around to a time in the past.
    for huge in [4.7e9, 1e12, 1e300, f64::INFINITY] {
        assert_eq!(secs(huge), TIME_MAX, "{huge}");
        assert!(secs(1e7).checked_add(3 * secs(huge)).is_some());
    }
    assert_eq!(secs(-1.0), 0);
}
