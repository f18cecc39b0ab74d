//! Tests of a webhook call's answer: a denial keeps the webhook's reason, details and code.

use serde_json::json;

use super::*;

fn hook() -> Webhook {
    Webhook::parse("c", 0, &json!({"name": "deny.example.com"}))
}

// A refusal keeps the webhook's reason, details and code (Kubernetes' `ToStatusErr`), the
// message prefixed with who denied.
#[test]
fn a_refusal_keeps_the_webhooks_status() {
    let status = json!({"code": 409, "reason": "AlreadyExists", "message": "taken",
        "details": {"name": "x", "causes": [{"message": "taken"}]}});
    let answer = denied(&hook(), Some(&status)).status();
    assert_eq!(
        answer,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "admission webhook \"deny.example.com\" denied the request: taken",
            "reason": "AlreadyExists",
            "details": {"name": "x", "causes": [{"message": "taken"}]}, "code": 409})
    );
}

// No status: 403 without explanation; a code below 400 is 403; a reason alone is the message.
#[test]
fn a_refusal_without_a_status_is_a_bare_403() {
    let bare = denied(&hook(), None).status();
    assert_eq!(bare["code"], 403);
    assert_eq!(
        bare["message"],
        "admission webhook \"deny.example.com\" denied the request without explanation"
    );
    assert!(bare.get("reason").is_none() && bare.get("details").is_none());
    let low = denied(&hook(), Some(&json!({"code": 200, "reason": "NotAllowed"}))).status();
    assert_eq!(low["code"], 403);
    assert_eq!(low["reason"], "NotAllowed");
    assert_eq!(
        low["message"],
        "admission webhook \"deny.example.com\" denied the request: NotAllowed"
    );
}
