//! Blue-green deployments: server weights by group, and the request header or cookie
//! that chooses a group.

use std::fmt;

use crate::Word;

/// A server's weight, from 0 (no load-balanced traffic, still reachable by a selector or
/// a sticky session) to HAProxy's maximum of 256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerWeight(u16);

impl ServerWeight {
    /// HAProxy's largest server weight.
    pub const MAX: u16 = 256;

    /// A weight, clamped to HAProxy's range.
    pub fn clamped(weight: u64) -> Self {
        Self(u16::try_from(weight.min(u64::from(Self::MAX))).unwrap_or(Self::MAX))
    }

    /// The weight.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for ServerWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a request names the group it wants: a header, a cookie, or both (the header
/// first). The group is the value of a pod label, held by each server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupSelector {
    /// The request header whose value names a group.
    pub header: Option<Word>,
    /// The cookie whose value names a group.
    pub cookie: Option<Word>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_stay_within_haproxy_s_range() {
        assert_eq!(ServerWeight::clamped(0).get(), 0);
        assert_eq!(ServerWeight::clamped(100).to_string(), "100");
        assert_eq!(ServerWeight::clamped(100_000).get(), 256);
    }
}
