//! The parameters of the operations, as Kubernetes documents them: the path parameters
//! (`name`, `namespace`), `pretty`, and the query parameters of each verb. kubectl reads these:
//! it sends `fieldValidation` and `dryRun` only when the PATCH operation of the kind lists them
//! (cli-runtime `query_param_verifier_v3.go`).

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A segment of the path (`{name}`): always required.
    Path,
    /// A query parameter.
    Query,
}

/// The type of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    /// A string.
    String,
    /// An integer.
    Integer,
    /// A boolean.
    Boolean,
}

impl ParamType {
    /// The OpenAPI type name.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
        }
    }
}

/// One parameter of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The name.
    pub name: &'static str,
    /// Path or query.
    pub location: Location,
    /// The value's type.
    pub ty: ParamType,
    /// What it does.
    pub description: &'static str,
}

const fn query(name: &'static str, ty: ParamType, description: &'static str) -> Param {
    Param {
        name,
        location: Location::Query,
        ty,
        description,
    }
}

/// `{name}` of an item path.
pub const NAME: Param = Param {
    name: "name",
    location: Location::Path,
    ty: ParamType::String,
    description: "name of the resource",
};

/// `{namespace}` of a namespaced path.
pub const NAMESPACE: Param = Param {
    name: "namespace",
    location: Location::Path,
    ty: ParamType::String,
    description: "object name and auth scope, such as for teams and projects",
};

/// `pretty`, accepted on every path.
pub const PRETTY: Param = query(
    "pretty",
    ParamType::String,
    "If 'true', then the output is pretty printed.",
);

const DRY_RUN: Param = query(
    "dryRun",
    ParamType::String,
    "When present, indicates that modifications should not be persisted. An invalid or \
     unrecognized dryRun directive will result in an error response and no further processing \
     of the request. Valid values are: - All: all dry run stages will be processed",
);

const FIELD_MANAGER: Param = query(
    "fieldManager",
    ParamType::String,
    "fieldManager is a name associated with the actor or entity that is making these changes.",
);

const FIELD_VALIDATION: Param = query(
    "fieldValidation",
    ParamType::String,
    "fieldValidation instructs the server on how to handle objects in the request \
     (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: \
     silently drop unknown fields and keep the last of duplicates - Warn: send a warning for \
     each unknown or duplicate field - Strict: fail the request on the first unknown or \
     duplicate field",
);

const FORCE: Param = query(
    "force",
    ParamType::Boolean,
    "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting \
     fields owned by other people. Force flag must be unset for non-apply patch requests.",
);

const ALLOW_WATCH_BOOKMARKS: Param = query(
    "allowWatchBookmarks",
    ParamType::Boolean,
    "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not \
     implement bookmarks may ignore this flag.",
);

const CONTINUE: Param = query(
    "continue",
    ParamType::String,
    "The continue option should be set when retrieving more results from the server. The \
     value is the continue field of the previous list response's metadata.",
);

const FIELD_SELECTOR: Param = query(
    "fieldSelector",
    ParamType::String,
    "A selector to restrict the list of returned objects by their fields. Defaults to \
     everything.",
);

const LABEL_SELECTOR: Param = query(
    "labelSelector",
    ParamType::String,
    "A selector to restrict the list of returned objects by their labels. Defaults to \
     everything.",
);

const LIMIT: Param = query(
    "limit",
    ParamType::Integer,
    "limit is a maximum number of responses to return for a list call. If more items exist, \
     the server will set the `continue` field on the list metadata.",
);

const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    ParamType::String,
    "resourceVersion sets a constraint on what resource versions a request may be served \
     from. Defaults to unset",
);

const RESOURCE_VERSION_MATCH: Param = query(
    "resourceVersionMatch",
    ParamType::String,
    "resourceVersionMatch determines how resourceVersion is applied to list calls. Defaults \
     to unset",
);

const SEND_INITIAL_EVENTS: Param = query(
    "sendInitialEvents",
    ParamType::Boolean,
    "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch \
     stream will begin with synthetic events to produce the current state of objects in the \
     collection.",
);

const TIMEOUT_SECONDS: Param = query(
    "timeoutSeconds",
    ParamType::Integer,
    "Timeout for the list/watch call. This limits the duration of the call, regardless of any \
     activity or inactivity.",
);

const WATCH: Param = query(
    "watch",
    ParamType::Boolean,
    "Watch for changes to the described resources and return them as a stream of add, update, \
     and remove notifications. Specify resourceVersion.",
);

const GRACE_PERIOD_SECONDS: Param = query(
    "gracePeriodSeconds",
    ParamType::Integer,
    "The duration in seconds before the object should be deleted. Value must be non-negative \
     integer. The value zero indicates delete immediately.",
);

const ORPHAN_DEPENDENTS: Param = query(
    "orphanDependents",
    ParamType::Boolean,
    "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. \
     Should the dependent objects be orphaned.",
);

const PROPAGATION_POLICY: Param = query(
    "propagationPolicy",
    ParamType::String,
    "Whether and how garbage collection will be performed. Acceptable values are: \
     'Orphan', 'Background' and 'Foreground'.",
);

/// The query parameters of list (and watch through `?watch`).
pub const LIST: &[Param] = &[
    ALLOW_WATCH_BOOKMARKS,
    CONTINUE,
    FIELD_SELECTOR,
    LABEL_SELECTOR,
    LIMIT,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
    WATCH,
];

/// The query parameters of create and replace.
pub const WRITE: &[Param] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];

/// The query parameters of patch.
pub const PATCH: &[Param] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE];

/// The query parameters of delete.
pub const DELETE: &[Param] = &[
    DRY_RUN,
    GRACE_PERIOD_SECONDS,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
];

/// The query parameters of deletecollection.
pub const DELETE_COLLECTION: &[Param] = &[
    CONTINUE,
    DRY_RUN,
    FIELD_SELECTOR,
    GRACE_PERIOD_SECONDS,
    LABEL_SELECTOR,
    LIMIT,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
];
