//! Throttling the admin login: failed attempts per client and overall, and a bound on the
//! password hashes that run at once (DESIGN.md §9, "bounded work").
//!
//! Only failures count: a correct password neither uses up a limit nor waits on one (the browser
//! suite logs in dozens of times from one address). A client whose failures used up its burst is
//! refused *before* its next password is hashed until a failure's worth of time has passed, and
//! so is everyone once failures overall used up theirs (one guesser behind many addresses). The
//! counting is `governor`'s GCRA; this module adds what that lacks: remembering who is locked
//! out, so a refused attempt costs no argon2 hash (19 MiB and tens of milliseconds each). IPv6
//! clients are counted per `/64`, since one host holds a whole one.
//!
//! The counts live in this process's memory: with several processes each counts its own, so the
//! limits multiply by the number of processes and stay bounded. No HTTP here: `http/login.rs`
//! decides who the client is and answers the refusals.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv6Addr},
    num::NonZeroU32,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use governor::{
    clock::{Clock, DefaultClock},
    middleware::StateInformationMiddleware,
    state::{keyed::DefaultKeyedStateStore, InMemoryState, NotKeyed},
    Quota, RateLimiter,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::admin::AdminPasswordHash;

/// How many failures are allowed, and how many password hashes run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoginLimits {
    /// Failures one client may make in a row before it must wait.
    pub per_client_burst: NonZeroU32,
    /// After the burst, one more failure per this long.
    pub per_client_period: Duration,
    /// Failures all clients together may make in a row.
    pub overall_burst: NonZeroU32,
    /// After that, one more failure overall per this long.
    pub overall_period: Duration,
    /// Password hashes at once; each takes argon2's 19 MiB and a core.
    pub concurrent_hashes: usize,
    /// How long an attempt waits for a free hash before it is turned away.
    pub hash_wait: Duration,
}

impl Default for LoginLimits {
    /// Five failures, then one every 12 seconds (5 a minute) per client; 60, then one a second,
    /// overall; two hashes at once, waiting up to 5 seconds for one.
    fn default() -> Self {
        Self {
            per_client_burst: NonZeroU32::new(5).unwrap_or(NonZeroU32::MIN),
            per_client_period: Duration::from_secs(12),
            overall_burst: NonZeroU32::new(60).unwrap_or(NonZeroU32::MIN),
            overall_period: Duration::from_secs(1),
            concurrent_hashes: 2,
            hash_wait: Duration::from_secs(5),
        }
    }
}

/// Why a login attempt is turned away before its password is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Too many failed attempts, from this client or overall.
    #[error("too many failed logins; try again in {} s", seconds(.retry_after))]
    TooManyFailures {
        /// When the next attempt may be made.
        retry_after: Duration,
    },
    /// Every password hash is busy and none came free in time.
    #[error("too many logins at once; try again in {} s", seconds(.retry_after))]
    Busy {
        /// A guess at when a hash is free.
        retry_after: Duration,
    },
}

impl Refused {
    /// Whole seconds to wait, at least one: the value of `Retry-After`.
    #[must_use]
    pub fn retry_after_seconds(&self) -> u64 {
        match self {
            Self::TooManyFailures { retry_after } | Self::Busy { retry_after } => {
                seconds(retry_after)
            }
        }
    }
}

fn seconds(duration: &Duration) -> u64 {
    let whole = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    whole.max(1)
}

type PerClient =
    RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock, StateInformationMiddleware>;
type Overall = RateLimiter<NotKeyed, InMemoryState, DefaultClock, StateInformationMiddleware>;

/// Who is locked out, until when.
#[derive(Debug, Default)]
struct Lockouts {
    clients: HashMap<IpAddr, Instant>,
    everyone: Option<Instant>,
}

/// Keys kept by the per-client counter before the ones back at a full burst are dropped.
const PRUNE_ABOVE: usize = 4096;

/// The process's login throttle; one per server (held by the `tessera` crate's `AppState`).
pub struct LoginThrottle {
    per_client: PerClient,
    overall: Overall,
    lockouts: Mutex<Lockouts>,
    hashes: Arc<Semaphore>,
    limits: LoginLimits,
}

impl std::fmt::Debug for LoginThrottle {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LoginThrottle")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl LoginThrottle {
    /// A throttle with `limits` and no failures yet.
    #[must_use]
    pub fn new(limits: LoginLimits) -> Self {
        let quota = |burst: NonZeroU32, period: Duration| {
            Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                .allow_burst(burst)
        };
        Self {
            per_client: RateLimiter::keyed(quota(
                limits.per_client_burst,
                limits.per_client_period,
            ))
            .with_middleware::<StateInformationMiddleware>(),
            overall: RateLimiter::direct(quota(limits.overall_burst, limits.overall_period))
                .with_middleware::<StateInformationMiddleware>(),
            lockouts: Mutex::new(Lockouts::default()),
            hashes: Arc::new(Semaphore::new(limits.concurrent_hashes.max(1))),
            limits,
        }
    }

    /// Whether `client` may try a password now.
    ///
    /// # Errors
    /// [`Refused::TooManyFailures`] while it, or everyone, is locked out.
    pub fn check(&self, client: IpAddr) -> Result<(), Refused> {
        let now = Instant::now();
        let lockouts = self.lockouts.lock().unwrap_or_else(PoisonError::into_inner);
        let until = [
            lockouts.clients.get(&counted(client)).copied(),
            lockouts.everyone,
        ]
        .into_iter()
        .flatten()
        .filter(|until| *until > now)
        .max();
        match until {
            Some(until) => Err(Refused::TooManyFailures {
                retry_after: until - now,
            }),
            None => Ok(()),
        }
    }

    /// Waits for a free password hash, and checks `client` again once it has one (it may have
    /// been locked out meanwhile). Drop the permit when the hash is done.
    ///
    /// # Errors
    /// [`Refused::Busy`] when none comes free in time; [`LoginThrottle::check`]'s refusal.
    pub async fn hash_slot(&self, client: IpAddr) -> Result<OwnedSemaphorePermit, Refused> {
        let busy = Refused::Busy {
            retry_after: self.limits.hash_wait,
        };
        let permit =
            tokio::time::timeout(self.limits.hash_wait, self.hashes.clone().acquire_owned())
                .await
                .map_err(|_| busy)?
                // The semaphore is never closed.
                .map_err(|_| busy)?;
        self.check(client)?;
        Ok(permit)
    }

    /// Whether `attempt` from `client` is the admin password: refused before any hashing while the
    /// client (or everyone) is locked out, the hash run off the executor within the bound, and a
    /// wrong password counted. A right one counts for nothing.
    ///
    /// # Errors
    /// [`Refused`] when the attempt is turned away unchecked.
    pub async fn verify(
        &self,
        password: &AdminPasswordHash,
        client: IpAddr,
        attempt: String,
    ) -> Result<bool, Refused> {
        self.check(client)?;
        let permit = self.hash_slot(client).await?;
        let hash = password.clone();
        let right = tokio::task::spawn_blocking(move || hash.verify(&attempt))
            .await
            .unwrap_or(false);
        drop(permit);
        if !right {
            self.record_failure(client);
        }
        Ok(right)
    }

    /// Counts a wrong password from `client`; once that uses up its burst (or everyone's), the
    /// next attempt is refused by [`LoginThrottle::check`] until a failure's worth of time passed.
    pub fn record_failure(&self, client: IpAddr) {
        let client = counted(client);
        let client_lock = match self.per_client.check_key(&client) {
            Ok(snapshot) if snapshot.remaining_burst_capacity() > 0 => None,
            Ok(_) => Some(self.limits.per_client_period),
            Err(not_until) => Some(not_until.wait_time_from(self.per_client.clock().now())),
        };
        let everyone_lock = match self.overall.check() {
            Ok(snapshot) if snapshot.remaining_burst_capacity() > 0 => None,
            Ok(_) => Some(self.limits.overall_period),
            Err(not_until) => Some(not_until.wait_time_from(self.overall.clock().now())),
        };
        if self.per_client.len() > PRUNE_ABOVE {
            self.per_client.retain_recent();
        }
        if client_lock.is_none() && everyone_lock.is_none() {
            return;
        }
        let now = Instant::now();
        let mut lockouts = self.lockouts.lock().unwrap_or_else(PoisonError::into_inner);
        lockouts.clients.retain(|_, until| *until > now);
        if let Some(wait) = client_lock {
            lockouts
                .clients
                .insert(client, now + wait.max(Duration::from_millis(1)));
        }
        if let Some(wait) = everyone_lock {
            tracing::warn!(
                wait_ms = wait.as_millis() as u64,
                "failed logins overall hit their limit; every login waits"
            );
            lockouts.everyone = Some(now + wait.max(Duration::from_millis(1)));
        }
    }
}

/// The address a client is counted under: IPv4 as is, IPv6 by its `/64`.
pub(crate) fn counted(client: IpAddr) -> IpAddr {
    match client.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            IpAddr::V6(Ipv6Addr::new(
                segments[0],
                segments[1],
                segments[2],
                segments[3],
                0,
                0,
                0,
                0,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(burst: u32) -> LoginLimits {
        LoginLimits {
            per_client_burst: NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN),
            per_client_period: Duration::from_secs(60),
            ..LoginLimits::default()
        }
    }

    #[test]
    fn a_client_is_locked_out_after_its_burst_of_failures_and_others_are_not() {
        let throttle = LoginThrottle::new(limits(3));
        let guesser = IpAddr::from([203, 0, 113, 7]);
        for _ in 0..3 {
            assert_eq!(throttle.check(guesser), Ok(()));
            throttle.record_failure(guesser);
        }
        let refused = throttle.check(guesser);
        assert!(
            matches!(refused, Err(Refused::TooManyFailures { retry_after }) if retry_after > Duration::from_secs(50)),
            "{refused:?}"
        );
        assert_eq!(
            refused.map_err(|refused| refused.retry_after_seconds()),
            Err(60)
        );
        assert_eq!(throttle.check(IpAddr::from([203, 0, 113, 8])), Ok(()));
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_slash_64() {
        let throttle = LoginThrottle::new(limits(1));
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap_or(IpAddr::from([0; 16]));
        let same_64: IpAddr = "2001:db8:1:2:ffff::9"
            .parse()
            .unwrap_or(IpAddr::from([0; 16]));
        let other_64: IpAddr = "2001:db8:1:3::1".parse().unwrap_or(IpAddr::from([0; 16]));
        throttle.record_failure(one);
        assert!(throttle.check(same_64).is_err());
        assert_eq!(throttle.check(other_64), Ok(()));
    }

    #[test]
    fn failures_overall_lock_everyone_out() {
        let throttle = LoginThrottle::new(LoginLimits {
            overall_burst: NonZeroU32::new(4).unwrap_or(NonZeroU32::MIN),
            overall_period: Duration::from_secs(30),
            ..LoginLimits::default()
        });
        for last_octet in 1..=4 {
            throttle.record_failure(IpAddr::from([198, 51, 100, last_octet]));
        }
        assert!(throttle.check(IpAddr::from([192, 0, 2, 1])).is_err());
    }

    #[tokio::test]
    async fn no_more_hashes_run_at_once_than_allowed() {
        let throttle = LoginThrottle::new(LoginLimits {
            concurrent_hashes: 1,
            hash_wait: Duration::from_millis(50),
            ..LoginLimits::default()
        });
        let client = IpAddr::from([127, 0, 0, 1]);
        let held = throttle.hash_slot(client).await;
        assert!(held.is_ok());
        assert!(matches!(
            throttle.hash_slot(client).await,
            Err(Refused::Busy { .. })
        ));
        drop(held);
        assert!(throttle.hash_slot(client).await.is_ok());
    }
}
