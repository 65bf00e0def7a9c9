//! Builders shared by the status unit tests.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use super::kind::MergeContext;

/// Our controller name in the tests.
pub(crate) const US: &str = "portcullis.dev/gateway-controller";
/// When the current conditions transitioned.
pub(crate) const EARLIER: &str = "2026-01-01T00:00:00Z";
/// The time a merge runs at.
pub(crate) const NOW: &str = "2026-02-02T00:00:00Z";
/// What convert's conditions carry before a merge sets their time.
pub(crate) const UNSET: &str = "1970-01-01T00:00:00Z";

pub(crate) fn time(at: &str) -> Time {
    Time(at.parse::<Timestamp>().unwrap_or(Timestamp::UNIX_EPOCH))
}

/// A condition of `kind` with `status`, transitioned `at`.
pub(crate) fn condition(kind: &str, status: &str, at: &str) -> Condition {
    Condition {
        type_: kind.into(),
        status: status.into(),
        reason: kind.into(),
        message: String::new(),
        observed_generation: Some(1),
        last_transition_time: time(at),
    }
}

/// Runs `body` with the merge context of the tests: we are [`US`], it is [`NOW`].
pub(crate) fn at_now<T>(body: impl FnOnce(&MergeContext<'_>) -> T) -> T {
    let now = time(NOW);
    body(&MergeContext {
        controller_name: US,
        now: &now,
    })
}

/// Metadata of `name` in `default` at `version`.
pub(crate) fn metadata(name: &str, version: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: Some("default".into()),
        name: Some(name.into()),
        resource_version: Some(version.into()),
        ..ObjectMeta::default()
    }
}
