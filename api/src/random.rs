//! [`RandomSource`]: the one source of the API's randomness — object uids, `generateName`
//! suffixes, IPAddress uids, token ids (`jti`) and the spread of watch timeouts — handed in
//! through [`ApiConfig`](crate::ApiConfig), so a server seeds it from the operating system and a
//! simulation from its seed (a seed then replays the same names and timeouts).

use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// A shared random number generator. Clones draw from the same sequence.
#[derive(Clone)]
pub struct RandomSource(Arc<Mutex<StdRng>>);

impl RandomSource {
    /// A generator seeded from the operating system's entropy (production).
    pub fn from_os_entropy() -> Self {
        Self::from_rng(StdRng::from_os_rng())
    }

    /// A generator that yields the same sequence for the same `seed` (the simulation, tests).
    pub fn seeded(seed: u64) -> Self {
        Self::from_rng(StdRng::seed_from_u64(seed))
    }

    fn from_rng(rng: StdRng) -> Self {
        Self(Arc::new(Mutex::new(rng)))
    }

    /// Runs `draw` on the generator. A panic elsewhere while it was held leaves the generator
    /// usable: any state is a valid state.
    fn draw<T>(&self, draw: impl FnOnce(&mut StdRng) -> T) -> T {
        let mut rng = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        draw(&mut rng)
    }

    /// A random (version 4) UUID in its hyphenated form, as uids and token ids are written.
    pub fn uuid(&self) -> String {
        let bytes: [u8; 16] = self.draw(|rng| rng.random());
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// A uniformly drawn index below `len`; `len` must not be zero.
    pub fn index(&self, len: usize) -> usize {
        self.draw(|rng| rng.random_range(0..len))
    }

    /// A uniformly drawn fraction in `[0, 1)`.
    pub fn fraction(&self) -> f64 {
        self.draw(|rng| rng.random())
    }
}

impl fmt::Debug for RandomSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RandomSource").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_draws_one_sequence_and_uuids_are_version_4() {
        let draws = |source: &RandomSource| (source.uuid(), source.index(27), source.fraction());
        let (a, b) = (RandomSource::seeded(7), RandomSource::seeded(7));
        assert_eq!(draws(&a), draws(&b));
        assert_ne!(draws(&a), draws(&RandomSource::seeded(8)));
        let uuid = uuid::Uuid::parse_str(&RandomSource::from_os_entropy().uuid()).expect("uuid");
        assert_eq!(uuid.get_version_num(), 4);
    }
}
