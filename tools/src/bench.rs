//! `ggpnet bench`: flat Monte-Carlo with every evaluator on one thread and on
//! every core (median of a few alternating runs), and perft, on the anchor
//! games; a JSON report and a markdown table that puts the peers' figures
//! measured on this CPU beside ours, with the ratios (see [`super::peers`]:
//! on another CPU, those of `anchors/peers-epyc.json`, said to cross
//! machines). Perft runs to the depth of the RBG compiler's bulk-counting
//! perft where the peer file has one, so that the two times compare the same
//! tree; else to the depth of the game's trace. Rates are state transitions
//! (joint moves applied) per second.

use super::peers::{peer_file, PeerFile};
use super::{load_game, Failure};
use ggpnet::propnet::driver::{monte_carlo, perft, Budget, McConfig, DEFAULT_MAX_DEPTH, MAX_PERFT_DEPTH};
use ggpnet::propnet::evaluator::{EvaluatorConfig, EvaluatorKind};
use ggpnet_tools::report::{self, Anchors, BenchGame, BenchMeasured, BenchPerft, BenchResult, BenchRun};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The anchor games: those of `anchors/published.md`, by their names in the corpus.
pub const ANCHOR_GAMES: [&str; 11] = [
    "ticTacToe",
    "connectFour_7x6",
    "breakthrough",
    "englishDraughts",
    "reversi",
    "hex",
    "gomoku_15x15",
    "chess_200",
    "speedChess",
    "amazons_10x10",
    "amazons",
];

/// The arguments of `ggpnet bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Games (KIF, .sbg or .rbg files, or names in the corpus's games/); default: the 11 anchor games.
    games: Vec<String>,
    /// Seconds of flat Monte-Carlo per evaluator and thread count.
    #[arg(long, default_value_t = 3.0, value_parser = super::options::seconds)]
    seconds: f64,
    /// Runs those seconds are split into, alternating between the thread
    /// counts; the median run is reported (all runs are in the JSON report), so
    /// that a passing slowdown of a shared machine moves no figure.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,
    /// Threads of the parallel runs (default: every core).
    #[arg(long, value_parser = super::options::threads)]
    threads: Option<usize>,
    /// Only these evaluators (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    evaluators: Vec<EvaluatorKind>,
    /// The corpus directory (games/, traces/, anchors/); default: $GGPNET_CORPUS or ../shared.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Where to write bench.json and bench.md.
    #[arg(long, default_value = "target/bench")]
    out_dir: PathBuf,
    /// Leave perft out (for quick comparisons such as optimizer ablations).
    #[arg(long)]
    skip_perft: bool,
    /// Native code: on (where the platform allows) or off (the interpreters, to measure them).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = super::options::on_off, action = clap::ArgAction::Set)]
    native: bool,
    /// Print the JSON report instead of the markdown table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sharding: super::merge::ShardArgs,
}

/// Runs the benchmark; `Ok(false)` if some perft count differs from its trace.
pub fn run(args: &BenchArgs) -> Result<bool, Failure> {
    let corpus = args
        .corpus
        .clone()
        .or_else(|| ggpnet_tools::corpus::locate(Path::new(".")))
        .ok_or_else(|| Failure::input("no corpus: pass --corpus DIR or set GGPNET_CORPUS".to_owned()))?;
    let names: Vec<String> = if args.games.is_empty() {
        ANCHOR_GAMES.iter().map(|g| g.to_string()).collect()
    } else {
        args.games.clone()
    };
    let mine = args.sharding.shard().select(&names);
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let evaluators = if args.evaluators.is_empty() {
        EvaluatorKind::ALL.to_vec()
    } else {
        args.evaluators.clone()
    };
    let cpu = cpu_model();
    let baselines = Baselines::load(&corpus, &cpu);
    let mut thread_counts = vec![1, threads];
    thread_counts.dedup();
    let runs = Runs {
        args,
        evaluators,
        thread_counts,
    };
    let (rows, all_match) = runs.measure_games(&corpus, &mine, &baselines)?;
    let run = bench_run(args, cpu, threads, &baselines);
    let stems: Vec<String> = names.iter().map(|n| game_stem(&corpus, n)).collect();
    let names: Vec<&str> = stems.iter().map(String::as_str).collect();
    args.sharding
        .write(report::ShardRun::Bench(run.clone()), &names, &rows)?;
    let bench = report::Bench { run, games: rows };
    write_report(args, &bench)?;
    Ok(all_match)
}

/// The report's fields other than the games: this machine, the settings
/// `args` (the parallel runs on `threads` threads), the baselines.
fn bench_run(args: &BenchArgs, cpu: String, threads: usize, baselines: &Baselines) -> BenchRun {
    BenchRun {
        cpu,
        lane_vector_bits: ggpnet::propnet::evaluator::VectorWidth::detect().bits(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        threads,
        seconds: args.seconds,
        repeats: args.repeats,
        unit: "state transitions (joint moves applied) per second".to_owned(),
        peers: report::Peers {
            file: format!("anchors/{}", baselines.peer_file.file),
            measured_on: baselines.peer_file.machine.to_owned(),
            cross_machine: !baselines.same_cpu,
        },
    }
}

/// Whether every perft count of `games` equals its trace's.
pub(crate) fn all_perft_counts_match(games: &[BenchGame]) -> bool {
    games.iter().all(|g| match &g.result {
        BenchResult::Measured(m) => m.perft.as_ref().is_none_or(|p| p.counts_match),
        BenchResult::NotLoaded { .. } => true,
    })
}

/// The figures ours are compared with: the peer file chosen for this CPU,
/// read per game.
struct Baselines {
    peer_file: &'static PeerFile,
    /// Whether the peer file was measured on this CPU.
    same_cpu: bool,
    peers: BTreeMap<String, Anchors>,
}

impl Baselines {
    /// The baselines in `corpus`'s `anchors/` for the CPU named `cpu`.
    fn load(corpus: &Path, cpu: &str) -> Baselines {
        let family = super::proc_field("/proc/cpuinfo", "cpu family").and_then(|f| f.parse().ok());
        let (peer_file, same_cpu) = peer_file(cpu, family);
        Baselines {
            peer_file,
            same_cpu,
            peers: super::peers::read(&corpus.join("anchors"), peer_file),
        }
    }
}

/// What is measured on every game: flat Monte-Carlo with each evaluator on
/// each thread count, as the arguments say.
struct Runs<'a> {
    args: &'a BenchArgs,
    evaluators: Vec<EvaluatorKind>,
    thread_counts: Vec<usize>,
}

impl Runs<'_> {
    /// One row per game of `names` (its measurements, or why it did not
    /// load), and whether every perft count equals its trace's.
    fn measure_games(
        &self,
        corpus: &Path,
        names: &[String],
        baselines: &Baselines,
    ) -> Result<(Vec<BenchGame>, bool), Failure> {
        let repeats = self.args.repeats as usize;
        let mut progress = Progress::new(
            names.len(),
            names.len() * (self.evaluators.len() * self.thread_counts.len() * repeats + 2),
        );
        let mut rows = Vec::new();
        let mut all_match = true;
        for name in names {
            let path = game_path(corpus, name);
            let stem = game_stem(corpus, name);
            progress.show(&stem, "load");
            let anchors = baselines.peers.get(&stem).cloned().unwrap_or_default();
            let result = match load_game(Some(&path)) {
                Err(e) => BenchResult::NotLoaded {
                    error: e.message().to_owned(),
                },
                Ok(loaded) => {
                    let m = self.measure(corpus, &path, &stem, &anchors, loaded, &mut progress)?;
                    all_match &= m.perft.as_ref().is_none_or(|p| p.counts_match);
                    BenchResult::Measured(m)
                }
            };
            progress.done_game();
            rows.push(BenchGame {
                game: stem,
                anchors,
                result,
            });
        }
        progress.finish();
        Ok((rows, all_match))
    }

    /// The figures of the game at `path` (named `stem`, with the peers'
    /// `anchors`), `loaded`: flat Monte-Carlo and perft. On a Regular
    /// Boardgames file both count RBG player moves, perft against the
    /// counts of `traces-rbg/`.
    fn measure(
        &self,
        corpus: &Path,
        path: &Path,
        stem: &str,
        anchors: &Anchors,
        loaded: ggpnet::propnet::Loaded,
        progress: &mut Progress,
    ) -> Result<BenchMeasured, Failure> {
        let rbg = path.extension().is_some_and(|e| e == "rbg");
        let (mc, mc_runs) = self.mc_rates(&loaded.game, stem, rbg, progress)?;
        progress.show(stem, "perft");
        let (init_seconds, components) = (
            report::load_seconds(&loaded.report),
            report::component_count(&loaded.report),
        );
        let perft = match (self.args.skip_perft, rbg) {
            (true, _) => None,
            (false, true) => Some(rbg_perft(corpus, path, loaded, self.args.native)?),
            (false, false) => {
                let rbg_depth = anchors.rbg_perft.as_ref().map(|p| p.depth);
                Some(perft_against_trace(
                    corpus,
                    stem,
                    &loaded.game,
                    rbg_depth,
                    self.args.native,
                ))
            }
        };
        Ok(BenchMeasured {
            init_seconds,
            components,
            mc,
            mc_runs,
            transition_unit: rbg.then(|| report::RBG_PLAYER_MOVE.to_owned()),
            perft,
        })
    }

    /// Flat Monte-Carlo on `game` (named `stem`) with every evaluator and
    /// thread count: the median rate of each (evaluator → threads → rate), and
    /// the rates of all its runs. On the translation of a Regular Boardgames
    /// file (`rbg`), the playouts draw one RBG move at a time and the rates
    /// are RBG player moves per second, as `ggpnet mc GAME.rbg` counts them;
    /// the lanes, which have no per-move draw, are left out.
    fn mc_rates(
        &self,
        game: &std::sync::Arc<ggpnet::propnet::Game>,
        stem: &str,
        rbg: bool,
        progress: &mut Progress,
    ) -> Result<(Rates<f64>, Rates<Vec<f64>>), Failure> {
        let repeats = self.args.repeats as usize;
        let mut mc = BTreeMap::new();
        let mut mc_runs = BTreeMap::new();
        for &kind in self.evaluators.iter().filter(|k| !rbg || k.is_scalar()) {
            let mut runs: Vec<Vec<f64>> = vec![Vec::new(); self.thread_counts.len()];
            for repeat in 0..repeats {
                for (&t, samples) in self.thread_counts.iter().zip(&mut runs) {
                    progress.show(
                        stem,
                        &format!("{kind}, {t} thread(s), run {}/{repeats}", repeat + 1),
                    );
                    let seconds = self.args.seconds / repeats as f64;
                    samples.push(match rbg {
                        true => self.rbg_rate(game, stem, kind, t, seconds)?,
                        false => self.gdl_rate(game, kind, t, seconds)?,
                    });
                }
            }
            let medians = self.thread_counts.iter().zip(&runs).map(|(&t, r)| (t, median(r)));
            mc.insert(kind.name().to_owned(), medians.collect());
            let all = self.thread_counts.iter().copied().zip(runs);
            mc_runs.insert(kind.name().to_owned(), all.collect());
        }
        Ok((mc, mc_runs))
    }

    /// State transitions per second of the library's flat Monte-Carlo on
    /// `game` with `kind` on `threads` threads for `seconds`.
    fn gdl_rate(
        &self,
        game: &std::sync::Arc<ggpnet::propnet::Game>,
        kind: EvaluatorKind,
        threads: usize,
        seconds: f64,
    ) -> Result<f64, Failure> {
        let config = McConfig::new(Budget::Seconds(seconds))
            .and_then(|c| c.threads(threads))
            .map_err(|e| Failure::input(format!("error: {e}")))?
            .evaluator(EvaluatorConfig::from(kind).native(self.args.native))
            .seed(1);
        let report = monte_carlo(game, &config).map_err(|e| Failure::of(&e))?;
        Ok(report.transitions_per_sec())
    }

    /// RBG player moves per second of flat Monte-Carlo drawn per RBG move
    /// (`super::rbg_mc`) on `game`, the translation of the RBG game `stem`,
    /// with the scalar `kind` on `threads` threads for `seconds`.
    fn rbg_rate(
        &self,
        game: &std::sync::Arc<ggpnet::propnet::Game>,
        stem: &str,
        kind: EvaluatorKind,
        threads: usize,
        seconds: f64,
    ) -> Result<f64, Failure> {
        let settings = super::rbg_mc::Settings {
            kind,
            native: self.args.native,
            threads,
            budget: Budget::Seconds(seconds),
            seed: 1,
            max_moves: DEFAULT_MAX_DEPTH,
        };
        let (totals, seconds) = super::rbg_mc::draw_playouts(game, &settings)
            .map_err(|e| Failure::worded(&e, format!("error: {stem}: {e}")))?;
        Ok(totals.moves as f64 / seconds)
    }
}

/// Evaluator → thread count → a figure of its runs.
type Rates<T> = BTreeMap<String, BTreeMap<usize, T>>;

/// Writes `bench` as bench.json and bench.md into the output directory, and
/// prints it as the arguments ask (JSON or markdown).
fn write_report(args: &BenchArgs, bench: &report::Bench) -> Result<(), Failure> {
    let markdown = markdown(bench);
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| Failure::of(&e).at(&format!("cannot create {}", args.out_dir.display())))?;
    for (file, text) in [
        ("bench.json", format!("{}\n", report::to_json_pretty(bench))),
        ("bench.md", markdown.clone()),
    ] {
        let path = args.out_dir.join(file);
        std::fs::write(&path, text)
            .map_err(|e| Failure::of(&e).at(&format!("cannot write {}", path.display())))?;
    }
    print_report(args.json, bench);
    Ok(())
}

/// Prints `bench` as JSON if `json`, else as the markdown table.
pub(crate) fn print_report(json: bool, bench: &report::Bench) {
    if json {
        println!("{}", report::to_json(bench));
    } else {
        print!("{}", markdown(bench));
    }
}

/// The median of `samples` (the mean of the middle two for an even count).
fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The name of the game `name` (a file or a corpus name) in the report: its
/// file name without extension (with it for a `.rbg` file).
fn game_stem(corpus: &Path, name: &str) -> String {
    let path = game_path(corpus, name);
    // A .rbg game keeps its extension: the corpus's traces and anchors are of GDL games.
    let part = if path.extension().is_some_and(|e| e == "rbg") {
        path.file_name()
    } else {
        path.file_stem()
    };
    part.map_or(name.to_owned(), |s| s.to_string_lossy().into_owned())
}

fn game_path(corpus: &Path, name: &str) -> PathBuf {
    let path = PathBuf::from(name);
    if path
        .extension()
        .is_some_and(|e| e == "kif" || e == "sbg" || e == "rbg")
    {
        path
    } else {
        corpus.join("games").join(format!("{name}.kif"))
    }
}

/// Perft to `depth` (or without it, to the depth of the game's reference
/// trace, 3 without one) with each scalar evaluator (in native code if
/// `native`): the faster one's rate and time, and whether every count equals
/// the trace's (at the depths both have).
fn perft_against_trace(
    corpus: &Path,
    game: &str,
    loaded: &std::sync::Arc<ggpnet::propnet::Game>,
    depth: Option<usize>,
    native: bool,
) -> BenchPerft {
    let trace = super::read_input(&corpus.join("traces").join(format!("{game}.jsonl"))).unwrap_or_default();
    let expected: BTreeMap<usize, u64> = trace
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("perft").cloned())
        .and_then(|p| {
            p.as_object().map(|o| {
                o.iter()
                    .filter_map(|(d, n)| Some((d.parse().ok()?, n.as_u64()?)))
                    .collect()
            })
        })
        .unwrap_or_default();
    let depth = depth.unwrap_or_else(|| expected.keys().max().copied().unwrap_or(3));
    let expected: BTreeMap<usize, u64> = expected.into_iter().filter(|&(d, _)| d <= depth).collect();
    let runs: Vec<(EvaluatorKind, ggpnet::propnet::driver::PerftReport)> =
        [EvaluatorKind::Sweep, EvaluatorKind::Differential]
            .into_iter()
            .map(|kind| {
                let config = EvaluatorConfig::from(kind).native(native);
                (kind, perft(loaded, depth, config))
            })
            .collect();
    let matches = runs
        .iter()
        .all(|(_, r)| expected.iter().all(|(&d, &n)| r.counts[d - 1] == n as u128));
    let rate = |r: &ggpnet::propnet::driver::PerftReport| r.nodes as f64 / r.seconds.max(1e-9);
    let (kind, fastest) = runs
        .iter()
        .max_by(|a, b| rate(&a.1).total_cmp(&rate(&b.1)))
        .expect("two runs");
    BenchPerft {
        depth,
        evaluator: kind.name().to_owned(),
        nodes: fastest.nodes,
        nodes_per_sec: rate(fastest),
        seconds: fastest.seconds,
        counts: fastest.counts.iter().map(|&c| report::path_count(c)).collect(),
        trace_depths: expected.len(),
        counts_match: matches,
    }
}

/// The most RBG move sequences perft counts to on the translation of a
/// `.rbg` file in `bench`: it runs to the deepest depth of the trace whose
/// count is at most this.
const RBG_PERFT_BUDGET: u64 = 100_000;

/// Perft on the translation of the Regular Boardgames file `path`, counting
/// RBG moves (`super::rbg::count_moves`) with each scalar evaluator (in native
/// code if `native`), against the counts of `traces-rbg/NAME.json`: to the
/// deepest depth up to which every count is at most [`RBG_PERFT_BUDGET`]
/// (2 without a trace); the faster evaluator's rate and time.
fn rbg_perft(
    corpus: &Path,
    path: &Path,
    loaded: ggpnet::propnet::Loaded,
    native: bool,
) -> Result<BenchPerft, Failure> {
    let name = path
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let trace =
        super::read_input(&corpus.join("traces-rbg").join(format!("{name}.json"))).unwrap_or_default();
    let expected: BTreeMap<usize, u64> = serde_json::from_str::<serde_json::Value>(&trace)
        .ok()
        .and_then(|v| {
            let perft = v.get("perft")?.as_object()?.clone();
            Some(
                perft
                    .iter()
                    .filter_map(|(d, n)| Some((d.parse().ok().filter(|&d: &usize| d >= 1)?, n.as_u64()?)))
                    .collect(),
            )
        })
        .unwrap_or_default();
    let within = expected
        .iter()
        .take_while(|&(&d, &n)| n <= RBG_PERFT_BUDGET && d <= MAX_PERFT_DEPTH);
    let depth = within.map(|(&d, _)| d).last().unwrap_or(2);
    let expected: BTreeMap<usize, u64> = expected.into_iter().filter(|&(d, _)| d <= depth).collect();
    let config = super::game_config().native(native);
    let game = ggpnet::Game::from_loaded(loaded, &config);
    let mut fastest: Option<(EvaluatorKind, Vec<u64>, f64)> = None;
    let mut matches = true;
    for kind in [EvaluatorKind::Sweep, EvaluatorKind::Differential] {
        let timer = std::time::Instant::now();
        let counts = super::rbg::count_moves(path, &game, Some(kind), depth)?;
        let seconds = timer.elapsed().as_secs_f64().max(1e-9);
        matches &= expected.iter().all(|(&d, &n)| counts[d - 1] == n);
        if fastest.as_ref().is_none_or(|f| seconds < f.2) {
            fastest = Some((kind, counts, seconds));
        }
    }
    let (kind, counts, seconds) = fastest.expect("two runs");
    let nodes = 1 + counts[..depth - 1].iter().sum::<u64>();
    Ok(BenchPerft {
        depth,
        evaluator: kind.name().to_owned(),
        nodes,
        nodes_per_sec: nodes as f64 / seconds,
        seconds,
        counts,
        trace_depths: expected.len(),
        counts_match: matches,
    })
}

fn cpu_model() -> String {
    super::proc_field("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown".to_owned())
}

/// A rate with thousands separators, or a dash when there is none (or it is not finite).
fn number(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map_or("–".to_owned(), |x| {
        let digits = format!("{:.0}", x);
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    })
}

/// `a / b` as `1.23x`, or a dash when either is missing (or not finite) or `b` is not positive.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a.filter(|x| x.is_finite()), b.filter(|x| x.is_finite())) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "–".to_owned(),
    }
}

/// The median rate of evaluator `kind` on `threads` threads.
fn rate(m: &BenchMeasured, kind: &str, threads: usize) -> Option<f64> {
    m.mc.get(kind)
        .and_then(|r| r.get(&threads))
        .copied()
        .filter(|x| x.is_finite())
}

/// The games of `bench` that loaded, with their figures.
fn measured(bench: &report::Bench) -> impl Iterator<Item = (&str, &BenchMeasured)> {
    bench.games.iter().filter_map(|g| match &g.result {
        BenchResult::Measured(m) => Some((g.game.as_str(), m)),
        BenchResult::NotLoaded { .. } => None,
    })
}

/// The report as markdown: one-thread rates with the anchors and ratios, thread scaling, perft.
fn markdown(bench: &report::Bench) -> String {
    let threads = bench.run.threads;
    let peers = &bench.run.peers;
    let mut out = format!(
        "CPU: {} (lanes in {}-bit registers); {:?} s per evaluator and thread count, in {} runs alternating between thread counts, median run reported.\n\n",
        bench.run.cpu, bench.run.lane_vector_bits, bench.run.seconds, bench.run.repeats
    );
    if peers.cross_machine {
        out.push_str(&format!(
            "Peers (Sironi, ggplib, the RBG compiler where the file has it): {}, measured on another CPU ({}), \
             not on this one: every ratio to a peer crosses machines, not a side-by-side measurement.\n\n",
            peers.file, peers.measured_on
        ));
    } else {
        out.push_str(&format!(
            "Peers (Sironi, ggplib, the RBG compiler where the file has it): {}, measured on this CPU ({}).\n\n",
            peers.file, peers.measured_on
        ));
    }
    one_thread_table(&mut out, bench);
    if threads > 1 {
        scaling_table(&mut out, bench, threads);
    }
    perft_table(&mut out, bench);
    out
}

/// The name of `game` in a table: with the unit of its rates where it is not
/// the run's (RBG player moves on a `.rbg` file).
fn with_unit(game: &str, m: &BenchMeasured) -> String {
    match &m.transition_unit {
        Some(unit) => format!("{game} ({unit}s/s)"),
        None => game.to_owned(),
    }
}

/// The table of one-thread rates beside the anchors, with the ratios.
fn one_thread_table(out: &mut String, bench: &report::Bench) {
    out.push_str("Flat Monte-Carlo, state transitions/s, one thread\n\n");
    out.push_str(
        "| game | sweep | differential | lanes | Sironi | ggplib | RBG compiler | best scalar / ggplib | \
         best scalar / Sironi | best scalar / RBG | lanes / ggplib | lanes / RBG |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for g in &bench.games {
        let name = &g.game;
        let m = match &g.result {
            BenchResult::NotLoaded { error } => {
                let first = error.lines().next().unwrap_or(error);
                out.push_str(&format!("| {name} | not loaded: {first} |\n"));
                continue;
            }
            BenchResult::Measured(m) => m,
        };
        let name = with_unit(name, m);
        let one = |k: &str| rate(m, k, 1);
        let best_scalar = match (one("sweep"), one("differential")) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let a = &g.anchors;
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            number(one("sweep")),
            number(one("differential")),
            number(one("lanes")),
            number(a.sironi),
            number(a.ggplib),
            number(a.rbg_compiler),
            ratio(best_scalar, a.ggplib),
            ratio(best_scalar, a.sironi),
            ratio(best_scalar, a.rbg_compiler),
            ratio(one("lanes"), a.ggplib),
            ratio(one("lanes"), a.rbg_compiler),
        ));
    }
}

/// The table of rates on `threads` threads over rates on one.
fn scaling_table(out: &mut String, bench: &report::Bench, threads: usize) {
    out.push_str(&format!(
        "\nThread scaling: transitions/s on {threads} threads / on one thread\n\n"
    ));
    out.push_str("| game | sweep | differential | lanes |\n| --- | ---: | ---: | ---: |\n");
    for (game, m) in measured(bench) {
        let scale = |k: &str| ratio(rate(m, k, threads), rate(m, k, 1));
        out.push_str(&format!(
            "| {game} | {} | {} | {} |\n",
            scale("sweep"),
            scale("differential"),
            scale("lanes")
        ));
    }
}

/// The table of perft rates and times beside the RBG compiler's (same depth,
/// both counting the last ply in bulk), and whether the counts equal the trace's.
fn perft_table(out: &mut String, bench: &report::Bench) {
    if measured(bench).all(|(_, m)| m.perft.is_none()) {
        return;
    }
    out.push_str(
        "\nPerft to the depth of the RBG compiler's bulk-counting perft (else the trace's), \
         faster scalar evaluator, one thread\n\n",
    );
    out.push_str(
        "| game | depth | evaluator | nodes/s | seconds | RBG compiler seconds | RBG time / ours | counts equal the trace's |\n\
         | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for g in &bench.games {
        let BenchResult::Measured(m) = &g.result else {
            continue;
        };
        let Some(p) = &m.perft else { continue };
        let matches = match (p.trace_depths, p.counts_match) {
            (0, _) => "no trace".to_owned(),
            (n, true) => format!("yes ({n} depths)"),
            _ => "NO".to_owned(),
        };
        let rbg = g
            .anchors
            .rbg_perft
            .as_ref()
            .filter(|r| r.depth == p.depth)
            .map(|r| r.seconds);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.3} | {} | {} | {matches} |\n",
            g.game,
            p.depth,
            p.evaluator,
            number(Some(p.nodes_per_sec)),
            p.seconds,
            rbg.map_or("–".to_owned(), |s| format!("{s:.3}")),
            ratio(rbg, Some(p.seconds)),
        ));
    }
}

/// A one-line progress bar on standard error, drawn only on a terminal.
struct Progress {
    games: usize,
    games_done: usize,
    steps: usize,
    steps_done: usize,
    terminal: bool,
}

impl Progress {
    fn new(games: usize, steps: usize) -> Progress {
        Progress {
            games,
            games_done: 0,
            steps,
            steps_done: 0,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn show(&mut self, game: &str, what: &str) {
        self.steps_done += 1;
        if self.terminal {
            let width = 30;
            let filled = width * self.steps_done.min(self.steps) / self.steps.max(1);
            eprint!(
                "\r\x1b[K[{}{}] game {}/{} {game}: {what}",
                "#".repeat(filled),
                " ".repeat(width - filled),
                self.games_done + 1,
                self.games
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn done_game(&mut self) {
        self.games_done += 1;
    }

    fn finish(&self) {
        if self.terminal {
            eprint!("\r\x1b[K");
        }
    }
}
