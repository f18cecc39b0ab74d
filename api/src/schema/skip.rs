//! The decoder's recursion: every step into a nested value runs through [`nested`], which
//! grows the stack before it runs short, and a value the decoder drops (an unknown field's,
//! or one of the wrong type) is read past with [`Skip`] through the parser's own
//! `deserialize_any`, so the parser's nesting limit applies to it as to the rest of the body
//! (serde's `IgnoredAny` lets serde_json skip without one). The recursion is bounded by that
//! limit ([`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH)); the stack it takes is not
//! the caller's concern.

use std::fmt;

use serde::Deserializer;
use serde::de::DeserializeSeed;
use serde::de::MapAccess;
use serde::de::SeqAccess;
use serde::de::Visitor;

/// The stack a step into a nested value needs left: more than one level of the parsers'
/// recursion takes (about 16 KiB per level for serde-saphyr in an unoptimized build).
const STACK_RED_ZONE: usize = 128 * 1024;

/// The stack segment allocated when less than [`STACK_RED_ZONE`] is left.
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `step` (one level of the decoder's recursion) where at least [`STACK_RED_ZONE`] of
/// stack is left, on a new [`STACK_SEGMENT`] if the current stack is shorter: a body at the
/// nesting limit decodes on any thread (a tokio worker has 2 MiB), in any build.
pub(super) fn nested<R>(step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, step)
}

/// A value read and dropped.
#[derive(Debug, Clone, Copy)]
pub(super) struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D>(self, deserializer: D) -> Result<(), D::Error>
    where
        D: Deserializer<'de>,
    {
        nested(|| deserializer.deserialize_any(self))
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_bytes<E>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D>(self, deserializer: D) -> Result<(), D::Error>
    where
        D: Deserializer<'de>,
    {
        Skip.deserialize(deserializer)
    }

    fn visit_newtype_struct<D>(self, deserializer: D) -> Result<(), D::Error>
    where
        D: Deserializer<'de>,
    {
        Skip.deserialize(deserializer)
    }

    fn visit_seq<A>(self, mut seq: A) -> Result<(), A::Error>
    where
        A: SeqAccess<'de>,
    {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A>(self, mut map: A) -> Result<(), A::Error>
    where
        A: MapAccess<'de>,
    {
        while map.next_entry_seed(Skip, Skip)?.is_some() {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_NESTING_DEPTH;

    fn skip_json(body: &str) -> Result<(), serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(body);
        Skip.deserialize(&mut de)?;
        de.end()
    }

    #[test]
    fn skips_any_value_within_the_nesting_limit() {
        for body in [
            "1",
            "-0.5",
            "\"x\"",
            "null",
            "true",
            r#"{"a":[1,{"b":null}]}"#,
        ] {
            skip_json(body).expect(body);
        }
        let at = format!(
            "{}{}",
            "[".repeat(MAX_NESTING_DEPTH),
            "]".repeat(MAX_NESTING_DEPTH)
        );
        skip_json(&at).expect("at the limit");
        let past = format!("[{at}]");
        let e = skip_json(&past).expect_err("past the limit");
        assert!(e.to_string().starts_with("recursion limit exceeded"), "{e}");
    }
}
