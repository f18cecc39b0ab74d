//! `AlwaysAdmit` and `AlwaysDeny`: Kubernetes' deprecated plugins that let every write pass
//! or refuse every write (tests of an admission chain use them).

use serde_json::Value;

use crate::admission::Attributes;
use crate::admission::Notes;
use crate::admission::Plugin;
use crate::error::ApiError;

/// Lets every write pass.
pub struct AlwaysAdmit;

impl Plugin for AlwaysAdmit {}

/// Refuses every write, in both phases.
pub struct AlwaysDeny;

const DENIED: &str = "admission control is denying all modifications";

#[async_trait::async_trait]
impl Plugin for AlwaysDeny {
    async fn admit(
        &self,
        attributes: &Attributes<'_>,
        _object: Option<&mut Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        Err(attributes.forbidden(DENIED))
    }

    async fn validate(
        &self,
        attributes: &Attributes<'_>,
        _object: Option<&Value>,
        _old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        Err(attributes.forbidden(DENIED))
    }
}
