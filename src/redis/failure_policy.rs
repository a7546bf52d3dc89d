//! [`FailurePolicy`]: what a Redis limiter decides when Redis cannot.

/// The decision made when Redis is unreachable, too slow or fails.
///
/// Whatever the policy, the backend error is reported: returned by
/// `check_detailed` in its [`Outcome`](super::Outcome) and logged through
/// `tracing` at `WARN` level (target `tollgate::redis`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FailurePolicy {
    /// Deny: nothing passes while Redis is away. The rejection reports no
    /// remaining units and the per-call timeout as its retry hint.
    #[default]
    FailClosed,
    /// Allow: everything passes while Redis is away. The admission reports no
    /// remaining units, since the real count is unknown.
    FailOpen,
    /// Decide with an in-memory limiter of the same algorithm and quota in this
    /// process until Redis answers again. Each process then enforces the quota
    /// on its own, so the cluster-wide total can reach the quota times the
    /// number of processes.
    Fallback,
}
