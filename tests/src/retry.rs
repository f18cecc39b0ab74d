//! Bounded retries for requests that may meet a replica that is down or a leader election.

use std::future::Future;
use std::time::Duration;
use std::time::Instant;

use crate::error::Result;

/// Calls `attempt` until it succeeds, it fails with an error that is not
/// [retryable](crate::HarnessError::is_retryable), or `limit` has passed (then the last error is
/// returned). Waits `pause` between attempts.
pub async fn retry<T, F, Fut>(limit: Duration, pause: Duration, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let start = Instant::now();
    loop {
        match attempt().await {
            Ok(value) => return Ok(value),
            Err(e) if e.is_retryable() && start.elapsed() + pause < limit => {
                tokio::time::sleep(pause).await;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::HarnessError;

    fn timeout_error() -> HarnessError {
        HarnessError::Timeout {
            method: http::Method::GET,
            uri: "/x".to_owned(),
            after: Duration::ZERO,
        }
    }

    #[tokio::test]
    async fn retryable_errors_are_retried_until_success() {
        let calls = Cell::new(0);
        let value = retry(Duration::from_secs(5), Duration::from_millis(1), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move { if n < 3 { Err(timeout_error()) } else { Ok(n) } }
        })
        .await
        .unwrap();
        assert_eq!(value, 3);
    }

    #[tokio::test]
    async fn other_errors_and_the_time_limit_stop_the_retries() {
        let calls = Cell::new(0);
        let result: Result<()> = retry(Duration::from_secs(5), Duration::from_millis(1), || {
            calls.set(calls.get() + 1);
            async { Err(HarnessError::BadPidFile { path: "p".into() }) }
        })
        .await;
        assert!(matches!(result, Err(HarnessError::BadPidFile { .. })));
        assert_eq!(calls.get(), 1);

        let result: Result<()> = retry(
            Duration::from_millis(50),
            Duration::from_millis(10),
            || async { Err(timeout_error()) },
        )
        .await;
        assert!(matches!(result, Err(HarnessError::Timeout { .. })));
    }
}
