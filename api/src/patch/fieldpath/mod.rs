//! Sets of field paths, as server-side apply records field ownership (structured-merge-diff's
//! `fieldpath`): a [`PathElement`] names a struct field or map key, a list item by its key
//! fields, a set item by its value or an item of another list by its index; a [`Set`] is a tree
//! of them. [`fields_v1`] writes and reads the `fieldsV1` form of `metadata.managedFields`;
//! [`of_value`], [`compare`], [`remove`] and [`extract`] relate sets to objects.

mod compare;
mod element;
pub mod fields_v1;
mod typed;

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::btree_map::Entry;
use std::fmt;

pub use compare::Comparison;
pub use compare::compare;
pub use element::PathElement;
pub use typed::extract;
pub use typed::item_element;
pub use typed::of_value;
pub use typed::remove;

/// A set of paths: the elements that end a path at this level (`members`), and the subsets
/// below the elements that continue one (`children`). A path can be both a member and have
/// children: an owned list item whose fields are owned too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

/// A path from an object's root, one element per level.
pub type Path = [PathElement];

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the set has no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// Adds `path` (the empty path is not a member of anything and is ignored).
    pub fn insert(&mut self, path: &Path) {
        let Some((last, prefix)) = path.split_last() else {
            return;
        };
        let mut node = self;
        for element in prefix {
            node = node.children.entry(element.clone()).or_default();
        }
        node.members.insert(last.clone());
    }

    /// Whether `path` is in the set.
    pub fn has(&self, path: &Path) -> bool {
        let Some((last, prefix)) = path.split_last() else {
            return false;
        };
        let mut node = self;
        for element in prefix {
            match node.children.get(element) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.members.contains(last)
    }

    /// Whether the set has `path` or any path below it.
    pub fn has_prefix(&self, path: &Path) -> bool {
        let Some((last, prefix)) = path.split_last() else {
            return !self.is_empty();
        };
        let mut node = self;
        for element in prefix {
            match node.children.get(element) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.members.contains(last) || node.children.get(last).is_some_and(|c| !c.is_empty())
    }

    /// The paths of this set below `element`, relative to it (empty when none).
    pub fn child(&self, element: &PathElement) -> Option<&Set> {
        self.children.get(element)
    }

    /// Whether `element` itself is a member at this level.
    pub fn is_member(&self, element: &PathElement) -> bool {
        self.members.contains(element)
    }

    /// The elements that are members at this level, in order.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The elements with paths below them at this level, in order, with their subsets.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &Set)> {
        self.children.iter()
    }

    /// The paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// Adds every path of `other`, in place ([`Set::union`] without copying either set).
    pub fn absorb(&mut self, other: Set) {
        self.members.extend(other.members);
        for (element, child) in other.children {
            match self.children.entry(element) {
                Entry::Occupied(mut mine) => mine.get_mut().absorb(child),
                Entry::Vacant(slot) => {
                    slot.insert(child);
                }
            }
        }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let both = mine.intersection(other.children.get(element)?);
                (!both.is_empty()).then(|| (element.clone(), both))
            })
            .collect();
        Set { members, children }
    }

    /// The paths of this set that are not in `other`.
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let rest = match other.children.get(element) {
                    Some(theirs) => mine.difference(theirs),
                    None => mine.clone(),
                };
                (!rest.is_empty()).then(|| (element.clone(), rest))
            })
            .collect();
        Set { members, children }
    }

    /// Removes the paths of `other`, in place: what [`Set::difference`] answers, without
    /// copying what stays.
    pub fn subtract(&mut self, other: &Set) {
        self.members
            .retain(|member| !other.members.contains(member));
        self.children.retain(|element, mine| {
            if let Some(theirs) = other.children.get(element) {
                mine.subtract(theirs);
            }
            !mine.is_empty()
        });
    }

    /// Every path of the set, in order (a member before the paths below it).
    pub fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        let mut members = self.members.iter().peekable();
        let mut children = self.children.iter().peekable();
        loop {
            let next_member = members.peek().copied();
            let next_child = children.peek().map(|(e, _)| *e);
            let element = match (next_member, next_child) {
                (None, None) => return,
                (Some(m), Some(c)) => m.min(c),
                (Some(m), None) => m,
                (None, Some(c)) => c,
            };
            prefix.push(element.clone());
            if next_member == Some(element) {
                members.next();
                out.push(prefix.clone());
            }
            if next_child == Some(element)
                && let Some((_, child)) = children.next()
            {
                child.collect_paths(prefix, out);
            }
            prefix.pop();
        }
    }
}

/// A path as structured-merge-diff prints it in conflict messages:
/// `.spec.containers[name="nginx"].image`.
pub struct DisplayPath<'a>(pub &'a Path);

impl fmt::Display for DisplayPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|element| write!(f, "{element}"))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod typed_tests;
