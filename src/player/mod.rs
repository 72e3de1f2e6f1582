//! A GGP player: the match protocol's logic (START, PLAY, STOP, ABORT, INFO,
//! PREVIEW) over the agent API, apart from any transport; `ggpnet play` serves
//! it over HTTP.
//!
//! Each match keeps its game, its current state and its search: a UCT tree per
//! thread (root parallelism), kept between moves and advanced by the joint
//! move the manager reports. Requests of different matches run at once; a
//! match that is never stopped is freed after [`PlayerConfig::idle_timeout`].
//! UCT evaluates a new leaf by one scalar playout or by a batch of lane
//! playouts, whichever gave it more iterations per second when measured at
//! START ([`Leaves`]; `leaves.rs` says why that measure decides).
//!
//! Timing: a START is answered `ready` before its clock runs out even when
//! compiling takes longer (compilation goes on in the background; grounding
//! past half the start clock falls back to the interpreter); a PLAY is
//! answered [`PlayerConfig::margin`] before its clock runs out, plus how late
//! recent answers were past their own deadlines (measured, so a loaded machine
//! answers earlier), with the best move found so far, or a random legal move if
//! the search failed.
//!
//! A real-time GDL (rtGDL) game is played by its own logic (`realtime.rs`):
//! every PLAY carries the game time, the player replays the updates and the
//! silent expiries between them, and a request may be held until its role
//! has a legal move.

mod belief;
mod cpu;
mod lateness;
mod leaves;
mod message;
mod realtime;
mod uct;

pub use message::{Message, News};
pub use realtime::{simulated_players, THINK_FRACTION};

use crate::{
    Budget, Config, EngineChoice, Error, Game, Machine, Move, PlayoutEnd, Playouts, SettingError, State,
    Stream,
};
use belief::{Belief, Update};
use cpu::Cpu;
use lateness::Lateness;
use leaves::LeafChoice;
use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use uct::{LeafEvaluator, Tree};

/// How the player chooses its moves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Search {
    /// A uniformly random legal move.
    Random,
    /// Flat Monte-Carlo: random playouts after each of its moves (on the
    /// fastest evaluator, lanes included), the best average goal.
    Mc,
    /// UCT, one tree per thread, kept between moves.
    Uct,
}

impl Search {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Search::Random => "random",
            Search::Mc => "mc",
            Search::Uct => "uct",
        }
    }
}

/// How UCT evaluates a new leaf of its tree.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Leaves {
    /// Measured once at the start of each match, within its start clock: the
    /// kind that gives UCT more iterations per second (the START reply's log
    /// line says which, and the rates measured).
    Auto,
    /// One random playout on the machine's scalar evaluator (or the interpreter).
    Scalar,
    /// A batch of playouts on the propnet's lanes evaluator, one per lane,
    /// all from the leaf, backed up as one visit with their mean (one scalar
    /// playout on the interpreter, which has no lanes).
    Lanes,
}

impl Leaves {
    /// Every kind, in the order the command line lists them.
    pub const ALL: [Leaves; 3] = [Leaves::Auto, Leaves::Scalar, Leaves::Lanes];

    /// Its name on the command line.
    ///
    /// ```
    /// use ggpnet::player::Leaves;
    /// assert_eq!(Leaves::ALL.map(Leaves::name), ["auto", "scalar", "lanes"]);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Leaves::Auto => "auto",
            Leaves::Scalar => "scalar",
            Leaves::Lanes => "lanes",
        }
    }
}

/// Settings of a [`Player`], built from [`PlayerConfig::new`] by builder
/// methods; counts that must be positive are checked by their methods.
///
/// ```
/// use ggpnet::player::{PlayerConfig, Search};
/// use std::time::Duration;
/// let config = PlayerConfig::new()
///     .search(Search::Mc)
///     .margin(Duration::from_millis(500))
///     .threads(2)?;
/// assert_eq!(config.get_threads(), 2);
/// assert!(PlayerConfig::new().threads(0).is_err());
/// # Ok::<(), ggpnet::SettingError>(())
/// ```
#[derive(Clone, Debug)]
pub struct PlayerConfig {
    name: String,
    search: Search,
    threads: usize,
    margin: Duration,
    max_matches: usize,
    max_tree_nodes: usize,
    leaves: Leaves,
    idle_timeout: Duration,
    belief_states: usize,
    game: Config,
}

impl PlayerConfig {
    /// The defaults: UCT on one thread, 0.3 s of margin, 64 matches at once.
    pub fn new() -> PlayerConfig {
        PlayerConfig::default()
    }

    /// The name INFO reports.
    pub fn name(mut self, name: impl Into<String>) -> PlayerConfig {
        self.name = name.into();
        self
    }

    /// How moves are chosen.
    pub fn search(mut self, search: Search) -> PlayerConfig {
        self.search = search;
        self
    }

    /// Threads a search runs on (1 to [`MAX_THREADS`](crate::MAX_THREADS)).
    pub fn threads(mut self, threads: usize) -> Result<PlayerConfig, SettingError> {
        if !(1..=crate::MAX_THREADS).contains(&threads) {
            return Err(SettingError::Threads(threads));
        }
        self.threads = threads;
        Ok(self)
    }

    /// How long before its clock runs out a START or PLAY is answered (at
    /// most a quarter of the clock).
    pub fn margin(mut self, margin: Duration) -> PlayerConfig {
        self.margin = margin;
        self
    }

    /// Matches played at once (at least 1); a START past this is answered `busy`.
    pub fn max_matches(mut self, matches: usize) -> Result<PlayerConfig, SettingError> {
        self.max_matches = at_least_one("max matches", matches)?;
        Ok(self)
    }

    /// Nodes of a match's UCT trees (at least 1), split among its threads (a
    /// bound on its memory: about a kilobyte per node on connect four).
    pub fn max_tree_nodes(mut self, nodes: usize) -> Result<PlayerConfig, SettingError> {
        self.max_tree_nodes = at_least_one("max tree nodes", nodes)?;
        Ok(self)
    }

    /// How UCT evaluates its leaves (in GDL-I games; [`Leaves::Auto`] by default).
    pub fn leaves(mut self, leaves: Leaves) -> PlayerConfig {
        self.leaves = leaves;
        self
    }

    /// A match with no message for this long (beyond its play clock) is freed.
    pub fn idle_timeout(mut self, timeout: Duration) -> PlayerConfig {
        self.idle_timeout = timeout;
        self
    }

    /// States a GDL-II match keeps in its sample of the states its percepts
    /// allow (at least 1: a bound on the work of each step).
    pub fn belief_states(mut self, states: usize) -> Result<PlayerConfig, SettingError> {
        self.belief_states = at_least_one("belief states", states)?;
        Ok(self)
    }

    /// How games load (engine, limits).
    pub fn game(mut self, game: Config) -> PlayerConfig {
        self.game = game;
        self
    }

    /// See [`PlayerConfig::name`].
    pub fn get_name(&self) -> &str {
        &self.name
    }

    /// See [`PlayerConfig::search`].
    pub fn get_search(&self) -> Search {
        self.search
    }

    /// See [`PlayerConfig::threads`].
    pub fn get_threads(&self) -> usize {
        self.threads
    }

    /// See [`PlayerConfig::leaves`].
    pub fn get_leaves(&self) -> Leaves {
        self.leaves
    }

    /// See [`PlayerConfig::game`].
    pub fn get_game(&self) -> &Config {
        &self.game
    }

    /// The margin kept on a clock of `clock`: [`PlayerConfig::margin`], but at
    /// most a quarter of the clock.
    fn margin_for(&self, clock: Duration) -> Duration {
        self.margin.min(clock / 4)
    }
}

/// `count` if it is at least 1, else the error for `setting`.
fn at_least_one(setting: &'static str, count: usize) -> Result<usize, SettingError> {
    match count {
        0 => Err(SettingError::Zero(setting)),
        _ => Ok(count),
    }
}

impl Default for PlayerConfig {
    fn default() -> PlayerConfig {
        PlayerConfig {
            name: "ggpnet".to_owned(),
            search: Search::Uct,
            threads: 1,
            margin: Duration::from_millis(300),
            max_matches: 64,
            max_tree_nodes: 250_000,
            leaves: Leaves::Auto,
            idle_timeout: Duration::from_secs(600),
            belief_states: 256,
            game: Config::default(),
        }
    }
}

/// What choosing one move needs besides the match: the game, the role
/// played, the deadline, the settings and the cores.
#[derive(Clone, Copy)]
struct Turn<'a> {
    game: &'a Game,
    role: usize,
    deadline: Instant,
    config: &'a PlayerConfig,
    cpu: &'a Cpu,
}

/// A match under way.
struct Match {
    /// The game once loaded, or the load still under way.
    game: Loading,
    role_name: String,
    play_clock: Duration,
    /// The current state (once the game is loaded; in a GDL-II game, the initial state).
    state: Option<State>,
    /// In a GDL-II game, the states this player's moves and percepts allow.
    belief: Option<Belief>,
    /// The last move this player sent (a GDL-II manager may not repeat it).
    sent: Option<Move>,
    /// Per search thread: its machine, random stream and tree.
    workers: Vec<Worker>,
    /// How UCT evaluates leaves in this match, once the game is loaded.
    leaves: Option<LeafChoice>,
    last_seen: Instant,
}

enum Loading {
    Done(Game),
    /// The compilation under way, and the rules (to load them on the
    /// interpreter if it does not finish in time).
    Pending(Receiver<Result<Game, String>>, String),
    Failed(String),
}

struct Worker {
    machine: Machine,
    rng: Stream,
    tree: Option<Tree>,
    leaves: LeafEvaluator,
}

/// The player: every match it plays, shared by the threads serving requests.
pub struct Player {
    config: PlayerConfig,
    matches: Mutex<HashMap<String, Arc<Mutex<Match>>>>,
    /// The cores searches share, whatever the number of matches.
    cpu: Cpu,
    /// How late recent answers were past their deadline, added to the
    /// margin: measured, so that a loaded machine answers earlier.
    lateness: Lateness,
    /// The rtGDL matches, played apart.
    realtime: realtime::RtMatches,
}

/// What the player answers, and a line saying what it did, for the log.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Reply {
    /// The reply to send.
    pub text: String,
    /// What happened, in a few words.
    pub note: String,
}

impl Reply {
    fn new(text: impl Into<String>, note: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            note: note.into(),
        }
    }
}

impl Player {
    /// A player with no match.
    pub fn new(config: PlayerConfig) -> Player {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Player {
            config,
            matches: Mutex::new(HashMap::new()),
            cpu: Cpu::new(cores),
            lateness: Lateness::new(),
            realtime: realtime::RtMatches::default(),
        }
    }

    /// Answers one message received at `received` (clocks count from then).
    pub fn handle(&self, text: &str, received: Instant) -> Reply {
        self.forget_idle(received);
        match Message::parse(text) {
            Err(e) => Reply::new("error", format!("unreadable message: {e}")),
            Ok(Message::Info) => {
                let busy = self.matches() >= self.config.max_matches;
                let status = if busy { "busy" } else { "available" };
                Reply::new(
                    format!("( ( name {} ) ( status {status} ) )", self.config.name),
                    "info",
                )
            }
            Ok(Message::Preview) => Reply::new("ready", "preview"),
            Ok(Message::Start {
                id,
                role,
                rules,
                start_clock,
                play_clock,
            }) => self.start(id, role, rules, start_clock, play_clock, received),
            Ok(Message::Play { id, news }) if self.realtime.has(&id) => {
                self.realtime.play(&id, news, received, &self.config)
            }
            // An rtGDL PLAY of a match this player does not play: no move (a
            // reply that is no move would be answered by another PLAY).
            Ok(Message::Play {
                id,
                news: News::Timed { .. },
            }) => Reply::new("NIL", format!("no match {id}")),
            Ok(Message::Play { id, news }) => self.play(&id, news, received),
            Ok(Message::Stop { id, .. }) if self.realtime.has(&id) => self.realtime.end(&id, "done"),
            Ok(Message::Abort { id }) if self.realtime.has(&id) => self.realtime.end(&id, "aborted"),
            Ok(Message::Stop { id, .. }) => self.end(&id, "done"),
            Ok(Message::Abort { id }) => self.end(&id, "aborted"),
        }
    }

    fn lock_matches(&self) -> MutexGuard<'_, HashMap<String, Arc<Mutex<Match>>>> {
        self.matches.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn start(
        &self,
        id: String,
        role: String,
        rules: String,
        start_clock: Duration,
        play_clock: Duration,
        received: Instant,
    ) -> Reply {
        let mut matches = self.lock_matches();
        if matches.contains_key(&id) {
            return Reply::new("ready", format!("match {id} already started"));
        }
        let under_way = matches.len() + self.realtime.len();
        if under_way >= self.config.max_matches {
            return Reply::new("busy", format!("{under_way} matches under way"));
        }
        if crate::realtime::is_rtgdl(&rules) {
            drop(matches);
            let realtime = &self.realtime;
            return realtime.start(id, role, &rules, start_clock, play_clock, &self.config);
        }
        let (send, receive) = std::sync::mpsc::channel();
        let config = self.config.game.clone().max_ground_time(Some(start_clock / 2));
        let text = rules.clone();
        std::thread::spawn(move || {
            let game = Game::load(&text, &config).map_err(|e| e.to_string());
            if let Ok(game) = &game {
                // Calibrates the playout evaluator now, not during a PLAY.
                game.evaluator();
            }
            let _ = send.send(game);
        });
        let entry = Match {
            game: Loading::Pending(receive, rules),
            role_name: role,
            play_clock,
            state: None,
            belief: None,
            sent: None,
            workers: Vec::new(),
            leaves: None,
            last_seen: received,
        };
        let entry = Arc::new(Mutex::new(entry));
        matches.insert(id.clone(), Arc::clone(&entry));
        drop(matches);
        let deadline = received + start_clock - self.config.margin_for(start_clock);
        let mut entry = entry.lock().unwrap_or_else(|e| e.into_inner());
        entry.wait_for_game(deadline, &self.config, Some(&self.cpu));
        let note = match &entry.game {
            Loading::Done(game) => match &entry.leaves {
                Some(leaves) => format!("match {id}: loaded on the {}, {}", game.engine(), leaves.note()),
                None => format!("match {id}: loaded on the {}", game.engine()),
            },
            Loading::Pending(..) => format!("match {id}: still compiling"),
            Loading::Failed(e) => format!("match {id}: cannot load the game: {e}"),
        };
        Reply::new("ready", note)
    }

    fn play(&self, id: &str, news: News, received: Instant) -> Reply {
        let Some(entry) = self.lock_matches().get(id).cloned() else {
            return Reply::new("busy", format!("no match {id}"));
        };
        let mut entry = entry.lock().unwrap_or_else(|e| e.into_inner());
        entry.last_seen = received;
        let clock = entry.play_clock;
        let deadline = received + clock - self.margin(clock);
        entry.wait_for_game(deadline, &self.config, None);
        let chosen = entry.choose(news, deadline, &self.config, &self.cpu);
        let now = Instant::now();
        self.lateness.record(now.saturating_duration_since(deadline), now);
        match chosen {
            Ok((text, note)) => Reply::new(text, format!("match {id}: {note}")),
            Err(e) => Reply::new("error", format!("match {id}: {e}")),
        }
    }

    /// The margin kept on a PLAY clock of `clock`: the configured one plus
    /// the recent lateness, at most half the clock.
    fn margin(&self, clock: Duration) -> Duration {
        let late = self.lateness.at(Instant::now());
        (self.config.margin_for(clock) + late).min(clock / 2)
    }

    fn end(&self, id: &str, reply: &str) -> Reply {
        match self.lock_matches().remove(id) {
            Some(_) => Reply::new(reply, format!("match {id} freed")),
            None => Reply::new(reply, format!("no match {id}")),
        }
    }

    /// Frees the matches that have had no message for their play clock plus the idle timeout.
    fn forget_idle(&self, now: Instant) {
        let timeout = self.config.idle_timeout;
        self.realtime.forget_idle(now, timeout);
        self.lock_matches().retain(|_, entry| match entry.try_lock() {
            Ok(m) => now.saturating_duration_since(m.last_seen) < m.play_clock + timeout,
            Err(_) => true,
        });
    }

    /// The number of matches under way.
    pub fn matches(&self) -> usize {
        self.lock_matches().len() + self.realtime.len()
    }
}

impl Match {
    /// Waits until `deadline` for a game still compiling; past it, when the
    /// propnet is not ready, loads the game on the interpreter instead. With
    /// `cpu` (at START), the time left until `deadline` may measure UCT's leaves.
    fn wait_for_game(&mut self, deadline: Instant, config: &PlayerConfig, cpu: Option<&Cpu>) {
        let Loading::Pending(receive, _) = &self.game else {
            return;
        };
        let wait = deadline.saturating_duration_since(Instant::now());
        self.game = match receive.recv_timeout(wait) {
            Ok(Ok(game)) => Loading::Done(game),
            Ok(Err(e)) => Loading::Failed(e),
            Err(RecvTimeoutError::Timeout) => return,
            Err(RecvTimeoutError::Disconnected) => Loading::Failed("the loader stopped".to_owned()),
        };
        if let Loading::Done(game) = &self.game {
            self.begin(game.clone(), config, cpu.map(|cpu| (deadline, cpu)));
        }
    }

    /// Sets up the match on `game`: its role, initial state, leaf evaluation
    /// (measured by the deadline of `measure`, if any) and workers.
    fn begin(&mut self, game: Game, config: &PlayerConfig, measure: Option<(Instant, &Cpu)>) {
        let role = &self.role_name;
        if !game.roles().iter().any(|r| r.eq_ignore_ascii_case(role)) {
            self.game = Loading::Failed(format!("the game has no role {role}"));
            return;
        }
        self.state = Some(game.initial_state());
        if game.is_gdl2() {
            let index = role_index(&game, role).expect("checked above");
            self.belief = Some(Belief::new(game.initial_state(), index, config.belief_states));
        }
        let leaves = (config.search == Search::Uct && !game.is_gdl2()).then(|| {
            let nodes = config.max_tree_nodes / config.threads.max(1);
            leaves::choose(&game, config.leaves, measure, nodes)
        });
        self.workers = (0..config.threads.max(1))
            .map(|t| Worker {
                machine: game.machine(),
                rng: Stream::new(0x6767_706e_6574, t as u64),
                tree: None,
                leaves: leaves
                    .as_ref()
                    .map_or_else(LeafEvaluator::scalar, |l| l.evaluator(&game)),
            })
            .collect();
        self.leaves = leaves;
        self.game = Loading::Done(game);
    }

    /// The game; if it is still compiling, the game loaded on the interpreter
    /// instead (for the rest of the match).
    fn game(&mut self, config: &PlayerConfig) -> Result<Game, String> {
        if let Loading::Pending(_, rules) = &self.game {
            let interpreter = config.game.clone().engine(EngineChoice::Interpreter);
            match Game::load(rules, &interpreter) {
                Ok(game) => self.begin(game, config, None),
                Err(e) => self.game = Loading::Failed(e.to_string()),
            }
        }
        match &self.game {
            Loading::Done(game) => Ok(game.clone()),
            Loading::Failed(e) => Err(e.clone()),
            Loading::Pending(..) => Err("the game is still compiling".to_owned()),
        }
    }

    /// Takes in what the manager tells of the last step, then chooses this
    /// player's move by `deadline`: its text, and a note for the log.
    fn choose(
        &mut self,
        news: News,
        deadline: Instant,
        config: &PlayerConfig,
        cpu: &Cpu,
    ) -> Result<(String, String), String> {
        let game = self.game(config)?;
        let role = role_index(&game, &self.role_name).ok_or("no such role")?;
        let turn = Turn {
            game: &game,
            role,
            deadline,
            config,
            cpu,
        };
        let (m, note) = match self.belief.is_some() {
            false => self.choose_gdl1(&turn, news)?,
            true => self.choose_gdl2(&turn, news)?,
        };
        self.sent = Some(m.clone());
        Ok((game.move_to_kif(&m).map_err(|e| e.to_string())?, note))
    }

    /// [`Match::choose`] in a GDL-I game: the news is the joint move played.
    fn choose_gdl1(&mut self, turn: &Turn, news: News) -> Result<(Move, String), String> {
        let joint = match news {
            News::List(joint) => joint,
            News::Turn { .. } => {
                return Err("a PLAY of the GDL-II form for a game without percepts".to_owned())
            }
            News::Timed { .. } => return Err("a PLAY with a game time (rtGDL) in a GDL match".to_owned()),
        };
        let mut state = self.state.clone().ok_or("the match has no state")?;
        if let Some(texts) = joint {
            let moves = read_joint(turn.game, &texts).map_err(|e| e.to_string())?;
            state = self.workers[0]
                .machine
                .next_state(&state, &moves)
                .map_err(|e| e.to_string())?;
            for worker in &mut self.workers {
                if let Some(tree) = &mut worker.tree {
                    tree.advance(&mut worker.machine, &moves, state.clone())
                        .map_err(|e| e.to_string())?;
                }
            }
            self.state = Some(state.clone());
        }
        let chosen = match turn.config.search {
            Search::Uct => self.uct(&state, turn.role, turn.deadline, turn.config, turn.cpu),
            Search::Mc => flat_mc(
                turn.game,
                &mut self.workers[0],
                &state,
                turn.role,
                turn.deadline,
                turn.config.threads,
            ),
            Search::Random => Err(NoChoice::Random),
        };
        match chosen {
            Ok(found) => Ok(found),
            Err(e) => {
                let worker = &mut self.workers[0];
                let m = worker
                    .machine
                    .random_move(&state, turn.role, &mut worker.rng)
                    .map_err(|e| e.to_string())?
                    .ok_or("no legal move")?;
                Ok((m, random_note(turn.config.search, &e)))
            }
        }
    }

    /// [`Match::choose`] in a GDL-II game: the news is this player's percepts
    /// (and, in the 2013 form, its own move as applied); the move is chosen
    /// over the states they allow.
    fn choose_gdl2(&mut self, turn: &Turn, news: News) -> Result<(Move, String), String> {
        let step = match news {
            News::List(None) | News::Turn { turn: 0, .. } => None,
            News::List(Some(percepts)) => Some((self.sent.clone(), percepts)),
            News::Timed { .. } => return Err("a PLAY with a game time (rtGDL) in a GDL-II match".to_owned()),
            News::Turn { own, percepts, .. } => {
                let own = match own {
                    Some(text) => Some(read_move(turn.game, turn.role, &text).map_err(|e| e.to_string())?),
                    None => None,
                };
                Some((own, percepts))
            }
        };
        let belief = self.belief.as_mut().ok_or("the match has no belief")?;
        let worker = &mut self.workers[0];
        let mut note = String::new();
        if let Some((own, percepts)) = step {
            // Half the time to the deadline at most for taking the percepts in.
            let now = Instant::now();
            let by = now + turn.deadline.saturating_duration_since(now) / 2;
            let update = belief
                .update(&mut worker.machine, own, &percepts, &mut worker.rng, by)
                .map_err(|e| e.to_string())?;
            note = match update {
                Update::Filtered => String::new(),
                Update::Resampled => "resampled, ".to_owned(),
                Update::Lost => "no state fits the percepts, ".to_owned(),
            };
        }
        let belief = self.belief.as_ref().expect("checked above");
        let candidates = belief
            .candidates(&mut worker.machine)
            .map_err(|e| e.to_string())?;
        let states = belief.states().len();
        let chosen = match (turn.config.search, candidates.len()) {
            (_, 0) => return Err("no legal move in any state the percepts allow".to_owned()),
            (Search::Random, _) | (_, 1) => {
                let m = candidates[worker.rng.draw(candidates.len())].clone();
                (m, format!("{note}{} candidates", candidates.len()))
            }
            _ => {
                let (m, how) = sampled_mc(
                    &mut self.workers,
                    belief.states(),
                    &candidates,
                    turn.role,
                    turn.deadline,
                    turn.cpu,
                )
                .map_err(|e| e.to_string())?;
                (m, format!("{note}{how}"))
            }
        };
        Ok((chosen.0, format!("{}, over {states} sampled states", chosen.1)))
    }

    /// UCT on every worker until `deadline`; the move most visited over all trees.
    fn uct(
        &mut self,
        state: &State,
        role: usize,
        deadline: Instant,
        config: &PlayerConfig,
        cpu: &Cpu,
    ) -> Result<(Move, String), NoChoice> {
        let nodes_per_tree = config.max_tree_nodes / self.workers.len().max(1);
        let results = on_every_worker(&mut self.workers, |w| {
            w.search(state, role, deadline, nodes_per_tree, cpu)
        });
        let mut visits: Vec<(Move, u64)> = Vec::new();
        let (mut iterations, mut playouts) = (0, 0);
        for result in results {
            let searched = result?;
            iterations += searched.iterations;
            playouts += searched.playouts;
            for (i, (m, n)) in searched.root.into_iter().enumerate() {
                match visits.get_mut(i) {
                    Some(slot) => slot.1 += n,
                    None => visits.push((m, n)),
                }
            }
        }
        let total: u64 = visits.iter().map(|v| v.1).sum();
        let best = visits
            .into_iter()
            .max_by_key(|v| v.1)
            .ok_or(NoChoice::NoLegalMove)?;
        let kind = match self.workers.first().is_some_and(|w| w.leaves.on_lanes()) {
            true => "lanes",
            false => "scalar",
        };
        Ok((
            best.0,
            format!(
                "uct, {total} visits at the root, {iterations} iterations and {playouts} playouts \
                 on {kind} leaves"
            ),
        ))
    }
}

/// What one worker's search of a move found and did.
struct Searched {
    /// The root moves of the role searched for, with their visits.
    root: Vec<(Move, u64)>,
    /// Iterations backed up in this search.
    iterations: u64,
    /// Playouts run for its leaves.
    playouts: u64,
}

impl Worker {
    /// Searches from `state` until `deadline`, for `role`.
    fn search(
        &mut self,
        state: &State,
        role: usize,
        deadline: Instant,
        max_nodes: usize,
        cpu: &Cpu,
    ) -> Result<Searched, NoChoice> {
        if self.tree.as_ref().is_none_or(|t| t.root() != state) {
            self.tree = Some(Tree::new(&mut self.machine, state.clone(), max_nodes)?);
        }
        let tree = self.tree.as_mut().expect("set above");
        let before = self.leaves.playouts();
        let iterations = tree.search(&mut self.machine, &mut self.rng, &mut self.leaves, deadline, cpu)?;
        Ok(Searched {
            root: tree.root_visits(role),
            iterations,
            playouts: self.leaves.playouts() - before,
        })
    }
}

impl Worker {
    /// Playouts from the sampled `states` until `deadline`, each of the
    /// `candidates` in turn: per candidate, the sum of `role`'s goals and the
    /// number of playouts.
    fn sample(
        &mut self,
        states: &[State],
        candidates: &[Move],
        role: usize,
        deadline: Instant,
        cpu: &Cpu,
    ) -> Result<Vec<(f64, u64)>, NoChoice> {
        let mut totals = vec![(0.0, 0u64); candidates.len()];
        let roles = self.machine.game().roles().len();
        let mut turn = 0;
        while let Some(slice) = cpu.slice(deadline) {
            while Instant::now() < slice.end() {
                let c = turn % candidates.len();
                turn += 1;
                let state = &states[self.rng.draw(states.len())];
                if !self.machine.legal_moves(state, role)?.contains(&candidates[c]) {
                    continue;
                }
                let mut joint = Vec::with_capacity(roles);
                for r in 0..roles {
                    joint.push(match r == role {
                        true => Some(candidates[c].clone()),
                        false => self.machine.random_move(state, r, &mut self.rng)?,
                    });
                }
                let Some(joint) = joint.into_iter().collect::<Option<Vec<Move>>>() else {
                    continue;
                };
                let next = self.machine.next_state(state, &joint)?;
                let goal = match self.machine.playout(&next, &mut self.rng)? {
                    PlayoutEnd::Terminal { goals, .. } => goals[role].unwrap_or(0),
                    PlayoutEnd::Abandoned { .. } => 0,
                };
                totals[c].0 += goal as f64;
                totals[c].1 += 1;
            }
        }
        Ok(totals)
    }
}

/// Flat Monte-Carlo from `state`: each of `role`'s moves gets an equal share of
/// the time left, with the other roles' moves drawn at random; the best average goal wins.
fn flat_mc(
    game: &Game,
    worker: &mut Worker,
    state: &State,
    role: usize,
    deadline: Instant,
    threads: usize,
) -> Result<(Move, String), NoChoice> {
    let candidates = worker.machine.legal_moves(state, role)?;
    if candidates.len() < 2 {
        let only = candidates.into_iter().next().ok_or(NoChoice::NoLegalMove)?;
        return Ok((only, "mc, one legal move".to_owned()));
    }
    let mut best: Option<(Move, f64)> = None;
    let mut total = 0;
    let count = candidates.len() as u32;
    for (done, candidate) in (0..count).zip(candidates) {
        let mut joint = Vec::new();
        for r in 0..game.roles().len() {
            joint.push(match r == role {
                true => candidate.clone(),
                false => worker
                    .machine
                    .random_move(state, r, &mut worker.rng)?
                    .ok_or(NoChoice::NoLegalMove)?,
            });
        }
        let next = worker.machine.next_state(state, &joint)?;
        // An equal share of the time left, so that an overrun is made up.
        let share = deadline.saturating_duration_since(Instant::now()) / (count - done);
        let seconds = share.as_secs_f64().max(1e-3);
        let how = Playouts::new(Budget::Seconds(seconds))
            .threads(threads)
            .seed(worker.rng.next_u64());
        let report = game.playouts(&next, &how)?;
        let t = &report.totals;
        let finished = t.playouts - t.missing_goals[role];
        let average = t.goal_sums[role] / finished.max(1) as f64;
        total += t.playouts;
        if best.as_ref().is_none_or(|(_, a)| average > *a) {
            best = Some((candidate, average));
        }
    }
    let (m, average) = best.expect("two candidates or more");
    Ok((m, format!("mc, {total} playouts, best average {average:.1}")))
}

/// Flat Monte-Carlo over sampled states: on every worker until `deadline`,
/// each of the `candidates` in turn from a state of `states` drawn at random,
/// with the other roles' moves drawn at random, then a random playout; the
/// candidate with the best average goal of `role`. A candidate is not tried in
/// a state where it is illegal.
fn sampled_mc(
    workers: &mut [Worker],
    states: &[State],
    candidates: &[Move],
    role: usize,
    deadline: Instant,
    cpu: &Cpu,
) -> Result<(Move, String), NoChoice> {
    let results = on_every_worker(workers, |w| w.sample(states, candidates, role, deadline, cpu));
    let mut totals = vec![(0.0, 0u64); candidates.len()];
    for result in results {
        for (total, (sum, n)) in totals.iter_mut().zip(result?) {
            total.0 += sum;
            total.1 += n;
        }
    }
    let average = |(sum, n): (f64, u64)| if n == 0 { f64::NEG_INFINITY } else { sum / n as f64 };
    let best = (0..candidates.len())
        .max_by(|&a, &b| average(totals[a]).total_cmp(&average(totals[b])))
        .expect("two candidates or more");
    let playouts: u64 = totals.iter().map(|t| t.1).sum();
    Ok((
        candidates[best].clone(),
        format!(
            "mc, {playouts} playouts, best average {:.1}",
            average(totals[best])
        ),
    ))
}

/// Why a search chose no move; the player then plays a random legal move and
/// notes why.
#[derive(Debug)]
enum NoChoice {
    /// Random play was asked for.
    Random,
    /// A role has no legal move in the state searched.
    NoLegalMove,
    /// A search thread panicked.
    Panicked,
    /// The game refused a query.
    Game(Error),
}

impl From<Error> for NoChoice {
    fn from(e: Error) -> NoChoice {
        NoChoice::Game(e)
    }
}

impl fmt::Display for NoChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoChoice::Random => f.write_str("random"),
            NoChoice::NoLegalMove => f.write_str("no legal move"),
            NoChoice::Panicked => f.write_str("a search thread panicked"),
            NoChoice::Game(e) => e.fmt(f),
        }
    }
}

/// Runs `search` on every worker, each in a thread of its own; their results
/// in worker order (a thread that panicked gives an error).
fn on_every_worker<T: Send>(
    workers: &mut [Worker],
    search: impl Fn(&mut Worker) -> Result<T, NoChoice> + Sync,
) -> Vec<Result<T, NoChoice>> {
    std::thread::scope(|scope| {
        let search = &search;
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|w| scope.spawn(move || search(w)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(NoChoice::Panicked)))
            .collect()
    })
}

/// The note of a random move: chosen so, or after the search failed with `e`.
fn random_note(search: Search, e: &NoChoice) -> String {
    match search {
        Search::Random => "random".to_owned(),
        _ => format!("random ({e})"),
    }
}

/// The number of role `name` (case-insensitive, as managers may upper-case it).
fn role_index(game: &Game, name: &str) -> Option<usize> {
    game.roles().iter().position(|r| r.eq_ignore_ascii_case(name))
}

/// The move `text` of `role`, matched exactly, then case-insensitively (the
/// Dresden GameController upper-cases everything).
fn read_move(game: &Game, role: usize, text: &str) -> Result<Move, Error> {
    game.parse_move(role, text)
        .or_else(|e| game.parse_move(role, &text.to_lowercase()).map_err(|_| e))
}

/// The joint move given as texts, one per role (each read by [`read_move`]).
fn read_joint(game: &Game, texts: &[String]) -> Result<Vec<Move>, Error> {
    if texts.len() != game.roles().len() {
        return Err(Error::Refused(crate::propnet::MachineError::WrongJointLength {
            expected: game.roles().len(),
            found: texts.len(),
        }));
    }
    texts
        .iter()
        .enumerate()
        .map(|(role, text)| read_move(game, role, text))
        .collect()
}
