//! [`Outcome`]: a decision and whether Redis made it.

use super::error::BackendError;
use crate::decision::Decision;

/// A decision, and the backend error that made the failure policy decide
/// instead of Redis, if any.
#[derive(Debug)]
pub struct Outcome {
    decision: Decision,
    backend_error: Option<BackendError>,
}

impl Outcome {
    pub(crate) fn from_redis(decision: Decision) -> Outcome {
        Outcome {
            decision,
            backend_error: None,
        }
    }

    pub(crate) fn from_policy(decision: Decision, error: BackendError) -> Outcome {
        Outcome {
            decision,
            backend_error: Some(error),
        }
    }

    /// The decision, made by Redis or by the failure policy.
    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// Whether Redis made the decision.
    pub fn is_from_redis(&self) -> bool {
        self.backend_error.is_none()
    }

    /// Why Redis did not decide, when it did not.
    pub fn backend_error(&self) -> Option<&BackendError> {
        self.backend_error.as_ref()
    }

    /// The decision and the backend error, if any.
    pub fn into_parts(self) -> (Decision, Option<BackendError>) {
        (self.decision, self.backend_error)
    }
}
