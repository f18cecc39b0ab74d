//! A quota's resource list (`hard`, `used`, an object's usage): quantities by resource name,
//! in name order, with the arithmetic Kubernetes' quota helpers do (`Add`, `Mask`,
//! `SubtractWithNonNegativeResult`, `LessThanOrEqual`) and the text its messages print.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Map;
use serde_json::Value;

use super::super::quantity::Quantity;

/// The most resources one list is read with: a longer list in an object is cut there.
const MAX_RESOURCES: usize = 1024;

/// Quantities by resource name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceList(BTreeMap<String, Quantity>);

impl ResourceList {
    /// The list written at `value` (a JSON object of quantity strings); entries that are no
    /// quantity are left out (validation refused them).
    pub fn from_json(value: Option<&Value>) -> Self {
        let entries = (value.and_then(Value::as_object).into_iter().flatten()).take(MAX_RESOURCES);
        Self(
            entries
                .filter_map(|(name, q)| Some((name.clone(), Quantity::parse(q.as_str()?)?)))
                .collect(),
        )
    }

    /// The list as JSON, each quantity in canonical form.
    pub fn to_json(&self) -> Value {
        let map: Map<String, Value> = (self.0.iter())
            .map(|(name, q)| (name.clone(), Value::String(q.to_string())))
            .collect();
        Value::Object(map)
    }

    /// Sets `name` to `quantity`.
    pub fn set(&mut self, name: impl Into<String>, quantity: Quantity) {
        self.0.insert(name.into(), quantity);
    }

    /// Sets `name` to zero.
    pub fn set_zero(&mut self, name: impl Into<String>) {
        self.0.insert(name.into(), Quantity::count(0));
    }

    /// The quantity of `name`.
    pub fn get(&self, name: &str) -> Option<Quantity> {
        self.0.get(name).copied()
    }

    /// Whether `name` is listed.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The resource names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The entries, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Quantity)> {
        self.0.iter().map(|(name, q)| (name.as_str(), *q))
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `other` into this list (a resource new to it keeps its own format).
    pub fn add(&mut self, other: &Self) {
        for (name, q) in &other.0 {
            // A zero takes the format of what is added to it, as Kubernetes' `Add`.
            let sum = match self.0.get(name) {
                Some(current) if current.nanos() != 0 => current.plus(*q),
                Some(current) => q.plus(*current),
                None => *q,
            };
            self.0.insert(name.clone(), sum);
        }
    }

    /// Raises each resource to at least `other`'s.
    pub fn max(&mut self, other: &Self) {
        for (name, q) in &other.0 {
            match self.0.get(name) {
                Some(current) if current.nanos() >= q.nanos() => {}
                _ => {
                    self.0.insert(name.clone(), *q);
                }
            }
        }
    }

    /// Only the resources `keep` says yes to.
    pub fn mask(&self, keep: impl Fn(&str) -> bool) -> Self {
        Self(
            (self.0.iter())
                .filter(|(name, _)| keep(name))
                .map(|(name, q)| (name.clone(), *q))
                .collect(),
        )
    }

    /// Without the zero quantities (`RemoveZeros`).
    pub fn without_zeros(&self) -> Self {
        self.mask(|name| self.0.get(name).is_some_and(|q| q.nanos() != 0))
    }

    /// `self - other` per resource of either, never below zero
    /// (`SubtractWithNonNegativeResult`).
    pub fn minus_non_negative(&self, other: &Self) -> Self {
        let mut result = Self::default();
        for (name, q) in &self.0 {
            let difference = match other.0.get(name) {
                Some(o) => q.minus(*o),
                None => *q,
            };
            let kept = if difference.nanos() > 0 {
                difference
            } else {
                Quantity::count(0)
            };
            result.0.insert(name.clone(), kept);
        }
        for name in other.0.keys() {
            result.0.entry(name.clone()).or_insert(Quantity::count(0));
        }
        result
    }

    /// The resources whose quantity here is above `limits`' (`LessThanOrEqual`'s
    /// exceeded names; resources absent from either are not compared).
    pub fn exceeding(&self, limits: &Self) -> Vec<String> {
        (limits.0.iter())
            .filter(|(name, limit)| self.0.get(*name).is_some_and(|q| q.nanos() > limit.nanos()))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The resources with a negative quantity.
    pub fn negative(&self) -> Vec<String> {
        (self.0.iter())
            .filter(|(_, q)| q.nanos() < 0)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Whether both list the same resources with equal quantities (formats aside: Kubernetes'
    /// `quota.Equals`).
    pub fn same_amounts(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && (self.0.iter())
                .all(|(name, q)| other.0.get(name).is_some_and(|o| o.nanos() == q.nanos()))
    }
}

impl fmt::Display for ResourceList {
    /// `name=quantity` pairs in name order, comma separated (Kubernetes' `prettyPrint`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, q)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={q}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn list(value: Value) -> ResourceList {
        ResourceList::from_json(Some(&value))
    }

    #[test]
    fn lists_print_sorted_with_canonical_quantities() {
        let l = list(json!({"pods": "2", "limits.memory": "1.5Gi", "cpu": "0.5"}));
        assert_eq!(l.to_string(), "cpu=500m,limits.memory=1536Mi,pods=2");
        assert_eq!(
            l.to_json(),
            json!({"cpu": "500m", "limits.memory": "1536Mi", "pods": "2"})
        );
    }

    #[test]
    fn sums_masks_and_differences_are_kubernetes_ones() {
        let mut used = list(json!({"pods": "1", "cpu": "500m"}));
        used.add(&list(json!({"pods": "1", "memory": "1Gi"})));
        assert_eq!(used.to_string(), "cpu=500m,memory=1Gi,pods=2");
        let mut zero = list(json!({"memory": "0"}));
        zero.add(&list(json!({"memory": "512Mi"})));
        assert_eq!(
            zero.to_string(),
            "memory=512Mi",
            "a zero takes the added format"
        );
        assert_eq!(used.mask(|n| n == "pods").to_string(), "pods=2");
        let delta = list(json!({"cpu": "1", "pods": "1"}))
            .minus_non_negative(&list(json!({"cpu": "2", "memory": "1"})));
        assert_eq!(delta.to_string(), "cpu=0,memory=0,pods=1");
        assert_eq!(delta.without_zeros().to_string(), "pods=1");
    }

    #[test]
    fn exceeded_resources_are_those_above_their_limit() {
        let hard = list(json!({"pods": "2", "cpu": "1"}));
        assert_eq!(
            list(json!({"pods": "3", "cpu": "1"})).exceeding(&hard),
            ["pods"]
        );
        assert!(
            list(json!({"pods": "2", "memory": "9"}))
                .exceeding(&hard)
                .is_empty()
        );
        assert!(list(json!({"cpu": "1000m"})).same_amounts(&list(json!({"cpu": "1"}))));
        assert_eq!(list(json!({"cpu": "-1"})).negative(), ["cpu"]);
    }
}
