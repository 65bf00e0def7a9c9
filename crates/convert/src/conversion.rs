//! What a conversion produces, and what it is asked to leave out.

use std::sync::Arc;

use model::{OrdSet, ProxyModel};
use resources::{Object, ObjectRef};

use crate::diagnostic::Diagnostic;
use crate::gateway::status::StatusReport;

/// A converted snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    /// What HAProxy should serve.
    pub model: ProxyModel,
    /// Every problem found, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// The Gateway API status of every object of ours (the same `Arc` while unchanged).
    pub gateway_status: Arc<StatusReport>,
    /// The Ingresses that are ours (whose status this controller writes).
    pub served_ingresses: OrdSet<ObjectRef>,
}

/// The shard count `--backend-shards 0` chooses: about 100 backends per file, rounded up to
/// a power of two (so the layout changes only when the backend count doubles), from 1 to
/// 1024. A single-backend change then rewrites a file of about 100 backends.
pub fn automatic_shards(backends: usize) -> u32 {
    let wanted = (backends / 100).next_power_of_two().clamp(1, 1024);
    u32::try_from(wanted).unwrap_or(1024)
}

/// An object left out because HAProxy refused the configuration it renders to: the
/// version refused (an object changed beyond its status is tried again) and what HAProxy
/// said.
#[derive(Debug, Clone, PartialEq)]
pub struct Excluded {
    /// The object as it was when HAProxy refused it.
    pub object: Object,
    /// HAProxy's words.
    pub reason: String,
}

impl Excluded {
    /// Whether the refusal still holds for the object as it is `now`: the version refused,
    /// or it with only a status write since (which renders nothing new).
    pub fn holds_for(&self, now: &Object) -> bool {
        crate::lookup::same_object(now, &self.object) || self.object.changed_only_in_status(now)
    }
}

/// Objects left out of the conversion, by reference.
pub type Exclusions = std::collections::BTreeMap<ObjectRef, Excluded>;
