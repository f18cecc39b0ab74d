//! Truncation of webhook batches (`--audit-webhook-truncate-*`, kube-apiserver's truncate
//! backend): an event larger than the event limit loses its request and response objects and
//! is marked `audit.<domain>/truncated: "true"`; one still too large is dropped; the rest is
//! split into posts no larger than the batch limit.

use super::Event;

/// The size limits, with kube-apiserver's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncateSettings {
    /// The most bytes of one event (`--audit-webhook-truncate-max-event-size`).
    pub max_event_bytes: usize,
    /// The most bytes of one post (`--audit-webhook-truncate-max-batch-size`).
    pub max_batch_bytes: usize,
}

impl Default for TruncateSettings {
    fn default() -> Self {
        Self {
            max_event_bytes: 100 * 1024,
            max_batch_bytes: 10 * 1024 * 1024,
        }
    }
}

fn size(event: &Event) -> usize {
    serde_json::to_vec(event)
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

/// `events` fitted to `settings`, as the posts to make; `annotation` marks truncated events.
pub(crate) fn truncate(
    events: Vec<Event>,
    settings: TruncateSettings,
    annotation: &str,
) -> Vec<Vec<Event>> {
    let mut posts: Vec<Vec<Event>> = Vec::new();
    let mut current: Vec<Event> = Vec::new();
    let mut current_bytes = 0;
    for mut event in events {
        let mut bytes = size(&event);
        if bytes > settings.max_event_bytes {
            event.request_object = None;
            event.response_object = None;
            event
                .annotations
                .insert(annotation.to_owned(), "true".to_owned());
            bytes = size(&event);
        }
        if bytes > settings.max_event_bytes {
            tracing::error!(
                audit_id = %event.audit_id,
                bytes,
                "audit event too large even without its objects; dropped"
            );
            continue;
        }
        if !current.is_empty() && current_bytes + bytes > settings.max_batch_bytes {
            posts.push(std::mem::take(&mut current));
            current_bytes = 0;
        }
        current_bytes += bytes;
        current.push(event);
    }
    if !current.is_empty() {
        posts.push(current);
    }
    posts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::tests::sample;

    #[test]
    fn large_events_lose_their_objects_then_are_dropped_and_posts_are_split() {
        let small = sample("small", 0);
        let large = sample("large", 2000);
        let limits = TruncateSettings {
            max_event_bytes: size(&small) + 200,
            max_batch_bytes: 2 * size(&small) + 100,
        };
        let mut huge = sample("huge", 0);
        huge.user.username = "u".repeat(4000);
        let posts = truncate(
            vec![small.clone(), large, huge, small.clone(), small],
            limits,
            "audit.k8s.io/truncated",
        );
        let ids: Vec<Vec<&str>> = posts
            .iter()
            .map(|p| p.iter().map(|e| e.audit_id.as_str()).collect())
            .collect();
        assert_eq!(ids, [vec!["small", "large"], vec!["small", "small"]]);
        let truncated = &posts[0][1];
        assert_eq!(truncated.request_object, None);
        assert_eq!(truncated.response_object, None);
        assert_eq!(truncated.annotations["audit.k8s.io/truncated"], "true");
        assert!(posts[1][0].annotations.is_empty());
        assert!(posts[1][0].request_object.is_some());
    }
}
