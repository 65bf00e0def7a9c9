//! Status conditions' `lastTransitionTime`: kept while a condition's status holds, so
//! that an unchanged status compares equal and is not written again.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// `desired`, each condition with the `lastTransitionTime` of the `current` condition of
/// the same type while it has the same status, else `now`.
pub(crate) fn with_transition_times(
    desired: &[Condition],
    current: &[Condition],
    now: &Time,
) -> Vec<Condition> {
    desired
        .iter()
        .map(|condition| {
            let held = current
                .iter()
                .find(|c| c.type_ == condition.type_ && c.status == condition.status);
            Condition {
                last_transition_time: held
                    .map_or_else(|| now.clone(), |c| c.last_transition_time.clone()),
                ..condition.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::testing::{EARLIER, NOW, UNSET, condition, time};

    #[test]
    fn a_condition_keeps_its_time_while_its_status_holds_and_takes_now_when_it_flips() {
        let current = [
            condition("Accepted", "True", EARLIER),
            condition("ResolvedRefs", "True", EARLIER),
        ];
        let desired = [
            condition("Accepted", "True", UNSET),
            condition("ResolvedRefs", "False", UNSET),
            condition("Programmed", "True", UNSET),
        ];
        let merged = with_transition_times(&desired, &current, &time(NOW));
        let times: Vec<Time> = merged
            .iter()
            .map(|c| c.last_transition_time.clone())
            .collect();
        assert_eq!(times, [time(EARLIER), time(NOW), time(NOW)]);
        assert_eq!(merged[1].status, "False");
    }
}
