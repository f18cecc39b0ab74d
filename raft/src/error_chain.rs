//! One line for an error and everything that caused it, for logs and start-up failures.

/// `error` and its sources, joined with ": " (each `#[error]` message names only its own step).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
