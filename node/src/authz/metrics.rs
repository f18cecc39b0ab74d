//! Kubernetes' authorization metrics: the decisions of the configured modes
//! (`apiserver_authorization_decisions_total`), the webhooks' calls
//! (`apiserver_authorization_webhook_evaluations_total`, `..._duration_seconds`) and the
//! reloads of `--authorization-config` (the authentication configuration's reload metrics
//! under the authorization names).

use apiary_api::metrics::Descriptor;
use apiary_api::metrics::Metrics;
use apiary_api::metrics::Stability;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

use crate::config_reload::ReloadMetrics;

const DECISIONS: Descriptor = Descriptor {
    name: "apiserver_authorization_decisions",
    help: "Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const EVALUATIONS: Descriptor = Descriptor {
    name: "apiserver_authorization_webhook_evaluations",
    help: "Round-trips to authorization webhooks.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const DURATION: Descriptor = Descriptor {
    name: "apiserver_authorization_webhook_duration_seconds",
    help: "Request latency in seconds.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const RELOADS: Descriptor = Descriptor {
    name: "apiserver_authorization_config_controller_automatic_reloads",
    help: "Total number of automatic reloads of authorization configuration split by status and apiserver identity.",
    stability: Stability::Alpha,
    deprecated_since: None,
};
const LAST_RELOAD: Descriptor = Descriptor {
    name: "apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds",
    help: "Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.",
    stability: Stability::Alpha,
    deprecated_since: None,
};

/// The webhook latency buckets (Prometheus' defaults, as Kubernetes uses them here).
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    r#type: &'static str,
    name: String,
    decision: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    name: String,
    result: &'static str,
}

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The terminal decisions of the configured modes.
#[derive(Clone, Default)]
pub struct DecisionMetrics {
    decisions: Family<DecisionLabels, Counter>,
}

impl DecisionMetrics {
    /// Counts an `allowed` or `denied` decision of the mode of type `kind` named `name`.
    pub fn record(&self, kind: &'static str, name: &str, allowed: bool) {
        let labels = DecisionLabels {
            r#type: kind,
            name: name.to_owned(),
            decision: if allowed { "allowed" } else { "denied" },
        };
        self.decisions.get_or_create(&labels).inc();
    }
}

/// The calls of the webhooks.
#[derive(Clone)]
pub struct WebhookMetrics {
    evaluations: Family<WebhookLabels, Counter>,
    duration: Family<WebhookLabels, Histogram, fn() -> Histogram>,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        Self {
            evaluations: Family::default(),
            duration: Family::new_with_constructor(histogram),
        }
    }
}

impl WebhookMetrics {
    /// Counts a call of webhook `name` that ended in `result` (`success`, `timeout`, `error`)
    /// after `seconds`.
    pub fn record(&self, name: &str, result: &'static str, seconds: f64) {
        let labels = WebhookLabels {
            name: name.to_owned(),
            result,
        };
        self.evaluations.get_or_create(&labels).inc();
        self.duration.get_or_create(&labels).observe(seconds);
    }
}

/// Every authorization metric of one replica, registered once and shared by every chain
/// built from the configuration.
#[derive(Clone)]
pub struct AuthzMetrics {
    /// The modes' decisions.
    pub decisions: DecisionMetrics,
    /// The webhooks' calls.
    pub webhooks: WebhookMetrics,
    /// The reloads of the configuration file.
    pub reloads: ReloadMetrics,
}

impl AuthzMetrics {
    /// Registers the authorization metrics of `replica` in `metrics`.
    pub fn register(metrics: &Metrics, replica: &str) -> Self {
        let this = Self {
            decisions: DecisionMetrics::default(),
            webhooks: WebhookMetrics::default(),
            reloads: ReloadMetrics::register_as(metrics, replica, &RELOADS, &LAST_RELOAD),
        };
        metrics.register(&DECISIONS, this.decisions.decisions.clone());
        metrics.register(&EVALUATIONS, this.webhooks.evaluations.clone());
        metrics.register(&DURATION, this.webhooks.duration.clone());
        this
    }
}
