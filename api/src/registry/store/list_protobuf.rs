//! A `<Kind>List`'s Protobuf written while it is sent: the page is read and each item's
//! message taken from the replica's cache (encoded once while cached) before the first byte,
//! so every error is a Status and the envelope's length is known; then the items are written
//! a frame at a time. The messages a body holds are bounded: past [`HELD_BYTES`] an item keeps
//! only its stored handle and length, and its message is taken from the cache again when its
//! frame is written.

use std::pin::Pin;
use std::sync::Arc;
use std::task::Context;
use std::task::Poll;

use bytes::Bytes;
use http_body::Frame;
use http_body::SizeHint;

use super::Store;
use crate::codec::protobuf::EncodeError;
use crate::codec::protobuf::EncodingCache;
use crate::codec::protobuf::ListLayout;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::StoredJson;
use crate::request::ListOptions;
use crate::storage::Revision;
use crate::storage::Storage;

/// About how many bytes each frame holds: it ends with the item that reaches this size.
const FRAME_BYTES: usize = 64 * 1024;

/// The most message bytes one body holds from before its first frame; the items past them
/// are taken from the cache again as they are written.
const HELD_BYTES: usize = 16 * 1024 * 1024;

/// One item of a Protobuf list body.
enum Item {
    /// Its message, taken before the first frame.
    Held(Arc<[u8]>),
    /// A stored version whose message (of `len` bytes) is taken from the cache again, or
    /// encoded again, when its frame is written.
    Again {
        key: String,
        stored: StoredJson,
        revision: Revision,
        len: usize,
    },
}

impl Item {
    fn len(&self) -> usize {
        match self {
            Item::Held(message) => message.len(),
            Item::Again { len, .. } => *len,
        }
    }
}

/// The body of a Protobuf list: its exact length is known before the first frame, its frames
/// are written as the connection takes them.
pub struct ProtobufListBody {
    layout: ListLayout,
    cache: Arc<EncodingCache>,
    /// The envelope and the list's fields before its items, until the first frame.
    open: Option<Vec<u8>>,
    items: std::vec::IntoIter<Item>,
    /// Whether the envelope's closing fields are still to come.
    tail: bool,
    /// The bytes still to come.
    remaining: u64,
}

impl ProtobufListBody {
    fn new(layout: ListLayout, cache: Arc<EncodingCache>, items: Vec<Item>) -> Self {
        let items_len: usize = items.iter().map(|i| layout.framed_len(i.len())).sum();
        let open = layout.open(items_len);
        let remaining = (open.len() + items_len + layout.close().len()) as u64;
        Self {
            layout,
            cache,
            open: Some(open),
            items: items.into_iter(),
            tail: true,
            remaining,
        }
    }

    /// The next frame: the envelope's opening (first), whole items up to about
    /// [`FRAME_BYTES`], and the closing fields after the last item. `None` once everything
    /// was written; an error (the stream is cut short) when an item's message is no longer
    /// the one measured.
    fn next_frame(&mut self) -> Option<Result<Bytes, EncodeError>> {
        if !self.tail {
            return None;
        }
        let mut out = self.open.take().unwrap_or_default();
        let mut size = out.len();
        let mut count = 0;
        for item in self.items.as_slice() {
            if size >= FRAME_BYTES {
                break;
            }
            size += self.layout.framed_len(item.len());
            count += 1;
        }
        let last = count == self.items.len();
        let close = if last { self.layout.close() } else { &[] };
        out.reserve_exact(size + close.len() - out.len());
        for item in self.items.by_ref().take(count) {
            match item {
                Item::Held(message) => self.layout.put_item(&mut out, &message),
                Item::Again {
                    key,
                    stored,
                    revision,
                    len,
                } => {
                    let json = || {
                        let mut json =
                            Vec::with_capacity(stored.len_with_resource_version(revision));
                        stored.write_with_resource_version(revision, &mut json);
                        json
                    };
                    match (self.layout).item_again(&self.cache, &key, revision, len, json) {
                        Ok(message) => self.layout.put_item(&mut out, &message),
                        Err(e) => return Some(Err(e)),
                    }
                }
            }
        }
        if last {
            out.extend_from_slice(close);
            self.tail = false;
        }
        self.remaining = self.remaining.saturating_sub(out.len() as u64);
        Some(Ok(Bytes::from(out)))
    }
}

impl http_body::Body for ProtobufListBody {
    type Data = Bytes;
    type Error = EncodeError;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, EncodeError>>> {
        let frame = self.get_mut().next_frame();
        Poll::Ready(frame.map(|f| f.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        !self.tail
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

impl Store {
    /// The `<Kind>List` of the page the options ask for (see [`Self::list`]) in Protobuf, as
    /// `flavor` names it, written while it is sent: every error (an unreadable object, a
    /// kind without a message) comes before its first byte; each item's message comes from
    /// `cache` by storage key and revision, so a stored version is parsed and encoded once
    /// while cached, never per request.
    pub async fn list_protobuf(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
        flavor: Flavor,
        cache: &Arc<EncodingCache>,
    ) -> Result<ProtobufListBody, ApiError> {
        let page = self.page(storage, namespace, options).await?;
        let layout = ListLayout::new(flavor, &self.list_head(&page))?;
        let mut held = 0;
        let mut items = Vec::with_capacity(page.items.len());
        for (key, stored, revision) in page.items {
            let mut unconverted = None;
            let message = layout.item(cache, &key, revision, || {
                let mut json = Vec::with_capacity(stored.len_with_resource_version(revision));
                if let Err(e) = self.write_item(&key, &stored, revision, &mut json) {
                    unconverted = Some(e);
                }
                json
            });
            if let Some(e) = unconverted {
                return Err(e);
            }
            let message = message?;
            held += message.len();
            // A converted item stays held: the body cannot convert its stored form again.
            if held <= HELD_BYTES || self.shared.is_some() {
                items.push(Item::Held(message));
            } else {
                let len = message.len();
                items.push(Item::Again {
                    key,
                    stored,
                    revision,
                    len,
                });
            }
        }
        Ok(ProtobufListBody::new(layout, cache.clone(), items))
    }
}

#[cfg(test)]
#[path = "list_protobuf_test.rs"]
mod list_protobuf_test;
