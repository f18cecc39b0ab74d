//! The current request's audit record: a task-local the filter sets around the pipeline, so
//! any step of the request (authentication's result, authorization, the body reader,
//! deprecation, admission) adds to the one event without it being passed along.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::Backend;
use super::Level;
use super::Stage;
use super::event::AuthenticationMetadata;
use super::event::Event;
use super::event::EventUser;
use super::event::ObjectReference;
use super::event::ResponseStatus;
use super::policy::Policy;
use crate::auth::UserInfo;
use crate::config::Clock;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::request::RequestInfo;

tokio::task_local! {
    static CURRENT: Arc<Current>;
}

/// What recording needs, shared by every request.
pub(crate) struct Recorder {
    pub(crate) policy: Arc<Policy>,
    pub(crate) backends: Vec<Arc<dyn Backend>>,
    pub(crate) flavor: Flavor,
    pub(crate) clock: Arc<dyn Clock>,
}

impl Recorder {
    /// Hands `event` to every backend; `false` when one could not store it.
    async fn emit(&self, event: &Event) -> bool {
        let mut stored = true;
        for backend in &self.backends {
            stored &= backend.process(event).await;
        }
        stored
    }
}

/// What is known of a request before authentication: its id, arrival and origin.
pub(crate) struct Arrival {
    pub(crate) audit_id: String,
    pub(crate) received: DateTime<Utc>,
    pub(crate) request_uri: String,
    pub(crate) source_ips: Vec<String>,
    pub(crate) user_agent: String,
}

/// One request's audit state: nothing until the policy chose a level above None.
pub(crate) struct Current {
    recorder: Arc<Recorder>,
    arrival: Arrival,
    record: Mutex<Option<Record>>,
}

/// A request being recorded.
pub(crate) struct Record {
    recorder: Arc<Recorder>,
    event: Event,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
    /// A watch: ResponseStarted when the stream starts, ResponseComplete when it ends.
    pub(crate) long_running: bool,
    /// Authentication failed: one event, at ResponseStarted, as Kubernetes records it.
    pub(crate) unauthenticated: bool,
}

impl Current {
    pub(crate) fn new(recorder: Arc<Recorder>, arrival: Arrival) -> Arc<Self> {
        Arc::new(Self {
            recorder,
            arrival,
            record: Mutex::new(None),
        })
    }

    /// Runs `future` (the rest of the pipeline) with this as the current request.
    pub(crate) async fn scope<F: Future>(self: &Arc<Self>, future: F) -> F::Output {
        CURRENT.scope(self.clone(), future).await
    }

    /// The record, once the pipeline is done with it.
    pub(crate) fn take(&self) -> Option<Record> {
        self.record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn with_record(&self, f: impl FnOnce(&mut Record)) {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(record) = record.as_mut() {
            f(record);
        }
    }

    async fn receive(&self, user: &UserInfo, info: &RequestInfo) -> Result<(), ApiError> {
        let Some(record) = self.start(user, info) else {
            return Ok(());
        };
        let stored = record.emit(Stage::RequestReceived, None, None).await;
        *self.record.lock().unwrap_or_else(PoisonError::into_inner) = Some(record);
        if stored {
            Ok(())
        } else {
            Err(ApiError::Internal("failed to store audit event".into()))
        }
    }

    /// The record of a request by `user` described by `info`, or `None` at level None.
    fn start(&self, user: &UserInfo, info: &RequestInfo) -> Option<Record> {
        let decision = self.recorder.policy.decide(user, info);
        if decision.level == Level::None {
            return None;
        }
        let arrival = &self.arrival;
        let object_ref = info.is_resource_request.then(|| ObjectReference {
            resource: info.resource.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            api_group: info.api_group.clone(),
            api_version: info.api_version.clone(),
            subresource: info.subresource.clone(),
            ..ObjectReference::default()
        });
        let event = Event {
            kind: "Event",
            api_version: super::api_version(self.recorder.flavor),
            level: decision.level,
            audit_id: arrival.audit_id.clone(),
            stage: Stage::RequestReceived,
            request_uri: arrival.request_uri.clone(),
            verb: info.verb.as_str().to_owned(),
            user: event_user(user),
            impersonated_user: None,
            authentication_metadata: None,
            source_ips: arrival.source_ips.clone(),
            user_agent: arrival.user_agent.clone(),
            object_ref,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: arrival.received,
            stage_timestamp: arrival.received,
            annotations: Default::default(),
        };
        Some(Record {
            recorder: self.recorder.clone(),
            event,
            omit_stages: decision.omit_stages,
            omit_managed_fields: decision.omit_managed_fields,
            long_running: info.verb == crate::request::Verb::Watch,
            unauthenticated: false,
        })
    }
}

impl Record {
    /// The level the policy chose.
    pub(crate) fn level(&self) -> Level {
        self.event.level
    }

    /// Writes the event of `stage` with `status` and, at RequestResponse, `response` (unless
    /// the policy omits the stage); `false` when a backend could not store it.
    pub(crate) async fn emit(
        &self,
        stage: Stage,
        status: Option<ResponseStatus>,
        response: Option<Value>,
    ) -> bool {
        if self.omit_stages.contains(&stage) {
            return true;
        }
        let mut event = self.event.clone();
        event.stage = stage;
        event.stage_timestamp = self.recorder.clock.now();
        event.response_status = status;
        if self.event.level >= Level::RequestResponse && stage == Stage::ResponseComplete {
            event.response_object = response.map(|r| self.without_managed_fields(r));
        }
        self.recorder.emit(&event).await
    }

    fn without_managed_fields(&self, mut object: Value) -> Value {
        if self.omit_managed_fields {
            strip_managed_fields(&mut object);
        }
        object
    }
}

/// The `managedFields` of an object, or of every item of a list, removed.
fn strip_managed_fields(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
    }
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(strip_managed_fields);
    }
}

fn event_user(user: &UserInfo) -> EventUser {
    EventUser {
        username: user.name.clone(),
        uid: user.uid.clone(),
        groups: user.groups.clone(),
        extra: user.extra.clone(),
    }
}

/// Chooses the current request's level for `user` and `info` and records RequestReceived;
/// a 500 when a backend must store it and cannot. Outside an audited request, nothing.
pub(crate) async fn received(user: &UserInfo, info: &RequestInfo) -> Result<(), ApiError> {
    match CURRENT.try_with(Arc::clone) {
        Ok(current) => current.receive(user, info).await,
        Err(_) => Ok(()),
    }
}

/// Records a request that failed authentication, by nobody: the policy decides on it without a
/// user, and its one event is written at ResponseStarted with the 401.
pub(crate) fn unauthenticated(info: &RequestInfo) {
    let _ = CURRENT.try_with(|current| {
        if let Some(mut record) = current.start(&UserInfo::default(), info) {
            record.unauthenticated = true;
            *current
                .record
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(record);
        }
    });
}

/// Notes the authorizers' outcome: `authorization.<domain>/decision` (`allow` or `forbid`)
/// and, for a refusal, `authorization.<domain>/reason`.
pub(crate) fn authorization(outcome: &Result<(), ApiError>) {
    let _ = CURRENT.try_with(|current| {
        let domain = current.recorder.flavor.group_domain();
        let (decision, reason) = match outcome {
            Ok(()) => ("allow", None),
            Err(ApiError::Forbidden { reason, .. }) => ("forbid", Some(reason.clone())),
            Err(_) => return,
        };
        current.with_record(|record| {
            let annotations = &mut record.event.annotations;
            annotations.insert(
                format!("authorization.{domain}/decision"),
                decision.to_owned(),
            );
            if let Some(reason) = reason.filter(|r| !r.is_empty()) {
                annotations.insert(format!("authorization.{domain}/reason"), reason);
            }
        });
    });
}

/// Records the request body: a JSON object completes the object reference (name, namespace,
/// uid, resourceVersion where the path left them out) and, at Request level and above, is the
/// event's `requestObject`. Other bodies (Protobuf, YAML) are skipped.
pub(crate) fn request_body(body: &[u8]) {
    let _ = CURRENT.try_with(|current| {
        current.with_record(|record| {
            let Ok(object @ Value::Object(_)) = serde_json::from_slice::<Value>(body) else {
                return;
            };
            if let Some(reference) = record.event.object_ref.as_mut() {
                let metadata = object.get("metadata");
                let field = |name: &str| {
                    metadata
                        .and_then(|m| m.get(name))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                for (slot, name) in [
                    (&mut reference.namespace, "namespace"),
                    (&mut reference.name, "name"),
                    (&mut reference.uid, "uid"),
                    (&mut reference.resource_version, "resourceVersion"),
                ] {
                    if slot.is_empty() {
                        *slot = field(name);
                    }
                }
            }
            if record.event.level >= Level::Request {
                record.event.request_object = Some(record.without_managed_fields(object));
            }
        });
    });
}

/// Adds `key: value` to the current request's audit event (a key already set keeps its first
/// value, as Kubernetes keeps it). Outside an audited request, nothing.
pub fn annotate(key: &str, value: &str) {
    let _ = CURRENT.try_with(|current| {
        current.with_record(|record| {
            record
                .event
                .annotations
                .entry(key.to_owned())
                .or_insert_with(|| value.to_owned());
        });
    });
}

/// Names the user the current request acts as (`impersonatedUser`) and, for a constrained
/// impersonation, the verb that allowed it (`authenticationMetadata.impersonationConstraint`);
/// the impersonation step calls it once it has checked the request may impersonate `user`.
pub fn impersonated(user: &UserInfo, constraint: Option<&str>) {
    let _ = CURRENT.try_with(|current| {
        current.with_record(|record| {
            record.event.impersonated_user = Some(event_user(user));
            record.event.authentication_metadata =
                constraint.map(|constraint| AuthenticationMetadata {
                    impersonation_constraint: constraint.to_owned(),
                });
        });
    });
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;
    use crate::config::SystemClock;
    use crate::request::QueryParams;

    #[derive(Default)]
    struct Kept(Mutex<Vec<Event>>);

    #[async_trait::async_trait]
    impl Backend for Kept {
        async fn process(&self, event: &Event) -> bool {
            self.0.lock().expect("lock").push(event.clone());
            true
        }
    }

    #[tokio::test]
    async fn later_steps_annotate_the_current_event_and_name_the_impersonated_user() {
        let kept = Arc::new(Kept::default());
        let text = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n";
        let recorder = Arc::new(Recorder {
            policy: Arc::new(Policy::parse(text, Flavor::Kubernetes).expect("policy")),
            backends: vec![kept.clone()],
            flavor: Flavor::Kubernetes,
            clock: Arc::new(SystemClock),
        });
        let arrival = Arrival {
            audit_id: "id".into(),
            received: Utc::now(),
            request_uri: "/apis/batch/v1beta1/cronjobs".into(),
            source_ips: Vec::new(),
            user_agent: String::new(),
        };
        let current = Current::new(recorder, arrival);
        let info = RequestInfo::parse(
            &Method::GET,
            "/apis/batch/v1beta1/cronjobs",
            &QueryParams::parse(None),
        );
        let user = UserInfo {
            name: "alice".into(),
            ..UserInfo::default()
        };
        // Outside a request, nothing happens.
        annotate("k8s.io/deprecated", "true");
        current
            .scope(async {
                received(&user, &info).await.expect("stored");
                annotate("k8s.io/deprecated", "true");
                annotate("k8s.io/removed-release", "1.25");
                annotate("k8s.io/deprecated", "false");
                impersonated(
                    &UserInfo {
                        name: "bob".into(),
                        groups: vec!["dev".into()],
                        ..UserInfo::default()
                    },
                    Some("impersonate:user-info"),
                );
            })
            .await;
        let record = current.take().expect("recorded");
        assert!(record.emit(Stage::ResponseComplete, None, None).await);
        let events = kept.0.lock().expect("lock").clone();
        assert_eq!(events.len(), 2);
        assert!(events[0].annotations.is_empty());
        let complete = &events[1];
        assert_eq!(complete.annotations["k8s.io/deprecated"], "true");
        assert_eq!(complete.annotations["k8s.io/removed-release"], "1.25");
        let impersonated = complete.impersonated_user.as_ref().expect("impersonated");
        assert_eq!(impersonated.username, "bob");
        assert_eq!(complete.user.username, "alice");
        let metadata = complete.authentication_metadata.as_ref().expect("metadata");
        assert_eq!(metadata.impersonation_constraint, "impersonate:user-info");
    }

    #[test]
    fn managed_fields_are_stripped_from_objects_and_list_items() {
        let mut list = serde_json::json!({
            "metadata": {"managedFields": [1], "name": "l"},
            "items": [{"metadata": {"name": "a", "managedFields": [2]}}],
        });
        strip_managed_fields(&mut list);
        assert_eq!(
            list,
            serde_json::json!({"metadata": {"name": "l"}, "items": [{"metadata": {"name": "a"}}]})
        );
    }
}
