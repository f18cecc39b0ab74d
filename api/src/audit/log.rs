//! The log backend (`--audit-log-path`): one line per event, JSON (`--audit-log-format=json`,
//! the default) or kube-apiserver's `legacy` text line, to standard output (`-`) or a
//! rotated file. Writes happen in the request, as kube-apiserver's default `blocking` log
//! mode does, and a failed write is logged, not a failed request (as in that mode).

use std::io;
use std::io::Write;
use std::path::Path;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::PoisonError;

use super::Backend;
use super::Event;
use super::event::format_micro_time;
use super::rotate::RotatingFile;
use super::rotate::Rotation;

/// How events are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// One `Event` object per line.
    #[default]
    Json,
    /// Kubernetes' legacy one-line text form.
    Legacy,
}

/// A `--audit-log-format` that names no format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown audit log format {0:?} (expected \"json\" or \"legacy\")")]
pub struct UnknownLogFormat(pub String);

impl FromStr for LogFormat {
    type Err = UnknownLogFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Self::Json),
            "legacy" => Ok(Self::Legacy),
            other => Err(UnknownLogFormat(other.to_owned())),
        }
    }
}

/// Writes events as lines.
pub struct LogBackend {
    out: Mutex<Box<dyn Write + Send>>,
    format: LogFormat,
}

impl LogBackend {
    /// Events to standard output (`--audit-log-path=-`).
    pub fn stdout(format: LogFormat) -> Self {
        Self {
            out: Mutex::new(Box::new(io::stdout())),
            format,
        }
    }

    /// Events to the file at `path`, rotated by `rotation`; fails if it cannot be opened.
    pub fn file(path: &Path, rotation: Rotation, format: LogFormat) -> io::Result<Self> {
        Ok(Self {
            out: Mutex::new(Box::new(RotatingFile::open(path, rotation)?)),
            format,
        })
    }

    fn line(&self, event: &Event) -> Vec<u8> {
        let mut line = match self.format {
            LogFormat::Json => serde_json::to_vec(event).unwrap_or_default(),
            LogFormat::Legacy => legacy(event).into_bytes(),
        };
        line.push(b'\n');
        line
    }
}

#[async_trait::async_trait]
impl Backend for LogBackend {
    async fn process(&self, event: &Event) -> bool {
        let line = self.line(event);
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = out.write_all(&line).and_then(|()| out.flush()) {
            tracing::error!(%error, audit_id = %event.audit_id, "writing the audit log failed");
        }
        true
    }
}

/// The legacy line: `<time> AUDIT: id="..." stage="..." ip="..." method="..." user="..."
/// groups="..." as="..." asgroups="..." user-agent="..." namespace="..." uri="..."
/// response="..."`.
fn legacy(event: &Event) -> String {
    let or = |text: &str, none: &str| {
        if text.is_empty() {
            none.to_owned()
        } else {
            text.to_owned()
        }
    };
    let quoted_list = |groups: &[String]| {
        let list: Vec<String> = groups.iter().map(|g| format!("{g:?}")).collect();
        or(&list.join(","), "<none>")
    };
    let (as_user, as_groups) = match &event.impersonated_user {
        Some(user) => (or(&user.username, "<none>"), quoted_list(&user.groups)),
        None => ("<self>".to_owned(), "<lookup>".to_owned()),
    };
    let namespace = event
        .object_ref
        .as_ref()
        .map(|r| r.namespace.as_str())
        .unwrap_or_default();
    let response = event
        .response_status
        .as_ref()
        .map(|s| s.code.to_string())
        .unwrap_or_else(|| "<deferred>".to_owned());
    format!(
        "{} AUDIT: id={:?} stage={:?} ip={:?} method={:?} user={:?} groups={:?} as={:?} \
         asgroups={:?} user-agent={:?} namespace={:?} uri={:?} response=\"{}\"",
        format_micro_time(&event.request_received_timestamp),
        event.audit_id,
        event.stage.as_str(),
        or(
            event
                .source_ips
                .first()
                .map(String::as_str)
                .unwrap_or_default(),
            "<unknown>"
        ),
        event.verb,
        or(&event.user.username, "<none>"),
        quoted_list(&event.user.groups),
        as_user,
        as_groups,
        event.user_agent,
        or(namespace, "<none>"),
        event.request_uri,
        response,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::tests::sample;

    #[test]
    fn lines_are_json_or_kubernetes_legacy_text() {
        let event = sample("id-1", 1);
        let json = LogBackend::stdout(LogFormat::Json).line(&event);
        assert_eq!(json.last(), Some(&b'\n'));
        let back: serde_json::Value = serde_json::from_slice(&json).expect("json");
        assert_eq!(back["auditID"], "id-1");
        let legacy =
            String::from_utf8(LogBackend::stdout(LogFormat::Legacy).line(&event)).expect("text");
        assert_eq!(
            legacy,
            "2026-11-26T01:02:03.456789Z AUDIT: id=\"id-1\" stage=\"ResponseComplete\" \
             ip=\"10.0.0.1\" method=\"create\" user=\"alice\" groups=\"\\\"system:authenticated\\\"\" \
             as=\"<self>\" asgroups=\"<lookup>\" user-agent=\"\" namespace=\"default\" \
             uri=\"/api/v1/namespaces/default/configmaps\" response=\"201\"\n"
        );
        assert_eq!(
            "xml".parse::<LogFormat>(),
            Err(UnknownLogFormat("xml".into()))
        );
    }
}
