//! A store failure, as the host reports it.

/// A store failure, as text for the log or the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvError(pub String);

impl std::fmt::Display for KvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KvError {}

/// Result of a store operation.
pub type KvResult<T> = Result<T, KvError>;
