//! Kubernetes' list, map and patch markers of the built-in types (`+listType`,
//! `+listMapKey`, `+mapType`, `+patchStrategy`, `+patchMergeKey` on upstream's Go types), as
//! data: k8s-openapi's schemas do not carry them (DESIGN §8). The OpenAPI documents put them
//! on schema properties as `x-kubernetes-*` keys, and strategic merge patch follows them.

mod table;
#[cfg(test)]
mod table_tests;

/// How a list is merged by server-side apply and described to clients
/// (`x-kubernetes-list-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// The list is replaced whole.
    Atomic,
    /// Scalar items, each present at most once.
    Set,
    /// Object items identified by the values of these keys (`x-kubernetes-list-map-keys`).
    Map(&'static [&'static str]),
}

impl ListType {
    /// The `x-kubernetes-list-type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Atomic => "atomic",
            Self::Set => "set",
            Self::Map(_) => "map",
        }
    }

    /// The `x-kubernetes-list-map-keys` of a map list (empty for the others).
    pub fn map_keys(self) -> &'static [&'static str] {
        match self {
            Self::Map(keys) => keys,
            Self::Atomic | Self::Set => &[],
        }
    }
}

/// How an object-valued field is merged (`x-kubernetes-map-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    /// Replaced whole.
    Atomic,
    /// Merged key by key.
    Granular,
}

impl MapType {
    /// The `x-kubernetes-map-type` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Atomic => "atomic",
            Self::Granular => "granular",
        }
    }
}

/// How a strategic merge patch treats a field (`x-kubernetes-patch-strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchStrategy {
    /// Lists are merged: object items by their merge key, scalar items as a union.
    Merge,
    /// Merged as [`Self::Merge`], and `$retainKeys` of the patch prunes the object.
    MergeRetainKeys,
    /// The object honours `$retainKeys` (the union of one-of fields, DeploymentStrategy).
    RetainKeys,
    /// The value is replaced whole.
    Replace,
}

impl PatchStrategy {
    /// The `x-kubernetes-patch-strategy` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merge => "merge",
            Self::MergeRetainKeys => "merge,retainKeys",
            Self::RetainKeys => "retainKeys",
            Self::Replace => "replace",
        }
    }

    /// Whether lists are merged rather than replaced.
    pub fn merges(self) -> bool {
        matches!(self, Self::Merge | Self::MergeRetainKeys)
    }
}

/// The markers of one property of one definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Markers {
    /// `x-kubernetes-list-type`, for lists.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-map-type`, for objects and maps.
    pub map_type: Option<MapType>,
    /// `x-kubernetes-patch-strategy`.
    pub patch_strategy: Option<PatchStrategy>,
    /// `x-kubernetes-patch-merge-key`: the field naming an item of a merged list of objects.
    pub patch_merge_key: Option<&'static str>,
}

/// No marker (the start of a table entry that has only patch markers).
pub(crate) const NONE: Markers = Markers {
    list_type: None,
    map_type: None,
    patch_strategy: None,
    patch_merge_key: None,
};
/// `+listType=atomic`.
pub(crate) const ATOMIC: Markers = NONE.list(ListType::Atomic);
/// `+listType=set`.
pub(crate) const SET: Markers = NONE.list(ListType::Set);
/// `+mapType=atomic`.
pub(crate) const ATOMIC_MAP: Markers = NONE.map(MapType::Atomic);
/// `+mapType=granular`.
pub(crate) const GRANULAR_MAP: Markers = NONE.map(MapType::Granular);

/// `+listType=map` with these `+listMapKey`s.
pub(crate) const fn keyed(keys: &'static [&'static str]) -> Markers {
    NONE.list(ListType::Map(keys))
}

impl Markers {
    const fn list(mut self, list_type: ListType) -> Self {
        self.list_type = Some(list_type);
        self
    }

    const fn map(mut self, map_type: MapType) -> Self {
        self.map_type = Some(map_type);
        self
    }

    /// These markers with `+patchStrategy`.
    pub(crate) const fn patch(mut self, strategy: PatchStrategy) -> Self {
        self.patch_strategy = Some(strategy);
        self
    }

    /// These markers with `+patchMergeKey`.
    pub(crate) const fn merge_key(mut self, key: &'static str) -> Self {
        self.patch_merge_key = Some(key);
        self
    }
}

/// The markers of `property` of the definition `definition` (upstream's name, e.g.
/// `io.k8s.api.core.v1.PodSpec`), if it has any.
pub fn markers(definition: &str, property: &str) -> Option<&'static Markers> {
    table::MARKERS
        .binary_search_by(|(d, p, _)| (*d, *p).cmp(&(definition, property)))
        .ok()
        .map(|i| &table::MARKERS[i].2)
}

/// Whether the definition `definition` is atomic as a whole: server-side apply replaces and
/// owns its values whole, wherever they appear.
pub fn atomic_type(definition: &str) -> bool {
    table::ATOMIC_TYPES.binary_search(&definition).is_ok()
}

/// The default of the list map key `field` of the item type `definition`, if it has one.
pub fn key_default(definition: &str, field: &str) -> Option<&'static str> {
    table::KEY_DEFAULTS
        .iter()
        .find(|(d, f, _)| *d == definition && *f == field)
        .map(|(_, _, default)| *default)
}

/// Every marked property of `definition`, in property order.
pub fn markers_of(definition: &str) -> impl Iterator<Item = (&'static str, &'static Markers)> {
    let start = table::MARKERS.partition_point(|(d, _, _)| *d < definition);
    table::MARKERS[start..]
        .iter()
        .take_while(move |(d, _, _)| *d == definition)
        .map(|(_, p, m)| (*p, m))
}
