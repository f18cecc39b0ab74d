//! Protobuf watch streams: each event a length-prefixed `WatchEvent` frame whose object is
//! the enveloped object (or its metadata-only view), as Kubernetes streams them.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::EncodingCache;
use super::encode_object_with;
use super::watch_frame;
use crate::codec::EventEncoder;
use crate::codec::Output;
use crate::codec::View;
use crate::codec::is_status;
use crate::codec::metadata;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// The encoder of one Protobuf watch.
pub struct ProtobufEvents {
    output: Output,
    flavor: Flavor,
    cache: Arc<EncodingCache>,
}

impl ProtobufEvents {
    /// The encoder of a watch negotiated to `output` (a Protobuf output) in `flavor`,
    /// through the replica's `cache`.
    pub fn new(output: Output, flavor: Flavor, cache: Arc<EncodingCache>) -> Self {
        Self {
            output,
            flavor,
            cache,
        }
    }
}

impl EventEncoder for ProtobufEvents {
    fn content_type(&self) -> String {
        format!(
            "{};stream=watch",
            self.output.content_type(self.flavor, false)
        )
    }

    fn event(&mut self, kind: &str, object: Value) -> Result<Bytes, ApiError> {
        let object = match self.output.view {
            View::Metadata(version) if !is_status(&object) => {
                metadata::partial(object, version, self.flavor)
            }
            _ => object,
        };
        let enveloped = encode_object_with(self.flavor, &object, &self.cache)?;
        Ok(Bytes::from(watch_frame(kind, &enveloped)))
    }
}
