//! [`ApiaryRuntime`]: openraft's async runtime. Tokio does all the work; the only difference
//! from openraft's tokio runtime is the random source, which a deterministic simulation can seed
//! per thread ([`enter_deterministic`]) so that election timeouts replay exactly.
//!
//! The same thread-local switch makes [`blocking`] run blocking file work inline instead of on
//! tokio's blocking pool: in a simulation the "disk" is memory, and a pool thread would finish in
//! wall-clock order, outside virtual time.

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::time::Duration;

use openraft::AsyncRuntime;
use openraft::OptionalSend;
use openraft::rt::Select2;
use openraft::rt::Select3;
use openraft::rt::Select4;
use openraft_rt_tokio::TokioRuntime;
use rand_openraft::SeedableRng;
use rand_openraft::rngs::StdRng;

thread_local! {
    /// The next seed of this thread's deterministic stream; `None` outside
    /// [`enter_deterministic`].
    static SEED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// SplitMix64: a bijective mixer, so successive seeds never repeat within a run and one seed
/// bit changes about half of every later draw.
fn splitmix64(state: u64) -> u64 {
    let z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Makes this thread deterministic until the guard is dropped: openraft's random draws come
/// from a stream seeded with `seed`, and [`blocking`] work runs inline.
///
/// A turmoil simulation runs every host on the thread that steps it, in an order fixed by its
/// own seed, so one stream per thread gives every host the same draws on every run of a seed.
/// Threads that never call this keep an OS-seeded generator and the blocking pool.
pub fn enter_deterministic(seed: u64) -> DeterministicGuard {
    let previous = SEED.with(|s| s.replace(Some(seed)));
    DeterministicGuard {
        previous,
        _not_send: PhantomData,
    }
}

/// Whether the current thread is inside [`enter_deterministic`].
pub fn is_deterministic() -> bool {
    SEED.with(|s| s.get().is_some())
}

/// Restores the thread's previous random source when dropped. Not `Send`: it belongs to the
/// thread it was made on.
#[must_use = "the thread is deterministic only while the guard lives"]
pub struct DeterministicGuard {
    previous: Option<u64>,
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for DeterministicGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeterministicGuard").finish_non_exhaustive()
    }
}

impl Drop for DeterministicGuard {
    fn drop(&mut self) {
        SEED.with(|s| s.set(self.previous));
    }
}

/// A generator for one openraft draw: from the thread's deterministic stream when there is one,
/// else seeded from the OS.
fn draw_rng() -> StdRng {
    let seeded = SEED.with(|s| s.get().inspect(|seed| s.set(Some(splitmix64(*seed)))));
    match seeded {
        Some(seed) => StdRng::seed_from_u64(seed),
        None => StdRng::from_rng(&mut rand_openraft::rng()),
    }
}

/// Runs blocking file work: inline on a deterministic thread (see [`enter_deterministic`]),
/// else on tokio's blocking pool so that it does not stall the runtime's workers.
pub async fn blocking<F, T>(work: F) -> io::Result<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if is_deterministic() {
        Ok(work())
    } else {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(io::Error::other)
    }
}

/// Apiary's openraft runtime: [`TokioRuntime`] with a seedable random source.
pub struct ApiaryRuntime {
    inner: TokioRuntime,
}

impl fmt::Debug for ApiaryRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiaryRuntime").finish_non_exhaustive()
    }
}

impl AsyncRuntime for ApiaryRuntime {
    type JoinError = <TokioRuntime as AsyncRuntime>::JoinError;
    type JoinHandle<T: OptionalSend + 'static> = <TokioRuntime as AsyncRuntime>::JoinHandle<T>;
    type Sleep = <TokioRuntime as AsyncRuntime>::Sleep;
    type Instant = <TokioRuntime as AsyncRuntime>::Instant;
    type TimeoutError = <TokioRuntime as AsyncRuntime>::TimeoutError;
    type Timeout<R, T: Future<Output = R> + OptionalSend> =
        <TokioRuntime as AsyncRuntime>::Timeout<R, T>;
    type ThreadLocalRng = StdRng;

    fn spawn<T>(future: T) -> Self::JoinHandle<T::Output>
    where
        T: Future + OptionalSend + 'static,
        T::Output: OptionalSend + 'static,
    {
        TokioRuntime::spawn(future)
    }

    fn sleep(duration: Duration) -> Self::Sleep {
        TokioRuntime::sleep(duration)
    }

    fn sleep_until(deadline: Self::Instant) -> Self::Sleep {
        TokioRuntime::sleep_until(deadline)
    }

    fn timeout<R, F: Future<Output = R> + OptionalSend>(
        duration: Duration,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout(duration, future)
    }

    fn timeout_at<R, F: Future<Output = R> + OptionalSend>(
        deadline: Self::Instant,
        future: F,
    ) -> Self::Timeout<R, F> {
        TokioRuntime::timeout_at(deadline, future)
    }

    fn select2<A, B>(
        a: A,
        b: B,
    ) -> impl Future<Output = Select2<A::Output, B::Output>> + OptionalSend
    where
        A: Future + OptionalSend,
        B: Future + OptionalSend,
    {
        TokioRuntime::select2(a, b)
    }

    fn select3<A, B, C>(
        a: A,
        b: B,
        c: C,
    ) -> impl Future<Output = Select3<A::Output, B::Output, C::Output>> + OptionalSend
    where
        A: Future + OptionalSend,
        B: Future + OptionalSend,
        C: Future + OptionalSend,
    {
        TokioRuntime::select3(a, b, c)
    }

    fn select4<A, B, C, D>(
        a: A,
        b: B,
        c: C,
        d: D,
    ) -> impl Future<Output = Select4<A::Output, B::Output, C::Output, D::Output>> + OptionalSend
    where
        A: Future + OptionalSend,
        B: Future + OptionalSend,
        C: Future + OptionalSend,
        D: Future + OptionalSend,
    {
        TokioRuntime::select4(a, b, c, d)
    }

    fn is_panic(join_error: &Self::JoinError) -> bool {
        TokioRuntime::is_panic(join_error)
    }

    fn thread_rng() -> Self::ThreadLocalRng {
        draw_rng()
    }

    type Mpsc = <TokioRuntime as AsyncRuntime>::Mpsc;
    type Watch = <TokioRuntime as AsyncRuntime>::Watch;
    type Oneshot = <TokioRuntime as AsyncRuntime>::Oneshot;
    type Mutex<T: OptionalSend + 'static> = <TokioRuntime as AsyncRuntime>::Mutex<T>;

    fn new(threads: usize) -> Self {
        Self {
            inner: TokioRuntime::new(threads),
        }
    }

    fn block_on<F, T>(&mut self, future: F) -> T
    where
        F: Future<Output = T>,
    {
        self.inner.block_on(future)
    }

    /// openraft's default starts an OS thread per call; [`blocking`] uses tokio's pool, or runs
    /// inline on a deterministic thread.
    fn spawn_blocking<F, T>(f: F) -> impl Future<Output = Result<T, io::Error>> + Send
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        blocking(f)
    }
}

#[cfg(test)]
mod tests {
    use rand_openraft::RngExt;

    use super::*;

    fn draws() -> Vec<u64> {
        (0..4)
            .map(|_| ApiaryRuntime::thread_rng().random_range(150..300))
            .collect()
    }

    // R-HA-013: a seeded thread replays openraft's random draws (election timeouts) exactly; a
    // different seed draws differently.
    #[test]
    fn seeded_draws_repeat_per_seed() {
        let first = {
            let _guard = enter_deterministic(7);
            draws()
        };
        let again = {
            let _guard = enter_deterministic(7);
            draws()
        };
        let other = {
            let _guard = enter_deterministic(8);
            draws()
        };
        assert_eq!(first, again);
        assert_ne!(first, other);
        assert!(
            !is_deterministic(),
            "the guard restores the OS-seeded source"
        );
    }

    // R-HA-013: in deterministic mode blocking work runs inline, before the future first yields.
    #[tokio::test]
    async fn blocking_runs_inline_when_deterministic() {
        let _guard = enter_deterministic(1);
        let worker = std::thread::current().id();
        let ran_on = blocking(move || std::thread::current().id()).await;
        assert_eq!(ran_on.ok(), Some(worker));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn blocking_uses_the_pool_otherwise() {
        let worker = std::thread::current().id();
        let ran_on = blocking(move || std::thread::current().id()).await;
        assert!(ran_on.is_ok_and(|id| id != worker));
    }
}
