//! Window controllers: pure congestion-control laws with no simulator types and no I/O.
//!
//! The trait is shaped like Linux's `tcp_congestion_ops` and quinn's `Controller`: the
//! transport reports ACKs, loss events and timeouts; the controller owns the congestion window
//! and the slow-start threshold. Loss recovery (which packets to resend) stays in the
//! transport, so the same controller can drive a real transport.
//!
//! One file per family; each has a validated `Params` (defaults and the paper they come from),
//! its `AlgorithmInfo` and its `from_params`. The families (14 with the rate-based schemes of
//! `transport::rate`):
//! - `aimd`: TCP, GAIMD, and the TD/TO-curve α helpers (yang2000);
//! - `binomial`: Binomial(k, l), IIAD, SQRT (Bansal–Balakrishnan; sastry2005, tsao2007);
//! - `history`: jin2001's history spectrum — SIMD, AIAD/H and the other Table 1 members;
//! - `cyrf`: sastry2005's LOG and SIGMOID, and the CYRF / 1-CYRF / TCP-friendly classifier;
//! - `illinois`: TCP-Illinois (liu2008), paper and Linux presets;
//! - `hstcp`: HighSpeed TCP (RFC 3649);
//! - `scalable`: Scalable TCP (Kelly 2003);
//! - `bic`: BIC-TCP (Xu, Harfoush, Rhee 2004) as Linux's tcp_bic;
//! - `cubic`: CUBIC (RFC 9438);
//! - `htcp`: H-TCP (Leith & Shorten 2004) as Linux's tcp_htcp;
//! - `compound`: Compound TCP (Tan et al. 2006);
//! - `vegas`: TCP Vegas (Brakmo & Peterson 1995) as Linux's tcp_vegas, and the per-RTT rounds
//!   Vegas and Compound share;
//! - `formula`: user formulas (increase/decrease or CYRF f/g) and their expression language.
//!
//! The names users write (`tcp`, `gaimd`, `simd`, ...) and each name's constructor are
//! registered in `crate::registry`; adding a law is its file here plus one registry line (and
//! one line of `builtin_laws!` below, so that the sender holds it by value and calls it
//! statically).
//!
//! Conventions shared by every family: β is the amount removed; per-RTT increases are applied
//! per ACK as `increment/W`; slow start adds one packet per ACK and the loss event that ends it
//! halves the window (as ns-2 does); a decrease never leaves less than `MIN_SSTHRESH`; a
//! timeout sets ssthresh = W/2 and the window to one packet. Transcendental functions come
//! from `libm` so results are bit-identical across machines.

/// The `Controller` methods of a family that keeps its window and threshold in a
/// `Window` field named `w`: `window` and `ssthresh`, and with `standard_timeout` also the
/// usual timeout rule (threshold to half the window, window to one packet).
macro_rules! window_in_field {
    () => {
        fn window(&self) -> f64 {
            self.w.cwnd
        }

        fn ssthresh(&self) -> f64 {
            self.w.ssthresh
        }

        fn truncate_reduction(&mut self) {
            self.w.truncate();
        }

        fn ns2_window_rules(&mut self) {
            self.w.ns2 = true;
        }
    };
    (standard_timeout) => {
        fn on_timeout(&mut self, to: &$crate::cc::Timeout) {
            self.w.timeout(to.window);
        }

        window_in_field!();
    };
}

/// `Controller::min_cwnd` as Linux 2.6.22's `tcp_reno_min_cwnd`: half the slow-start
/// threshold (integer packets, at least one).
macro_rules! reno_min_cwnd {
    () => {
        fn min_cwnd(&self) -> f64 {
            ((self.ssthresh() / 2.0).floor()).max(1.0)
        }
    };
}

pub mod aimd;
pub mod bic;
pub mod binomial;
pub mod compound;
pub mod cubic;
pub mod cyrf;
pub mod formula;
pub mod history;
pub mod hstcp;
pub mod htcp;
pub mod illinois;
pub mod params;
pub mod scalable;
pub mod vegas;

pub use params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, Taxonomy};

/// What the transport reports on an ACK that acknowledges new data outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    /// Seconds since the start of the connection's clock.
    pub now: f64,
    /// Packets newly acknowledged by this ACK.
    pub acked: u32,
    /// RTT sample carried by this ACK (timestamp echo), seconds.
    pub rtt: Option<f64>,
    /// Smallest RTT sample seen so far (seconds; infinity before the first).
    pub min_rtt: f64,
    /// Packets in flight after this ACK.
    pub in_flight: u32,
}

/// A loss event: losses detected within one RTT of the first, or an ECN echo.
#[derive(Clone, Copy, Debug)]
pub struct LossEvent {
    pub now: f64,
    /// The window in use when the event was detected (min of cwnd and the receiver window).
    pub window: f64,
    pub in_flight: u32,
    /// Signalled by an ECN echo rather than a lost packet.
    pub ecn: bool,
}

/// A retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct Timeout {
    pub now: f64,
    pub window: f64,
    pub in_flight: u32,
}

/// A window-based congestion controller.
pub trait Controller: Send + std::any::Any {
    /// New data acknowledged (outside loss recovery): grow the window.
    fn on_ack(&mut self, ack: &Ack);
    /// Every RTT sample, including those carried by duplicate ACKs (delay-based laws use it).
    fn on_rtt_sample(&mut self, _now: f64, _rtt: f64) {}
    /// A loss event: decrease the window once.
    fn on_loss_event(&mut self, ev: &LossEvent);
    /// A retransmission timeout.
    fn on_timeout(&mut self, to: &Timeout);
    /// Congestion window, packets.
    fn window(&self) -> f64;
    /// Slow-start threshold, packets.
    fn ssthresh(&self) -> f64;
    /// Linux 2.6.22's `min_cwnd` hook (`tcp_congestion_ops`): the window Linux-style loss
    /// recovery (`recovery = "linux"`, rate halving) lets the flight fall to after a loss
    /// event, before it returns to `window()` when recovery ends. Default: `window()` itself
    /// (Linux's `snd_ssthresh` for modules without the hook: BIC, CUBIC, H-TCP). The families
    /// whose Linux modules used `tcp_reno_min_cwnd` (Reno, HighSpeed, Scalable, Illinois,
    /// Compound, Vegas) return half the threshold.
    fn min_cwnd(&self) -> f64 {
        self.window()
    }
    /// A fault that must stop the run (e.g. a user formula evaluated to NaN or infinity),
    /// described with the simulated time it happened. The controller keeps its last good
    /// window and never panics; the engine checks this after calling the controller and
    /// stops the run with the message, prefixed by the flow it belongs to.
    fn error(&self) -> Option<String> {
        None
    }
    /// Right after a decrease (loss event or timeout) when the transport emulates ns-2 before
    /// 2006 (`precisionReduce_ false`, the scenario's `tcp.precise_reduce = false`): truncate
    /// the window and threshold it left to whole packets. Default: nothing (a law that keeps
    /// its window elsewhere than in a [`Window`]).
    fn truncate_reduction(&mut self) {}
    /// Once, before the first ACK, when the transport runs ns-2's TCP agent rules (the
    /// scenario's `tcp.ns2_agent = true`): the law's [`Window`] reduces as ns-2's
    /// `slowdown()` does (see [`Window::ns2`]). Default: nothing (a law that keeps its window
    /// elsewhere than in a `Window`).
    fn ns2_window_rules(&mut self) {}
}

/// The built-in laws a [`Held`] keeps by value, in one list: each a `Law` variant and the
/// family's type. `builtin_laws!(m!(args))` calls `m!(args [Variant(Type), ...])`, so the enum,
/// its dispatch and `Held::new`'s unboxing are generated from this list and cannot disagree.
/// (A name users write is registered in `crate::registry`; a law missing here still runs,
/// boxed.)
macro_rules! builtin_laws {
    ($m:ident ! ($($pre:tt)*)) => {
        $m! {$($pre)* [
            Aimd(aimd::Aimd),
            Binomial(binomial::Binomial),
            History(history::History),
            Cyrf(cyrf::Cyrf),
            Illinois(illinois::Illinois),
            HsTcp(hstcp::HsTcp),
            Scalable(scalable::Scalable),
            Bic(bic::Bic),
            Cubic(cubic::Cubic),
            Htcp(htcp::Htcp),
            Compound(compound::Compound),
            Vegas(vegas::Vegas)
        ]}
    };
}

/// `held_dispatch!`'s match, one arm per built-in law and one for `Law::Dyn`.
macro_rules! held_match {
    ($law:expr, $c:ident, $call:expr, [$($v:ident($t:ty)),*]) => {
        match $law {
            $(Law::$v($c) => $call,)*
            Law::Dyn($c) => $call,
        }
    };
}

/// Calls `$call` on the law inside a [`Held`], whatever its variant.
macro_rules! held_dispatch {
    ($law:expr, $c:ident => $call:expr) => {
        builtin_laws!(held_match!($law, $c, $call,))
    };
}

/// Calls `$call`, which may change the window, on the law inside a [`Held`]; for a built-in
/// law the held copy of its window is then refreshed.
macro_rules! held_mutate {
    ($self:ident, $c:ident => $call:expr) => {
        if let Law::Dyn($c) = &mut $self.law {
            $call
        } else {
            held_dispatch!(&mut $self.law, $c => {
                $call;
                $self.win = $c.window();
            })
        }
    };
}

/// A window controller as the TCP sender holds it: the built-in laws by value, so the calls
/// made on every ACK are static (and inlined), any other controller (formula, Python) boxed.
/// A `Controller` itself; `Held::new` unboxes a built-in law and keeps anything else boxed.
pub struct Held {
    law: Law,
    /// A built-in law's `window()`, refreshed after every call that may change it (a built-in
    /// law's window is a function of its state, which only those calls change), since the
    /// sender asks for the window several times per ACK. Unused for `Law::Dyn`, which is asked
    /// every time.
    win: f64,
}

/// A built-in law (`builtin_laws!`) by value, or any other controller boxed.
macro_rules! law_enum {
    ([$($v:ident($t:ty)),*]) => {
        enum Law {
            $($v($t),)*
            Dyn(Box<dyn Controller>),
        }
    };
}
builtin_laws!(law_enum!());

impl Held {
    /// The controller `c`, unboxed if it is a built-in law.
    pub fn new(c: Box<dyn Controller>) -> Held {
        macro_rules! unbox {
            ([$($v:ident($t:ty)),*]) => {
                $(if (&*c as &dyn std::any::Any).is::<$t>() {
                    let any: Box<dyn std::any::Any> = c;
                    let law: $t = *any.downcast::<$t>().expect("the type was checked");
                    let win = law.window();
                    return Held { law: Law::$v(law), win };
                })*
            };
        }
        builtin_laws!(unbox!());
        Held { law: Law::Dyn(c), win: f64::NAN }
    }

    /// `on_ack` with the report built only for a law that reads it: standard TCP and GAIMD
    /// (AIMD) read nothing of it, so their ACK costs no report, no time conversion and no
    /// dispatch (their growth inlined into the sender's ACK path); the others as `on_ack`.
    #[inline(always)]
    pub fn on_ack_with(&mut self, ack: impl FnOnce() -> Ack) {
        if let Law::Aimd(c) = &mut self.law {
            c.grow_on_ack();
            self.win = c.window();
        } else {
            self.on_ack(&ack());
        }
    }

    /// `on_rtt_sample` with the time computed only for a law that reads samples: AIMD keeps
    /// the trait's default (a no-op; `aimd_ignores_rtt_samples` checks it), every other law
    /// is asked.
    #[inline(always)]
    pub fn on_rtt_sample_with(&mut self, now: impl FnOnce() -> f64, rtt: f64) {
        if !matches!(self.law, Law::Aimd(_)) {
            self.on_rtt_sample(now(), rtt);
        }
    }

    /// Whether the controller is boxed (not a built-in law).
    #[cfg(test)]
    pub(crate) fn is_dyn(&self) -> bool {
        matches!(self.law, Law::Dyn(_))
    }
}

impl Controller for Held {
    #[inline]
    fn on_ack(&mut self, ack: &Ack) {
        held_mutate!(self, c => c.on_ack(ack))
    }
    #[inline]
    fn on_rtt_sample(&mut self, now: f64, rtt: f64) {
        held_mutate!(self, c => c.on_rtt_sample(now, rtt))
    }
    #[inline]
    fn on_loss_event(&mut self, ev: &LossEvent) {
        held_mutate!(self, c => c.on_loss_event(ev))
    }
    #[inline]
    fn on_timeout(&mut self, to: &Timeout) {
        held_mutate!(self, c => c.on_timeout(to))
    }
    #[inline]
    fn window(&self) -> f64 {
        match &self.law {
            Law::Dyn(c) => c.window(),
            _ => self.win,
        }
    }
    #[inline]
    fn ssthresh(&self) -> f64 {
        held_dispatch!(&self.law, c => c.ssthresh())
    }
    #[inline]
    fn min_cwnd(&self) -> f64 {
        held_dispatch!(&self.law, c => c.min_cwnd())
    }
    #[inline]
    fn error(&self) -> Option<String> {
        held_dispatch!(&self.law, c => c.error())
    }
    fn truncate_reduction(&mut self) {
        held_mutate!(self, c => c.truncate_reduction())
    }
    fn ns2_window_rules(&mut self) {
        held_mutate!(self, c => c.ns2_window_rules())
    }
}

/// Window and threshold with the slow-start and timeout rules every family shares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Receiver window cap; the window never grows past it.
    pub cap: f64,
    /// ns-2's reductions (`TcpAgent::slowdown` in `tcp/tcp.cc`, whose `ssthresh_` is an
    /// integer): a decrease to `w` leaves the threshold `max(⌊w⌋, 2)` and the window
    /// `max(w, 1)` (so a window below 2 slow-starts on the next ACK), and a timeout leaves the
    /// threshold `max(⌊W/2⌋, 2)`. False (RFC 5681): both `max(w, 2)`, and `max(W/2, 2)`.
    pub ns2: bool,
}

/// Smallest window a decrease may leave (ns-2 and RFC 5681 use two packets).
pub const MIN_SSTHRESH: f64 = 2.0;

impl Window {
    pub fn new(initial: f64, cap: f64) -> Self {
        Window { cwnd: initial, ssthresh: f64::INFINITY, cap, ns2: false }
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Slow start: one packet per ACK (as ns-2 and the papers' per-ACK convention).
    #[inline]
    pub fn slow_start(&mut self) {
        self.grow(1.0);
    }

    /// Add `inc` packets, never past the cap.
    #[inline]
    pub fn grow(&mut self, inc: f64) {
        self.cwnd = (self.cwnd + inc).min(self.cap);
    }

    /// Set the window and threshold to `w` (at least MIN_SSTHRESH): the usual decrease; with
    /// [`Window::ns2`] the threshold is `max(⌊w⌋, 2)` and the window `max(w, 1)`.
    pub fn reduce_to(&mut self, w: f64) {
        if self.ns2 {
            self.ssthresh = w.floor().max(MIN_SSTHRESH);
            self.cwnd = w.max(1.0);
        } else {
            let w = w.max(MIN_SSTHRESH);
            self.ssthresh = w;
            self.cwnd = w;
        }
    }

    /// Timeout: threshold to half the window (whole packets with [`Window::ns2`]), window to
    /// one packet.
    pub fn timeout(&mut self, window: f64) {
        let half = window / 2.0;
        self.ssthresh = if self.ns2 { half.floor() } else { half }.max(MIN_SSTHRESH);
        self.cwnd = 1.0;
    }

    /// Whole packets (ns-2's integer reduction, see `Controller::truncate_reduction`).
    pub fn truncate(&mut self) {
        self.cwnd = self.cwnd.floor().max(1.0);
        if self.ssthresh.is_finite() {
            self.ssthresh = self.ssthresh.floor().max(MIN_SSTHRESH);
        }
    }
}

/// Synthetic ACK and loss sequences for the controllers' unit tests (no simulator).
#[cfg(test)]
pub(crate) mod testkit {
    use super::{Ack, Controller, LossEvent, Timeout};

    pub fn ack() -> Ack {
        ack_at(0.0, 0.1)
    }

    pub fn ack_at(now: f64, rtt: f64) -> Ack {
        Ack { now, acked: 1, rtt: Some(rtt), min_rtt: rtt, in_flight: 0 }
    }

    pub fn loss(w: f64) -> LossEvent {
        LossEvent { now: 0.0, window: w, in_flight: 0, ecn: false }
    }

    pub fn timeout(w: f64) -> Timeout {
        Timeout { now: 0.0, window: w, in_flight: 0 }
    }

    /// One RTT: one ACK per packet of the window at the start of the round. Returns the
    /// window's growth over the round.
    pub fn one_rtt(c: &mut dyn Controller) -> f64 {
        let w0 = c.window();
        let n = w0.round().max(1.0) as usize;
        for _ in 0..n {
            c.on_ack(&ack());
        }
        c.window() - w0
    }

    /// `n` RTTs in a row, each with as many ACKs as the window held at its start (the
    /// fractional parts carried over, so the ACK count tracks ∫W). Windows after each round.
    pub fn rtts(c: &mut dyn Controller, n: usize) -> Vec<f64> {
        let mut carry = 0.0;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let acks = c.window() + carry;
            let whole = acks.floor();
            carry = acks - whole;
            for _ in 0..whole as usize {
                c.on_ack(&ack());
            }
            out.push(c.window());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{loss, rtts};
    use super::*;

    /// A law the engine does not know (as a formula or Python controller is).
    struct Other(Window);

    impl Controller for Other {
        fn on_ack(&mut self, _ack: &Ack) {
            self.0.grow(1.0 / self.0.cwnd);
        }
        fn on_loss_event(&mut self, ev: &LossEvent) {
            self.0.reduce_to(ev.window / 2.0);
        }
        fn on_timeout(&mut self, to: &Timeout) {
            self.0.timeout(to.window);
        }
        fn window(&self) -> f64 {
            self.0.cwnd
        }
        fn ssthresh(&self) -> f64 {
            self.0.ssthresh
        }
    }

    #[test]
    fn held_unboxes_built_in_laws_and_behaves_like_the_box() {
        let make: [fn() -> Box<dyn Controller>; 3] = [
            || Box::new(aimd::Aimd::new(1.0, 0.5, 2.0, 1000.0)),
            || Box::new(binomial::Binomial::new(0.5, 0.5, 1.0, 0.5, 2.0, 1000.0)),
            || Box::new(Other(Window::new(2.0, 1000.0))),
        ];
        for (i, m) in make.iter().enumerate() {
            let mut held = Held::new(m());
            assert_eq!(held.is_dyn(), i == 2, "variant of controller {i}");
            let mut boxed = m();
            let trace = |c: &mut dyn Controller| {
                let mut w = rtts(c, 8);
                c.on_loss_event(&loss(c.window()));
                w.extend(rtts(c, 4));
                w.push(c.ssthresh());
                w
            };
            assert_eq!(trace(&mut held), trace(boxed.as_mut()), "controller {i}");
        }
    }

    /// ns-2's slowdown(): an integer threshold (at least 2) and a window of at least 1 after a
    /// decrease; a timeout's threshold in whole packets. RFC 5681's rules by default.
    #[test]
    fn ns2_window_rules_truncate_the_threshold_and_floor_the_window_at_one() {
        let mut rfc = Window::new(2.0, 1000.0);
        let mut ns2 = rfc;
        ns2.ns2 = true;
        rfc.reduce_to(5.6);
        ns2.reduce_to(5.6);
        assert_eq!((rfc.cwnd, rfc.ssthresh), (5.6, 5.6));
        assert_eq!((ns2.cwnd, ns2.ssthresh), (5.6, 5.0));
        assert!(!ns2.in_slow_start());
        // SQRT's cut from 3 packets: 3 − 0.67·√3 = 1.84
        rfc.reduce_to(1.84);
        ns2.reduce_to(1.84);
        assert_eq!((rfc.cwnd, rfc.ssthresh), (2.0, 2.0));
        assert_eq!((ns2.cwnd, ns2.ssthresh), (1.84, 2.0));
        assert!(ns2.in_slow_start(), "below the threshold: the next ACK slow-starts it");
        ns2.reduce_to(0.3);
        assert_eq!(ns2.cwnd, 1.0);
        rfc.timeout(12.5);
        ns2.timeout(12.5);
        assert_eq!((rfc.cwnd, rfc.ssthresh), (1.0, 6.25));
        assert_eq!((ns2.cwnd, ns2.ssthresh), (1.0, 6.0));
        ns2.timeout(3.0);
        assert_eq!(ns2.ssthresh, 2.0);
        // a controller keeping its window in a `Window` switches through the trait
        let mut c: Box<dyn Controller> = Box::new(aimd::Aimd::new(1.0, 0.5, 2.0, 1000.0));
        c.ns2_window_rules();
        c.on_loss_event(&loss(3.0));
        assert_eq!((c.window(), c.ssthresh()), (1.5, 2.0));
    }
}
