//! The threads that step a batch's blocks: the caller's own and `threads - 1`
//! helpers that live as long as the batch, with each thread's share of the
//! blocks the same at every step.
//!
//! Why not a rayon split of the blocks at every step (what the batch did
//! before): a step of 4096 lanes on connect four takes about 70 µs, a block
//! of 512 lanes about 9, and the split cost more than it saved. The caller
//! (Python's thread) handed the step to a pool thread and slept; that thread
//! split the blocks and the second one, woken or spinning, stole half of
//! them in most steps too late, so that one thread ran them all while the
//! other burnt a core looking for work; and when it did steal, it stole
//! whichever half came first, so that the blocks' values and rows moved
//! from one core's cache to the other's (a block's step took 14 to 19 µs
//! against 9). docs/PYTHON.md has the figures.
//!
//! So here:
//!
//! - The caller works: it takes the first share, and the helpers the others,
//!   thread `t` the same consecutive tasks at every step, so each block stays
//!   in the cache of the core that steps it.
//! - No thread waits for another to arrive: a thread that has run its share
//!   takes the tasks left in the others' (the caller runs the whole step on
//!   its own when the helpers are late, say because other processes hold the
//!   cores), and the caller waits only for the tasks under way.
//! - Helpers wait for the next step spinning, for [`SPIN`], then sleep on a
//!   condition variable: a loop of steps (the benchmark, a training loop
//!   stepping without much in between) never wakes a sleeping thread, and a
//!   program that steps now and then does not keep a core busy.
//!
//! The step's tasks are borrowed from the caller's stack: the helpers reach
//! them through a pointer published for the step, and the caller does not
//! return before every helper that may hold it has let go (see
//! [`Team::run`]).

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a helper spins waiting for the next step before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// How long the caller spins waiting for the tasks under way before it
/// yields its core between checks.
const WAIT_SPIN: Duration = Duration::from_micros(50);

/// Most steps the caller runs alone after helpers kept it waiting (see [`Team::run`]).
const MOST_ALONE: u32 = 256;

/// The caller's thread and its helpers.
pub struct Team {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    /// Steps left that the caller runs alone.
    alone: u32,
    /// Steps alone after the next step that keeps the caller waiting, halved:
    /// doubled at each such step (from 1, at most [`MOST_ALONE`]), halved at
    /// each step on time, so that a machine busy for long keeps the caller
    /// alone for long, and a short hitch is soon forgotten.
    backoff: u32,
}

/// What the caller and the helpers share.
struct Shared {
    /// The open step's work, null between steps.
    job: AtomicPtr<Job<'static>>,
    /// Steps opened (and one more when the team ends): a helper works when it changes.
    epoch: AtomicU64,
    /// Helpers that may be reading the open step's work.
    active: AtomicUsize,
    /// Helpers asleep (or about to sleep) on `wake`.
    sleepers: AtomicUsize,
    /// Whether the team is ending.
    quit: AtomicBool,
    /// `wake`'s lock.
    lock: Mutex<()>,
    /// Where helpers sleep between steps.
    wake: Condvar,
}

/// One step's work: tasks `0..count` in one share per thread.
struct Job<'a> {
    /// Runs a task.
    run: &'a (dyn Fn(usize) + Sync),
    /// Tasks.
    count: usize,
    /// Threads (shares).
    threads: usize,
    /// Per share, the next of its tasks to take (past its end when all are taken).
    next: Vec<Padded>,
    /// Tasks run.
    done: AtomicUsize,
    /// The first panic of a task, to raise in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// A counter alone on its cache line (the threads take tasks from each
/// other's shares, and counters side by side would bounce a line between them).
#[repr(align(128))]
struct Padded(AtomicUsize);

impl Team {
    /// A team of `threads` threads (the caller's included): `threads - 1`
    /// helpers, fewer if the system refuses to start them.
    pub fn new(threads: usize) -> Team {
        let shared = Arc::new(Shared {
            job: AtomicPtr::new(std::ptr::null_mut()),
            epoch: AtomicU64::new(0),
            active: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            quit: AtomicBool::new(false),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut helpers = Vec::new();
        for t in 1..threads {
            let mine = Arc::clone(&shared);
            let started = std::thread::Builder::new()
                .name(format!("ggpnet-env-{t}"))
                .spawn(move || mine.help(t));
            match started {
                Ok(handle) => helpers.push(handle),
                Err(_) => break,
            }
        }
        Team {
            shared,
            helpers,
            alone: 0,
            backoff: 0,
        }
    }

    /// Threads, the caller's included.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Runs `run(i)` for every task `i` in `0..count`, each once, on the
    /// team's threads: thread `t` takes the tasks of its share (see
    /// [`share`]) first, then any left in the others'. Returns when all have
    /// run; a panic of a task is raised here once they all have.
    ///
    /// A helper that loses its core in the middle of a task (other
    /// processes on the cores) keeps the caller waiting until it gets one
    /// back, which costs more than the helper saves: after a step in which
    /// the caller waited more than twice its own time a task, it runs the
    /// next steps alone (1, 2, 4, ... up to [`MOST_ALONE`] steps while that
    /// goes on, see [`Team::backoff`]), then tries the helpers again.
    pub fn run(&mut self, count: usize, run: &(dyn Fn(usize) + Sync)) {
        if self.helpers.is_empty() || count <= 1 || self.alone > 0 {
            self.alone = self.alone.saturating_sub(1);
            (0..count).for_each(run);
            return;
        }
        let (worked, waited) = self.run_shared(count, run);
        if waited > 2 * worked {
            self.backoff = (2 * self.backoff).clamp(1, MOST_ALONE);
            self.alone = self.backoff;
        } else {
            self.backoff /= 2;
        }
    }

    /// [`Team::run`] on every thread: the caller's time a task it ran, and
    /// its time waiting for the helpers' tasks under way.
    fn run_shared(&self, count: usize, run: &(dyn Fn(usize) + Sync)) -> (Duration, Duration) {
        let threads = self.threads();
        let job = Job {
            run,
            count,
            threads,
            next: (0..threads)
                .map(|t| Padded(AtomicUsize::new(share(count, threads, t).start)))
                .collect(),
            done: AtomicUsize::new(0),
            panic: Mutex::new(None),
        };
        let shared = &*self.shared;
        // SAFETY: the pointer is withdrawn below, and this function waits
        // until no helper can hold it, before `job` goes out of scope; the
        // lifetime is erased only for the time of the step.
        let published = &job as *const Job<'_> as *mut Job<'static>;
        shared.job.store(published, SeqCst);
        shared.epoch.fetch_add(1, SeqCst);
        if shared.sleepers.load(SeqCst) > 0 {
            drop(shared.lock.lock().unwrap_or_else(|e| e.into_inner()));
            shared.wake.notify_all();
        }
        let start = Instant::now();
        let mine = job.work(0).max(1) as u32;
        let worked = start.elapsed();
        wait_until(|| job.done.load(SeqCst) == count);
        let waited = start.elapsed() - worked;
        // A helper reads the pointer only after counting itself active: once
        // the pointer is withdrawn, none can take it any more, and those that
        // hold it are counted.
        shared.job.store(std::ptr::null_mut(), SeqCst);
        wait_until(|| shared.active.load(SeqCst) == 0);
        let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        (worked / mine, waited)
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        let shared = &*self.shared;
        shared.quit.store(true, SeqCst);
        shared.epoch.fetch_add(1, SeqCst);
        drop(shared.lock.lock().unwrap_or_else(|e| e.into_inner()));
        shared.wake.notify_all();
        for helper in self.helpers.drain(..) {
            // A helper's tasks do not panic out of it (they are caught).
            let _ = helper.join();
        }
    }
}

impl Shared {
    /// Helper `t`'s loop: waits for a step, works on it, until the team ends.
    fn help(&self, t: usize) {
        // From the team's first epoch, not the one this thread finds when it
        // starts: the team may have stepped, or ended, before it ran.
        let mut seen = 0;
        loop {
            seen = self.next_epoch(seen);
            if self.quit.load(SeqCst) {
                return;
            }
            self.active.fetch_add(1, SeqCst);
            let job = self.job.load(SeqCst);
            if !job.is_null() {
                // SAFETY: the job was published and not yet withdrawn when
                // read, after this helper counted itself active, so `run`
                // waits for it to uncount itself before the job goes away.
                unsafe { &*job }.work(t);
            }
            self.active.fetch_sub(1, SeqCst);
        }
    }

    /// Waits until the epoch is past `seen` (spinning for [`SPIN`], then
    /// asleep) and returns it.
    fn next_epoch(&self, seen: u64) -> u64 {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            let epoch = self.epoch.load(SeqCst);
            if epoch != seen {
                return epoch;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && start.elapsed() >= SPIN {
                break;
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Counted asleep before the last look at the epoch: a step opened
        // after that look sees the count and wakes this thread.
        self.sleepers.fetch_add(1, SeqCst);
        while self.epoch.load(SeqCst) == seen {
            guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, SeqCst);
        self.epoch.load(SeqCst)
    }
}

impl Job<'_> {
    /// Thread `t`'s work: the tasks left in its share, then in the others';
    /// how many it ran.
    fn work(&self, t: usize) -> usize {
        let mut ran = 0;
        for s in (t..self.threads).chain(0..t) {
            let end = share(self.count, self.threads, s).end;
            loop {
                let task = self.next[s].0.fetch_add(1, SeqCst);
                if task >= end {
                    break;
                }
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (self.run)(task))) {
                    let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert(payload);
                }
                self.done.fetch_add(1, SeqCst);
                ran += 1;
            }
        }
        ran
    }
}

/// The tasks of `count` that are thread `t`'s of `threads`: consecutive
/// ones, as many to each thread as can be (one fewer to the first threads
/// where they do not divide evenly).
pub fn share(count: usize, threads: usize, t: usize) -> std::ops::Range<usize> {
    count * t / threads..count * (t + 1) / threads
}

/// Waits until `done()`: spinning for [`WAIT_SPIN`], then yielding the core
/// between looks (a helper running a task may have lost its core).
fn wait_until(done: impl Fn() -> bool) {
    let start = Instant::now();
    let mut spins = 0u32;
    while !done() {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(64) && start.elapsed() >= WAIT_SPIN {
            std::thread::yield_now();
        }
    }
}
