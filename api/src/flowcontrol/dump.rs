//! `/debug/api_priority_and_fairness/dump_priority_levels`, `dump_queues` and
//! `dump_requests`: Kubernetes' comma-separated columns, aligned as its tab writer aligns them
//! (cells padded to the widest of their column plus one space, at least 8 wide).

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::SecondsFormat;

use super::queueset::QueueSet;

/// The path prefix of the dumps.
pub const PREFIX: &str = "/debug/api_priority_and_fairness/";

/// The dump at `path` of `levels` (by name), or `None` when `path` is no dump.
pub fn dump(path: &str, levels: &BTreeMap<String, Arc<QueueSet>>) -> Option<String> {
    let rows = match path.strip_prefix(PREFIX)? {
        "dump_priority_levels" => priority_levels(levels),
        "dump_queues" => queues(levels),
        "dump_requests" => requests(levels),
        _ => return None,
    };
    Some(aligned(&rows))
}

fn priority_levels(levels: &BTreeMap<String, Arc<QueueSet>>) -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "PriorityLevelName",
        "ActiveQueues",
        "IsIdle",
        "IsQuiescing",
        "WaitingRequests",
        "ExecutingRequests",
        "DispatchedRequests",
        "RejectedRequests",
        "TimedoutRequests",
        "CancelledRequests",
    ])];
    for (name, set) in levels {
        let totals = set.totals();
        let active = set.queue_digests().iter().filter(|q| q.0 > 0).count();
        let idle = totals.waiting == 0 && totals.executing == 0;
        rows.push(vec![
            name.clone(),
            active.to_string(),
            idle.to_string(),
            false.to_string(),
            totals.waiting.to_string(),
            totals.executing.to_string(),
            totals.dispatched.to_string(),
            totals.rejected.to_string(),
            totals.timed_out.to_string(),
            totals.cancelled.to_string(),
        ]);
    }
    rows
}

fn queues(levels: &BTreeMap<String, Arc<QueueSet>>) -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "PriorityLevelName",
        "Index",
        "PendingRequests",
        "ExecutingRequests",
        "SeatsInUse",
        "NextDispatchR",
        "InitialSeatsSum",
        "MaxSeatsSum",
        "TotalWorkSum",
    ])];
    for (name, set) in levels {
        for (i, (waiting, executing, seats)) in set.queue_digests().into_iter().enumerate() {
            rows.push(vec![
                name.clone(),
                i.to_string(),
                waiting.to_string(),
                executing.to_string(),
                seats.to_string(),
                "0.00000000ss".into(),
                seats.to_string(),
                seats.to_string(),
                "0.00000000ss".into(),
            ]);
        }
    }
    rows
}

fn requests(levels: &BTreeMap<String, Arc<QueueSet>>) -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "PriorityLevelName",
        "FlowSchemaName",
        "QueueIndex",
        "RequestIndexInQueue",
        "FlowDistingsher",
        "ArriveTime",
        "InitialSeats",
        "FinalSeats",
        "AdditionalLatency",
        "StartTime",
    ])];
    let index = |i: Option<usize>| i.map_or("-1".to_owned(), |i| i.to_string());
    for (name, set) in levels {
        for (queue, position, request) in set.request_digests() {
            let time =
                |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(SecondsFormat::Nanos, true);
            rows.push(vec![
                name.clone(),
                request.schema,
                index(queue),
                index(position),
                request.flow,
                time(request.arrived),
                request.width.to_string(),
                "0".into(),
                "0s".into(),
                request.started.map(time).unwrap_or_default(),
            ]);
        }
    }
    rows
}

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// The rows as Kubernetes writes them: cells joined by `,` and padded to their column's
/// width (the widest cell plus its comma and one space, at least 8); the last cell of a
/// row is not padded.
fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            let widest = rows.iter().filter_map(|r| r.get(c)).map(String::len).max();
            (widest.unwrap_or(0) + 2).max(8)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                out.push_str(cell);
            } else {
                let padded = format!("{cell},");
                out.push_str(&format!("{padded:<width$}", width = widths[c]));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flowcontrol::config::Queuing;

    #[test]
    fn levels_are_dumped_by_name_in_aligned_columns() {
        let queuing = Queuing {
            queues: 2,
            hand_size: 1,
            queue_length_limit: 5,
        };
        let levels = BTreeMap::from([
            (
                "workload-low".to_owned(),
                QueueSet::new(3, Some(queuing), false),
            ),
            ("exempt".to_owned(), QueueSet::new(0, None, true)),
        ]);
        let text = dump(
            "/debug/api_priority_and_fairness/dump_priority_levels",
            &levels,
        )
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("PriorityLevelName, ActiveQueues, IsIdle,"));
        assert!(lines[1].starts_with("exempt,            0,"));
        assert!(lines[2].starts_with("workload-low,      0,            true,"));
        let queues = dump("/debug/api_priority_and_fairness/dump_queues", &levels).unwrap();
        assert_eq!(queues.lines().count(), 3);
        assert!(dump("/debug/api_priority_and_fairness/other", &levels).is_none());
    }
}
