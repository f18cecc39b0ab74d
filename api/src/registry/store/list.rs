//! Listing: one page of a collection read from storage in chunks at one revision, filtered
//! by selectors, and the `<Kind>List` written from the stored bytes (spec 000 "Pagination").

use bytes::Bytes;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Store;
use super::corrupt;
use super::list_body::BodyItem;
use super::list_body::ListBody;
use crate::error::ApiError;
use crate::registry::CorruptObjects;
use crate::registry::ObjectKey;
use crate::registry::StoredJson;
use crate::request::ContinueToken;
use crate::request::ListOptions;
use crate::request::ListRead;
use crate::request::Selectors;
use crate::storage::ListPage;
use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

/// The most objects a selective list reads from storage at once (Kubernetes' etcd store
/// doubles its reads up to this many).
const MAX_CHUNK: usize = 10_000;

/// The objects a list without `limit` reads from storage at once: the store is held for
/// no longer than copying this many handles takes.
const WHOLE_CHUNK: usize = 1_000;

/// The next chunk of a list after `after`: `chunk` objects (0: all) and a count of the rest
/// for a page (`Some`), or [`WHOLE_CHUNK`] of them and whether more follow for a list without
/// `limit` (`None`), which thus never reads the whole collection at once.
async fn read_chunk(
    storage: &dyn Storage,
    prefix: &str,
    after: Option<&str>,
    chunk: Option<usize>,
    consistency: ReadConsistency,
) -> Result<ListPage, StorageError> {
    let Some(chunk) = chunk else {
        let whole = (storage.list_chunk(prefix, after, WHOLE_CHUNK, consistency)).await?;
        return Ok(ListPage {
            items: whole.items,
            revision: whole.revision,
            remaining: u64::from(whole.more),
        });
    };
    storage.list(prefix, after, chunk, consistency).await
}

/// A listed object: key, stored form, revision of its last change.
type Listed = (String, StoredJson, Revision);

/// One page of a list, ready to be written.
pub(super) struct Page {
    /// The selected objects, in key order.
    pub(super) items: Vec<Listed>,
    /// The revision the list was served at.
    pub(super) revision: Revision,
    /// The token of the next page, when keys remain.
    pub(super) next: Option<String>,
    /// How many objects remain after this page, when known (no selectors).
    pub(super) remaining: Option<u64>,
}

impl Store {
    /// `selectors` for this kind: 400 for a field its field selectors cannot name.
    pub fn selectors(&self, selectors: Selectors) -> Result<Selectors, ApiError> {
        selectors.for_kind(self.strategy.field_labels())
    }

    /// A failed list read: a compacted revision is Kubernetes' 410 for lists, or for a
    /// continued list (`token_key`: where its token continued) the 410 that offers a token
    /// continuing after the same key at the newest revision.
    pub(super) fn list_error(
        &self,
        e: StorageError,
        prefix: &str,
        token_key: Option<&str>,
    ) -> ApiError {
        match (e, token_key) {
            (StorageError::Compacted { .. }, Some(key)) => ApiError::ContinueExpired {
                fresh_continue: ContinueToken::encode(key, prefix, None),
            },
            (StorageError::Compacted { .. }, None) => ApiError::ListExpired,
            (e, _) => self.storage_error(e, ""),
        }
    }

    /// `item` if `selectors` select it; nothing is parsed without selectors, nor when the
    /// namespace and name in its key decide them (`fieldSelector=metadata.name=...`, which
    /// controllers and kubelets list with).
    pub(super) fn selected(
        &self,
        item: StoredObject,
        selectors: &Selectors,
    ) -> Result<Option<Listed>, ApiError> {
        let stored = StoredJson::from_stored(item.value).map_err(|e| corrupt(&item.key, e))?;
        let decided = match selectors.is_empty() {
            true => Some(true),
            false => ObjectKey::parse(&item.key)
                .and_then(|key| selectors.matches_identity(key.namespace, key.name)),
        };
        if decided == Some(false) {
            return Ok(None);
        }
        if decided.is_none() {
            let obj = stored.to_value().map_err(|e| corrupt(&item.key, e))?;
            if !selectors.matches(&obj) {
                return Ok(None);
            }
        }
        Ok(Some((item.key, stored, item.mod_revision)))
    }

    /// One page of the objects under `prefix` that `selectors` select, read as `read` says,
    /// at most `limit` of them (R-RES-182). Objects that cannot be read fail the page with
    /// [`ApiError::Corrupt`] naming every one met (up to the reporting limit). Storage is read in chunks until the page is full
    /// or the collection ends; every chunk after the first is read Exact at the revision the
    /// first was served at, so the page is one snapshot. When keys remain after the last one
    /// examined, the page carries the token continuing after it at that revision (R-RES-167).
    pub(super) async fn select(
        &self,
        storage: &dyn Storage,
        prefix: &str,
        selectors: &Selectors,
        read: ListRead,
        limit: Option<usize>,
    ) -> Result<Page, ApiError> {
        let token_key = read.after_key.clone();
        let mut consistency = read.consistency;
        let mut after = read.after_key;
        let mut chunk = limit.unwrap_or(0);
        let mut items = Vec::new();
        let mut corrupt: Option<CorruptObjects> = None;
        loop {
            let page = read_chunk(
                storage,
                prefix,
                after.as_deref(),
                limit.map(|_| chunk),
                consistency,
            )
            .await
            .map_err(|e| self.list_error(e, prefix, token_key.as_deref()))?;
            consistency = ReadConsistency::Exact(page.revision);
            let mut unexamined = 0;
            let mut chunk_items = page.items.into_iter();
            while let Some(item) = chunk_items.next() {
                if limit.is_some_and(|n| items.len() >= n) {
                    unexamined = 1 + chunk_items.len() as u64;
                    break;
                }
                after = Some(item.key.clone());
                match self.selected(item, selectors) {
                    Ok(selected) => items.extend(selected),
                    // Every unreadable object is reported, never left out (KEP-3926).
                    Err(ApiError::Corrupt(met)) => match &mut corrupt {
                        Some(all) => all.extend(met),
                        None => corrupt = Some(met),
                    },
                    Err(e) => return Err(e),
                }
                if corrupt.as_ref().is_some_and(|c| c.truncated) {
                    break;
                }
            }
            if let Some(corrupt) = corrupt.take_if(|c| c.truncated) {
                return Err(ApiError::Corrupt(corrupt));
            }
            let remaining = page.remaining + unexamined;
            if remaining == 0 || limit.is_some_and(|n| items.len() >= n) {
                if let Some(corrupt) = corrupt {
                    return Err(ApiError::Corrupt(corrupt));
                }
                let next = after
                    .filter(|_| remaining > 0)
                    .map(|key| ContinueToken::encode(&key, prefix, Some(page.revision)));
                // Kubernetes counts what remains only when nothing is filtered out.
                let remaining = (next.is_some() && selectors.is_empty()).then_some(remaining);
                return Ok(Page {
                    items,
                    revision: page.revision,
                    next,
                    remaining,
                });
            }
            // Selectors dropped items: read on, in growing chunks as Kubernetes' etcd store.
            chunk = chunk.saturating_mul(2).min(MAX_CHUNK).max(chunk);
        }
    }

    /// A `<Kind>List` of `page`, assembled from the stored bytes: `metadata.resourceVersion`
    /// is the revision served (R-RES-033); `continue` and `remainingItemCount` are present
    /// only when more items remain (R-RES-034..036).
    /// Items stored in another version than the one served come `converted`
    /// ([`Store::converted_items`]).
    pub(super) fn list_body(
        &self,
        page: &Page,
        converted: Vec<Option<Bytes>>,
    ) -> Result<Vec<u8>, ApiError> {
        let size: usize = page.items.iter().map(|(_, s, _)| s.json.len() + 32).sum();
        let mut out = Vec::with_capacity(size + 128);
        let head = self.list_head(page).to_string();
        // `head` is `{...}`: reopen it to append the items.
        out.extend_from_slice(&head.as_bytes()[..head.len() - 1]);
        out.extend_from_slice(b",\"items\":[");
        for (i, (_, stored, item_revision)) in page.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match converted.get(i).and_then(Option::as_ref) {
                Some(item) => out.extend_from_slice(item),
                None => stored.write_with_resource_version(*item_revision, &mut out),
            }
        }
        out.extend_from_slice(b"]}");
        Ok(out)
    }

    /// The `<Kind>List` of `page` without its items: kind, apiVersion and list metadata.
    pub(super) fn list_head(&self, page: &Page) -> Value {
        let mut metadata = Map::new();
        metadata.insert(
            "resourceVersion".to_owned(),
            page.revision.to_string().into(),
        );
        if let Some(next) = &page.next {
            metadata.insert("continue".to_owned(), next.clone().into());
        }
        if let Some(remaining) = page.remaining {
            metadata.insert("remainingItemCount".to_owned(), remaining.into());
        }
        json!({
            "kind": self.resource.list_kind,
            "apiVersion": self.resource.api_version(),
            "metadata": metadata,
        })
    }

    /// The page of the objects in `namespace` (`None`: all namespaces) that the options'
    /// selectors select, read with the consistency, page size and continue token they ask for
    /// (spec 000 "Resource version semantics" and "Pagination"). 400 for a field the kind's
    /// selectors cannot name or a bad token; 410 when the revision asked for (or the token's)
    /// has been compacted; 504 when it is not reached in time.
    pub(super) async fn page(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Page, ApiError> {
        let selectors = self.selectors(options.selectors.clone())?;
        let prefix = self.resource.collection_key(namespace);
        let read = ListRead::resolve(options, &prefix)?;
        self.select(storage, &prefix, &selectors, read, options.limit)
            .await
    }

    /// The `<Kind>List` of the page the options ask for (see [`Self::page`]).
    pub async fn list(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<u8>, ApiError> {
        let page = self.page(storage, namespace, options).await?;
        let converted = self.converted_items(&page.items).await?;
        self.list_body(&page, converted)
    }

    /// The `<Kind>List` of the page the options ask for (see [`Self::page`]) as a body
    /// written while it is sent: every error comes before its first byte, and its items stay
    /// the stored bytes until their frame is written.
    pub async fn list_streamed(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListBody, ApiError> {
        let page = self.page(storage, namespace, options).await?;
        let head = self.list_head(&page).to_string();
        let converted = self.converted_items(&page.items).await?;
        let items = (page.items.into_iter().zip(converted))
            .map(|((_, stored, revision), converted)| match converted {
                Some(encoded) => BodyItem::Encoded(encoded),
                None => BodyItem::Stored(stored, revision),
            })
            .collect();
        Ok(ListBody::new(head.as_bytes(), items))
    }
}
