//! Calls retried through the server's temporary refusals: a host must not refuse its guest
//! or lose its invitation because the server said "later" (429 or 503, honouring
//! `Retry-After`) or could not be reached for a moment.

use std::future::Future;
use std::time::{Duration, Instant};

use super::ClientError;

/// The wait before the second attempt when the server names none; it doubles up to
/// [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(250);
const LONGEST_WAIT: Duration = Duration::from_secs(5);

impl ClientError {
    /// Whether the same call may well succeed later: rate limited (429), the server or a
    /// proxy in front of it unavailable (502, 503, 504), or the server not reached at all.
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Unreachable { .. } => true,
            ClientError::Status { status, .. } => matches!(status, 429 | 502 | 503 | 504),
            _ => false,
        }
    }

    /// How long the server asked us to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Runs `call` until it succeeds, fails for good, or the next attempt could not start
/// before `deadline`; then the last answer is returned. Between attempts it waits what the
/// server asked (`Retry-After`), else a doubling backoff.
pub async fn retrying<T, F, Fut>(deadline: Instant, mut call: F) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    let mut backoff = FIRST_WAIT;
    loop {
        let error = match call().await {
            Err(error) if error.is_transient() => error,
            answer => return answer,
        };
        let wait = error.retry_after().unwrap_or(backoff);
        if Instant::now() + wait >= deadline {
            return Err(error);
        }
        tokio::time::sleep(wait).await;
        backoff = (backoff * 2).min(LONGEST_WAIT);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use reqwest::Method;

    use super::*;

    fn refused(status: u16, retry_after: Option<Duration>) -> ClientError {
        ClientError::Status {
            method: Method::GET,
            target: "/api/v1/x".into(),
            status,
            code: None,
            reason: "no".into(),
            retry_after,
        }
    }

    #[tokio::test]
    async fn transient_refusals_are_retried_after_the_wait_the_server_asks() {
        let calls = AtomicU32::new(0);
        let started = Instant::now();
        let answer = retrying(Instant::now() + Duration::from_secs(60), || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err(refused(429, Some(Duration::from_secs(1)))),
                1 => Err(refused(503, None)),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!(answer.unwrap(), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert!(started.elapsed() >= Duration::from_millis(1250));
    }

    #[tokio::test]
    async fn a_final_refusal_is_not_retried() {
        let calls = AtomicU32::new(0);
        let answer: Result<(), _> = retrying(Instant::now() + Duration::from_secs(60), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(refused(404, None))
        })
        .await;
        assert_eq!(answer.unwrap_err().status(), Some(404));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn retrying_stops_when_the_wait_would_pass_the_deadline() {
        let calls = AtomicU32::new(0);
        let started = Instant::now();
        let answer: Result<(), _> = retrying(started + Duration::from_secs(3), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(refused(429, Some(Duration::from_secs(10))))
        })
        .await;
        assert_eq!(answer.unwrap_err().status(), Some(429));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
