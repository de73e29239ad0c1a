//! Request rates per client address and per verified key (GCRA limiters from `governor`),
//! so one host or one identity cannot take the server's whole capacity. A refusal is a
//! JSON 429 with `Retry-After`. On a database several instances share (PostgreSQL) the
//! same GCRA runs in the database instead, so the limits hold for the instances together.

use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::config::{Rate, RateLimits};
use super::error::ApiError;
use super::store::{RateWindow, Store};

pub use crate::http_server::{AddressKey, ClientAddr};

/// The server's limiters: in this process, or (on a database several instances share) in
/// the database. An absent rate does not limit.
pub enum RateLimiters {
    InMemory {
        per_key: Option<DefaultKeyedRateLimiter<[u8; 32]>>,
        per_address: Option<DefaultKeyedRateLimiter<AddressKey>>,
        clock: DefaultClock,
    },
    Shared {
        store: Store,
        limits: RateLimits,
    },
}

/// Why a request was refused (code, message).
const KEY_REFUSAL: (&str, &str) = ("rate_limited_key", "too many requests signed by this key");

fn address_refusal(addr: AddressKey, wait: Duration) -> ApiError {
    ApiError::rate_limited(
        "rate_limited_address",
        format!("too many requests from {addr}"),
        wait,
    )
}

impl RateLimiters {
    /// In-memory limiters, or the database's when `store` is shared by several instances.
    pub fn new(limits: &RateLimits, store: &Store) -> RateLimiters {
        if store.is_shared() {
            return RateLimiters::Shared {
                store: store.clone(),
                limits: *limits,
            };
        }
        RateLimiters::InMemory {
            per_key: limits
                .per_key
                .map(|rate| governor::RateLimiter::keyed(quota(rate))),
            per_address: limits
                .per_address
                .map(|rate| governor::RateLimiter::keyed(quota(rate))),
            clock: DefaultClock::default(),
        }
    }

    /// Counts one request from `addr`.
    pub async fn check_address(&self, addr: AddressKey) -> Result<(), ApiError> {
        let refused = |wait| address_refusal(addr, wait);
        match self {
            RateLimiters::Shared { store, limits } => {
                count_shared(store, limits.per_address, &format!("address:{addr}"))
                    .await
                    .map_err(refused)
            }
            RateLimiters::InMemory {
                per_address, clock, ..
            } => count_local(per_address.as_ref(), &addr, clock).map_err(refused),
        }
    }

    /// Counts one verified request of `public_key` (32 bytes).
    pub async fn check_key(&self, public_key: [u8; 32]) -> Result<(), ApiError> {
        let refused = |wait| ApiError::rate_limited(KEY_REFUSAL.0, KEY_REFUSAL.1, wait);
        match self {
            RateLimiters::Shared { store, limits } => {
                let subject = format!("key:{}", hex::encode(public_key));
                count_shared(store, limits.per_key, &subject)
                    .await
                    .map_err(refused)
            }
            RateLimiters::InMemory { per_key, clock, .. } => {
                count_local(per_key.as_ref(), &public_key, clock).map_err(refused)
            }
        }
    }

    /// Forgets keys and addresses whose allowance is full again (bounded memory; the
    /// database's rows are deleted by housekeeping).
    pub fn forget_idle(&self) {
        let RateLimiters::InMemory {
            per_key,
            per_address,
            ..
        } = self
        else {
            return;
        };
        if let Some(limiter) = per_key {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        if let Some(limiter) = per_address {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }
}

/// Counts one request of `key` in this process: `Err(wait)` when refused.
fn count_local<K: Clone + Eq + std::hash::Hash>(
    limiter: Option<&DefaultKeyedRateLimiter<K>>,
    key: &K,
    clock: &DefaultClock,
) -> Result<(), Duration> {
    match limiter {
        Some(limiter) => limiter
            .check_key(key)
            .map_err(|not_until| not_until.wait_time_from(clock.now())),
        None => Ok(()),
    }
}

/// How long a shared count may take (it is one quick upsert) before the request goes on
/// uncounted.
const SHARED_COUNT_TIMEOUT: Duration = Duration::from_millis(500);

/// Counts one request of `subject` in the shared database: `Err(wait)` when refused. A
/// database that does not answer within [`SHARED_COUNT_TIMEOUT`] does not stop the request
/// here (the request needs the database anyway, and answers 503 there; the health check
/// stays quick): availability over a counter.
async fn count_shared(store: &Store, rate: Option<Rate>, subject: &str) -> Result<(), Duration> {
    let Some(rate) = rate else {
        return Ok(());
    };
    let limit = RateWindow {
        interval_us: 1_000_000 / i64::from(rate.per_second.get()),
        burst: i64::from(rate.burst.get()),
    };
    match tokio::time::timeout(SHARED_COUNT_TIMEOUT, store.count_request(subject, limit)).await {
        Ok(Ok(None)) => Ok(()),
        Ok(Ok(Some(wait_us))) => Err(Duration::from_micros(wait_us.max(0) as u64)),
        Ok(Err(error)) => {
            tracing::warn!(%error, "a rate limit could not be counted");
            Ok(())
        }
        Err(_) => {
            tracing::warn!("a rate limit could not be counted in time");
            Ok(())
        }
    }
}

fn quota(rate: Rate) -> Quota {
    Quota::per_second(rate.per_second).allow_burst(rate.burst)
}

/// Whole seconds to announce in `Retry-After` (rounded up, at least 1).
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_is_allowed_then_refused_with_a_wait() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let limiters = RateLimiters::new(
            &RateLimits {
                per_key: Rate::new(1, 2),
                per_address: None,
            },
            &store,
        );
        let key = [7u8; 32];
        assert!(limiters.check_key(key).await.is_ok());
        assert!(limiters.check_key(key).await.is_ok());
        let refused = limiters.check_key(key).await.unwrap_err();
        assert_eq!(refused.status.as_u16(), 429);
        assert!(refused.retry_after.is_some_and(|secs| secs >= 1));
        assert!(
            limiters.check_key([8u8; 32]).await.is_ok(),
            "keys are independent"
        );
        let addr = AddressKey::of("192.0.2.1".parse().unwrap());
        for _ in 0..1000 {
            assert!(limiters.check_address(addr).await.is_ok());
        }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(10)), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
        assert_eq!(retry_after_secs(Duration::from_millis(2001)), 3);
    }
}
