//! A `<Kind>List`'s JSON written while it is sent: the list head, then the items spliced from
//! their stored bytes a frame at a time, so a large list never sits in memory as one body
//! (its items are handles sharing the store's bytes until their frame is written).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::Context;
use std::task::Poll;

use bytes::Bytes;
use http_body::Frame;
use http_body::SizeHint;

use crate::registry::StoredJson;
use crate::storage::Revision;

/// About how many bytes each frame holds: it ends with the item that reaches this size.
const FRAME_BYTES: usize = 64 * 1024;

/// One item of a list body.
pub(super) enum BodyItem {
    /// A stored version, written with its `resourceVersion` spliced in when its frame is.
    Stored(StoredJson, Revision),
    /// An item already written as served (converted from another stored version).
    Encoded(Bytes),
}

impl BodyItem {
    fn len(&self) -> usize {
        match self {
            BodyItem::Stored(stored, revision) => stored.len_with_resource_version(*revision),
            BodyItem::Encoded(bytes) => bytes.len(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            BodyItem::Stored(stored, revision) => {
                stored.write_with_resource_version(*revision, out)
            }
            BodyItem::Encoded(bytes) => out.extend_from_slice(bytes),
        }
    }
}

/// The body of a JSON list: its exact length is known before the first frame (the response
/// carries `Content-Length`, and compression sees a large list as large), its frames are
/// written as the connection takes them.
pub struct ListBody {
    /// `{"kind":..,"apiVersion":..,"metadata":{..},"items":[`, until the first frame.
    head: Option<Bytes>,
    items: std::vec::IntoIter<BodyItem>,
    /// Whether an item was written (the next one takes a comma).
    wrote_item: bool,
    /// Whether the closing `]}` is still to come.
    tail: bool,
    /// The bytes still to come.
    remaining: u64,
}

impl ListBody {
    /// The body of the list whose head (the list without items, a JSON object) is `head`.
    pub(super) fn new(head: &[u8], items: Vec<BodyItem>) -> Self {
        // `head` is `{...}`: reopened to append the items.
        let mut open = Vec::with_capacity(head.len() + 10);
        open.extend_from_slice(head.strip_suffix(b"}").unwrap_or(head));
        open.extend_from_slice(b",\"items\":[");
        let commas = items.len().saturating_sub(1);
        let items_len: usize = items.iter().map(BodyItem::len).sum();
        let remaining = (open.len() + items_len + commas + 2) as u64;
        Self {
            head: Some(Bytes::from(open)),
            items: items.into_iter(),
            wrote_item: false,
            tail: true,
            remaining,
        }
    }

    /// The next frame: the head (first), whole items up to about [`FRAME_BYTES`], and the
    /// closing `]}` after the last item. `None` once everything was written. The frame is
    /// measured before it is written, so its buffer is allocated once at its exact size.
    fn next_frame(&mut self) -> Option<Bytes> {
        if !self.tail {
            return None;
        }
        let head = self.head.take().unwrap_or_default();
        let mut size = head.len();
        let mut count = 0;
        for item in self.items.as_slice() {
            if size >= FRAME_BYTES {
                break;
            }
            size += item.len() + usize::from(self.wrote_item || count > 0);
            count += 1;
        }
        let last = count == self.items.len();
        let mut out = Vec::with_capacity(size + if last { 2 } else { 0 });
        out.extend_from_slice(&head);
        for item in self.items.by_ref().take(count) {
            if self.wrote_item {
                out.push(b',');
            }
            self.wrote_item = true;
            item.write(&mut out);
        }
        if last {
            out.extend_from_slice(b"]}");
            self.tail = false;
        }
        self.remaining = self.remaining.saturating_sub(out.len() as u64);
        Some(Bytes::from(out))
    }
}

impl http_body::Body for ListBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().next_frame().map(|f| Ok(Frame::data(f))))
    }

    fn is_end_stream(&self) -> bool {
        !self.tail
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
#[path = "list_body_test.rs"]
mod list_body_test;
