//! Errors of the Redis limiters.

use std::fmt;
use std::time::Duration;

use crate::error::InsufficientCapacity;

/// Why Redis gave no decision.
#[derive(Debug)]
#[non_exhaustive]
pub enum BackendError {
    /// Connecting, sending or the script itself failed.
    Redis(redis::RedisError),
    /// No answer came within the per-call timeout.
    Timeout(Duration),
    /// The script answered something other than four non-negative integers.
    InvalidReply(String),
    /// An async call was made outside a Tokio runtime.
    NoRuntime,
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::Redis(error) => write!(f, "redis error: {error}"),
            BackendError::Timeout(after) => write!(f, "redis did not answer within {after:?}"),
            BackendError::InvalidReply(reply) => {
                write!(f, "unexpected reply from the rate-limit script: {reply}")
            }
            BackendError::NoRuntime => {
                f.write_str("the async Redis limiter must be called on a Tokio runtime")
            }
        }
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BackendError::Redis(error) => Some(error),
            _ => None,
        }
    }
}

impl From<redis::RedisError> for BackendError {
    fn from(error: redis::RedisError) -> Self {
        BackendError::Redis(error)
    }
}

/// Why a call that bypasses the failure policy gave no decision.
#[derive(Debug)]
#[non_exhaustive]
pub enum RedisLimitError {
    /// The cost can never be admitted; waiting would not help.
    InsufficientCapacity(InsufficientCapacity),
    /// Redis gave no decision.
    Backend(BackendError),
}

impl fmt::Display for RedisLimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisLimitError::InsufficientCapacity(error) => error.fmt(f),
            RedisLimitError::Backend(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for RedisLimitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RedisLimitError::InsufficientCapacity(error) => Some(error),
            RedisLimitError::Backend(error) => Some(error),
        }
    }
}

impl From<InsufficientCapacity> for RedisLimitError {
    fn from(error: InsufficientCapacity) -> Self {
        RedisLimitError::InsufficientCapacity(error)
    }
}

impl From<BackendError> for RedisLimitError {
    fn from(error: BackendError) -> Self {
        RedisLimitError::Backend(error)
    }
}

/// A limiter setting that cannot work.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The key prefix holds `{` or `}`, which would move the Cluster hash tag.
    BraceInPrefix {
        /// The prefix asked for.
        prefix: String,
    },
    /// The quota's window is longer than the scripts handle
    /// ([`MAX_WINDOW`](super::MAX_WINDOW)).
    WindowTooLong {
        /// The quota's window.
        window: Duration,
        /// The longest window a Redis limiter takes.
        max: Duration,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::BraceInPrefix { prefix } => write!(
                f,
                "the key prefix {prefix:?} may not contain '{{' or '}}': the limiter key is the hash tag"
            ),
            ConfigError::WindowTooLong { window, max } => write!(
                f,
                "a window of {window:?} is longer than a Redis limiter takes ({max:?})"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}
