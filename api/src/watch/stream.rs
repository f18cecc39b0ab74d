//! The body of a watch: the initial events, then the store's changes as events, BOOKMARKs
//! when asked for, until the timeout, the store stopping, or an error (sent as one ERROR
//! event). One event per body frame, so each is flushed to the client as it is produced.
//!
//! The stream pulls from the store's [`WatchStream`]: a slow client only delays its own
//! pulls (the store catches it up from history, or ends it with 410 once that history is
//! compacted), so it never holds back other watches or the apply path. The only buffer is
//! the events of one revision.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use bytes::BytesMut;
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::time::Instant;
use tokio::time::Sleep;
use tokio::time::sleep_until;

use super::event::BookmarkObject;
use super::event::error_event;
use super::filter::Filter;
use crate::codec::EventEncoder;
use crate::codec::transcode_event;
use crate::error::ApiError;
use crate::group::GroupResource;
use crate::storage::Change;
use crate::storage::Revision;
use crate::storage::StoredObject;
use crate::storage::WatchStream;

/// The most bytes of events written as one body frame. Events that are ready together (the
/// initial ones, or a backlog while the client was slow to read) go out in one frame, so a
/// busy watch costs one TLS record and one write per frame rather than per event.
const MAX_FRAME: usize = 64 * 1024;

/// How long before the deadline the last BOOKMARK goes out, so a client resuming after the
/// timeout starts from a recent version (Kubernetes' watch cache does the same).
const PRE_TIMEOUT_BOOKMARK: Duration = Duration::from_secs(2);

/// When the periodic BOOKMARKs of a watch with `allowWatchBookmarks` are due.
pub(crate) struct Bookmarks {
    /// What a BOOKMARK looks like.
    pub object: BookmarkObject,
    /// The period.
    pub interval: Duration,
}

/// What the store hands a watch next.
enum Next {
    /// The changes of one revision.
    Changes(Vec<Change>),
    /// An event that comes first: a periodic BOOKMARK, or the ERROR that ends the stream.
    Event(Bytes),
}

/// A running watch.
pub(crate) struct EventStream {
    /// Existing objects still to send as ADDED.
    initial: std::vec::IntoIter<StoredObject>,
    /// The revision of the initial-events-end BOOKMARK, until it is sent.
    end_bookmark: Option<Revision>,
    changes: Box<dyn WatchStream>,
    filter: Filter,
    resource: GroupResource,
    bookmarks: Option<Bookmarks>,
    /// When the next periodic BOOKMARK is due (`None`: no more).
    next_bookmark: Option<Instant>,
    deadline: Instant,
    /// Fires at `deadline`. The timers live as long as the watch, so waiting for an event
    /// registers no timer: with a thousand watches, each event would otherwise add and remove
    /// two timers per watch.
    deadline_timer: Pin<Box<Sleep>>,
    /// Fires at `next_bookmark` (polled only while that is set).
    bookmark_timer: Pin<Box<Sleep>>,
    /// Events of the current revision not yet sent.
    pending: VecDeque<Bytes>,
    /// Changes not yet filtered, of a watch whose objects are converted by calling out.
    queued: VecDeque<Change>,
    /// The event being converted by calling out: kept across polls, so a dropped
    /// `next_event` neither loses nor restarts it.
    converting: Option<BoxFuture<'static, Result<Option<Bytes>, ApiError>>>,
    /// Whether the stream ends once `pending` is sent.
    finished: bool,
    /// Writes the JSON events in the negotiated format (`None`: they go out as they are).
    encoder: Option<Box<dyn EventEncoder>>,
}

impl EventStream {
    /// A watch sending `initial` as ADDED (and a BOOKMARK at `end_bookmark`, if given), then
    /// the `changes` that pass `filter`, until `deadline`.
    pub(crate) fn new(
        initial: Vec<StoredObject>,
        end_bookmark: Option<Revision>,
        changes: Box<dyn WatchStream>,
        filter: Filter,
        resource: GroupResource,
        bookmarks: Option<Bookmarks>,
        deadline: Instant,
    ) -> Self {
        let mut this = Self {
            initial: initial.into_iter(),
            end_bookmark: end_bookmark.filter(|_| bookmarks.is_some()),
            changes,
            filter,
            resource,
            bookmarks,
            next_bookmark: None,
            deadline,
            deadline_timer: Box::pin(sleep_until(deadline)),
            bookmark_timer: Box::pin(sleep_until(deadline)),
            pending: VecDeque::new(),
            queued: VecDeque::new(),
            converting: None,
            finished: false,
            encoder: None,
        };
        this.schedule_bookmark(Instant::now());
        this
    }

    /// The stream writing its events with `encoder` (`None`: as JSON, as they are).
    pub(crate) fn encoded_by(mut self, encoder: Option<Box<dyn EventEncoder>>) -> Self {
        self.encoder = encoder;
        self
    }

    /// The response body: each frame the next event and whatever others are ready with it.
    pub(crate) fn into_body(self) -> Body {
        Body::from_stream(futures::stream::unfold(self, |mut s| async move {
            s.next_frame().await.map(|e| (Ok::<_, Infallible>(e), s))
        }))
    }

    /// The next event, followed by every event already available (up to [`MAX_FRAME`] bytes),
    /// without waiting for more. `next_event` is cancel safe, so polling it once and dropping
    /// it loses nothing; a single event goes out as it is, still shared with other watches.
    async fn next_frame(&mut self) -> Option<Bytes> {
        let first = self.next_encoded().await?;
        let mut frame: Option<BytesMut> = None;
        while frame.as_ref().map_or(first.len(), BytesMut::len) < MAX_FRAME {
            let Some(Some(more)) = self.next_encoded().now_or_never() else {
                break;
            };
            frame
                .get_or_insert_with(|| BytesMut::from(&first[..]))
                .extend_from_slice(&more);
        }
        Some(frame.map_or(first, BytesMut::freeze))
    }

    /// The next periodic BOOKMARK: an interval from `now`, but no later than shortly before
    /// the deadline, and none once that moment has passed.
    fn schedule_bookmark(&mut self, now: Instant) {
        self.next_bookmark = self.bookmarks.as_ref().and_then(|b| {
            let last = self
                .deadline
                .checked_sub(PRE_TIMEOUT_BOOKMARK)
                .unwrap_or(now);
            let due = now.checked_add(b.interval).unwrap_or(last).min(last);
            (due >= now).then_some(due)
        });
        if let Some(due) = self.next_bookmark {
            self.bookmark_timer.as_mut().reset(due);
        }
    }

    /// The next event in the negotiated format (cancel safe, as [`Self::next_event`]: the
    /// encoding happens after the event is taken, without awaiting). An event the encoder
    /// cannot write ends the stream.
    async fn next_encoded(&mut self) -> Option<Bytes> {
        let event = self.next_event().await?;
        match self.encoder.as_deref_mut() {
            None => Some(event),
            Some(encoder) => {
                let encoded = transcode_event(encoder, &event);
                if encoded.is_none() {
                    self.finished = true;
                    self.pending.clear();
                }
                encoded
            }
        }
    }

    /// Ends the stream with an ERROR event for `error`.
    fn fail(&mut self, error: &ApiError) -> Bytes {
        self.finished = true;
        self.pending.clear();
        error_event(error)
    }

    async fn next_event(&mut self) -> Option<Bytes> {
        if self.filter.calls_out() {
            return self.next_converted_event().await;
        }
        if let Some(e) = self.pending.pop_front() {
            return Some(e);
        }
        if self.finished {
            return None;
        }
        for object in self.initial.by_ref() {
            match self.filter.initial(&object) {
                Ok(Some(e)) => return Some(e),
                Ok(None) => {}
                Err(error) => return Some(self.fail(&error)),
            }
        }
        if let Some(e) = self.end_bookmark() {
            return Some(e);
        }
        loop {
            match self.next_batch().await? {
                Next::Changes(changes) => {
                    for change in &changes {
                        match self.filter.event(change) {
                            Ok(Some(e)) => self.pending.push_back(e),
                            Ok(None) => {}
                            Err(error) => return Some(self.fail(&error)),
                        }
                    }
                    if let Some(e) = self.pending.pop_front() {
                        return Some(e);
                    }
                }
                Next::Event(event) => return Some(event),
            }
        }
    }

    /// As [`Self::next_event`], for a watch whose objects are converted by calling out:
    /// one event converted at a time, in order.
    async fn next_converted_event(&mut self) -> Option<Bytes> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some(e);
            }
            if self.finished {
                return None;
            }
            if let Some(converting) = self.converting.as_mut() {
                let outcome = converting.await;
                self.converting = None;
                match outcome {
                    Ok(Some(e)) => return Some(e),
                    Ok(None) => continue,
                    Err(error) => return Some(self.fail(&error)),
                }
            }
            let filter = self.filter.clone();
            if let Some(object) = self.initial.next() {
                self.converting = Some(Box::pin(filter.converted_initial(object)));
                continue;
            }
            if let Some(e) = self.end_bookmark() {
                return Some(e);
            }
            if let Some(change) = self.queued.pop_front() {
                self.converting = Some(Box::pin(filter.converted_event(change)));
                continue;
            }
            match self.next_batch().await? {
                Next::Changes(changes) => self.queued.extend(changes),
                Next::Event(event) => return Some(event),
            }
        }
    }

    /// The initial-events-end BOOKMARK, once.
    fn end_bookmark(&mut self) -> Option<Bytes> {
        match (self.end_bookmark.take(), &self.bookmarks) {
            (Some(revision), Some(b)) => Some(b.object.event(revision, true)),
            _ => None,
        }
    }

    /// The next batch of changes, or the event that comes first (a periodic BOOKMARK, the
    /// ERROR that ends the stream); `None` when the stream ends (cancel safe: a batch is
    /// handed over only when it is taken).
    async fn next_batch(&mut self) -> Option<Next> {
        loop {
            let bookmark_due = self.next_bookmark.is_some();
            tokio::select! {
                biased;
                _ = &mut self.deadline_timer => return None,
                batch = self.changes.next() => {
                    return match batch {
                        Ok(Some(batch)) => Some(Next::Changes(batch.changes)),
                        Ok(None) => None,
                        Err(e) => {
                            let error = ApiError::from_storage(e, &self.resource, "");
                            Some(Next::Event(self.fail(&error)))
                        }
                    };
                }
                _ = &mut self.bookmark_timer, if bookmark_due => {
                    self.schedule_bookmark(Instant::now());
                    let progress = self.changes.progress();
                    // Revision 0 reports nothing (Kubernetes skips such bookmarks too).
                    if let (Some(b), true) = (&self.bookmarks, progress > 0) {
                        return Some(Next::Event(b.object.event(progress, false)));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::flavor::Flavor;
    use crate::request::Selectors;
    use crate::storage::ChangeBatch;
    use crate::storage::StorageError;
    use crate::watch::EncodedEvents;

    /// A store with no changes, whose every change up to revision 7 has been delivered.
    struct Quiet;

    #[async_trait::async_trait]
    impl WatchStream for Quiet {
        async fn next(&mut self) -> Result<Option<ChangeBatch>, StorageError> {
            std::future::pending().await
        }

        fn progress(&self) -> Revision {
            7
        }
    }

    // R-RES-103
    #[tokio::test]
    async fn bookmarks_come_each_interval_then_once_before_the_deadline_which_ends_the_watch() {
        let started = Instant::now();
        let interval = Duration::from_millis(100);
        let deadline = started + PRE_TIMEOUT_BOOKMARK + Duration::from_millis(250);
        let filter = Filter::new(
            "",
            Selectors::default(),
            Arc::new(EncodedEvents::default()),
            "v1".to_owned(),
            None,
        );
        let bookmarks = Bookmarks {
            object: BookmarkObject {
                kind: "ConfigMap".to_owned(),
                api_version: "v1".to_owned(),
                flavor: Flavor::Kubernetes,
            },
            interval,
        };
        let resource = GroupResource {
            group: String::new(),
            resource: "configmaps".to_owned(),
        };
        let mut stream = EventStream::new(
            Vec::new(),
            None,
            Box::new(Quiet),
            filter,
            resource,
            Some(bookmarks),
            deadline,
        );
        let mut at = Vec::new();
        while let Some(frame) = stream.next_frame().await {
            let text = std::str::from_utf8(&frame).expect("utf-8");
            assert!(text.starts_with("{\"type\":\"BOOKMARK\""), "{text}");
            assert!(text.contains("\"resourceVersion\":\"7\""), "{text}");
            at.push(started.elapsed());
        }
        let ended = started.elapsed();
        // Every interval until two seconds before the deadline, then at that moment (0.25 s).
        assert_eq!(at.len(), 3, "{at:?}");
        assert!(at[0] >= interval && at[1] >= 2 * interval, "{at:?}");
        assert!(at[2] >= Duration::from_millis(250), "{at:?}");
        assert!(at[2] < PRE_TIMEOUT_BOOKMARK, "{at:?}");
        assert!(ended >= deadline - started, "{ended:?}");
    }
}
