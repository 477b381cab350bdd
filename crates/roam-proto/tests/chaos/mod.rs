//! Pieces the API property tests share: a clock that may step backwards, link facts with any
//! values, and a wire that delivers, drops, duplicates and reorders datagrams at random.

#![allow(dead_code)]

use std::time::Duration;

use proptest::prelude::*;
use roam_proto::linkinfo::{ChannelState, LinkInfo};
use roam_proto::Time;

/// A probability as a careless host might report it: NaN, infinite, out of [0, 1], or
/// plausible.
pub fn any_probability() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        -1.0..2.0f64,
        0.0..0.1f64
    ]
}

/// A clock step in µs: mostly forwards (up to `max_forward_us`), sometimes up to 50 ms back.
pub fn clock_step(max_forward_us: i64) -> impl Strategy<Value = i64> {
    prop_oneof![9 => 0..max_forward_us, 1 => -50_000i64..0]
}

/// `now` moved by `step_us` (saturating at zero).
pub fn step(now: Time, step_us: i64) -> Time {
    if step_us >= 0 {
        now + Duration::from_micros(step_us.unsigned_abs())
    } else {
        Time::from_nanos(now.as_nanos().saturating_sub(step_us.unsigned_abs() * 1000))
    }
}

/// What the wire does next with one of the datagrams in flight (chosen modulo their number).
#[derive(Debug, Clone, Copy)]
pub enum WireOp {
    Deliver(usize),
    Drop(usize),
    Duplicate(usize),
}

/// Mostly deliveries (in any order), some drops and duplicates.
pub fn wire_op() -> impl Strategy<Value = WireOp> {
    prop_oneof![
        12 => any::<usize>().prop_map(WireOp::Deliver),
        2 => any::<usize>().prop_map(WireOp::Drop),
        1 => any::<usize>().prop_map(WireOp::Duplicate),
    ]
}

/// Applies `op` to the datagrams in flight; returns the one to deliver, if any.
pub fn apply<T: Clone>(wire: &mut Vec<T>, op: WireOp) -> Option<T> {
    if wire.is_empty() {
        return None;
    }
    match op {
        WireOp::Deliver(i) => Some(wire.remove(i % wire.len())),
        WireOp::Drop(i) => {
            wire.remove(i % wire.len());
            None
        }
        WireOp::Duplicate(i) => {
            let copy = wire[i % wire.len()].clone();
            wire.push(copy);
            None
        }
    }
}

/// Link facts with whatever values the host supplied.
#[derive(Debug, Clone, Copy)]
pub struct AnyLink {
    pub loss: f64,
    pub per: f64,
    pub bandwidth_bps: u64,
    pub delay_us: u64,
    pub wireless: bool,
    pub up: bool,
    pub handoffs: u32,
}

pub fn any_link() -> impl Strategy<Value = AnyLink> {
    (
        any_probability(),
        any_probability(),
        any::<u64>(),
        0u64..10_000_000,
        any::<bool>(),
        any::<bool>(),
        0u32..4,
    )
        .prop_map(
            |(loss, per, bandwidth_bps, delay_us, wireless, up, handoffs)| AnyLink {
                loss,
                per,
                bandwidth_bps,
                delay_us,
                wireless,
                up,
                handoffs,
            },
        )
}

impl AnyLink {
    pub fn info(self) -> LinkInfo {
        LinkInfo {
            wireless: self.wireless,
            loss_prob: self.loss,
            per: self.per,
            one_way_delay: Duration::from_micros(self.delay_us),
            bandwidth_bps: self.bandwidth_bps,
            channel: if self.up {
                ChannelState::Good
            } else {
                ChannelState::Bad
            },
            up: self.up,
            handoffs: self.handoffs,
        }
    }
}
