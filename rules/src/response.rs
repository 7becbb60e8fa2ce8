//! The policy's answer to one admission request ([`Response`]): the table's first row (kind, subresource,
//! operation) decided on the request, then [`decision::decide`](crate::decision) on the objects.

use serde_json::Value;

use crate::Error;
use crate::decision::{self, Row};
use crate::request::AdmissionRequest;
use crate::view::StatefulSetView;

/// The answer to an admission request, before it is encoded for Kubewarden.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// Accept the object unchanged.
    Accept(Row),
    /// Accept with this mutated object (differs from `request.object`).
    Mutate(Row, Value),
    /// Reject with this message, which names the offending field.
    Reject(String),
}

/// Decides one admission request: the first row of docs/design.md's table (any kind other than `apps/v1
/// StatefulSet`, any subresource, any operation other than CREATE/UPDATE: accept unchanged), then the
/// table on the objects; returns the mutated object only when it differs from `request.object`.
/// Never panics. `prefix` is the annotation prefix (settings `annotationPrefix`); `dryRun` does not
/// change the answer.
pub fn evaluate(request: AdmissionRequest, prefix: &str) -> Response {
    if !request.is_statefulset_main_resource() {
        let row = if request.sub_resource.as_deref().unwrap_or("").is_empty() {
            Row::NotAStatefulSet
        } else {
            Row::Subresource
        };
        return Response::Accept(row);
    }
    let update = match request.operation.as_deref() {
        Some("CREATE") => false,
        Some("UPDATE") => true,
        _ => return Response::Accept(Row::NotCreateOrUpdate),
    };
    let Some(mut object) = request.object else {
        let problem = "required for CREATE and UPDATE, got null";
        return Response::Reject(Error::field("request.object", problem).into_message());
    };
    let decision = read_and_decide(&object, update, request.old_object.as_ref(), prefix);
    match decision {
        Err(e) => Response::Reject(e.into_message()),
        Ok(d) if decision::apply(&d.change, &mut object, prefix) => Response::Mutate(d.row, object),
        Ok(d) => Response::Accept(d.row),
    }
}

/// Reads the new object, then (UPDATE) the stored one, then decides: errors in that order.
fn read_and_decide(
    object: &Value,
    update: bool,
    old_object: Option<&Value>,
    prefix: &str,
) -> Result<decision::Decision, Error> {
    let new = StatefulSetView::read(object, "request.object")?;
    let old = match (update, old_object) {
        (false, _) => None,
        (true, None) => {
            let problem = "required for UPDATE, got null";
            return Err(Error::field("request.oldObject", problem));
        }
        (true, Some(raw)) => Some(StatefulSetView::read(raw, "request.oldObject")?),
    };
    decision::decide_read(&new, old.as_ref(), prefix)
}
