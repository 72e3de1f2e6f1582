//! `ggpnet bench`: flat Monte-Carlo with every evaluator on one thread and on
//! every core (median of a few alternating runs), and perft, on the anchor
//! games; a JSON report and a markdown table
//! that puts the peers' figures measured on this CPU (`anchors/peers.md` on the
//! AMD EPYC, `anchors/peers-xeon.md` on the Xeon; on another CPU, `peers.md`,
//! said to cross machines) and `anchors/published.md` beside ours, with the
//! ratios. Rates are state transitions (joint moves applied) per second.

use super::{load_game, Failure};
use ggpnet::propnet::driver::{monte_carlo, perft, Budget, McConfig};
use ggpnet::propnet::evaluator::{EvaluatorConfig, EvaluatorKind};
use ggpnet_tools::report::{self, Anchors, BenchGame, BenchMeasured, BenchPerft, BenchResult, BenchRun};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The games of `anchors/published.md`, with their names in `peers.md` and in `published.md`.
pub const ANCHOR_GAMES: [(&str, &str); 11] = [
    ("ticTacToe", "tic-tac-toe"),
    ("connectFour_7x6", "connect four"),
    ("breakthrough", "breakthrough"),
    ("englishDraughts", "English checkers"),
    ("reversi", "reversi"),
    ("hex", "hex (9x9)"),
    ("gomoku_15x15", "gomoku"),
    ("chess_200", "chess"),
    ("speedChess", "chess (without check)"),
    ("amazons_10x10", "amazons (split)"),
    ("amazons", "amazons"),
];

/// How much faster the AMD EPYC of `peers.md` runs the published propnet than
/// the paper's i7-4790 (as `peers.md` says): used when the chosen peer file has
/// no Sironi figure to derive the factor from.
const MACHINE_FACTOR: f64 = 1.6;

/// A file of peer figures in `anchors/`, and the CPU they were measured on.
struct PeerFile {
    file: &'static str,
    /// `model name` and `cpu family` of `/proc/cpuinfo` on that CPU.
    model_name: &'static str,
    family: u32,
    /// The CPU as the file describes it.
    machine: &'static str,
}

/// The peer files, in order of preference when none was measured on this CPU
/// (the first is then used, and every ratio to a peer crosses machines).
const PEER_FILES: [PeerFile; 2] = [
    PeerFile {
        file: "peers.md",
        model_name: "AMD EPYC",
        family: 26,
        machine: "AMD EPYC, Zen 5, 2 vCPUs",
    },
    PeerFile {
        file: "peers-xeon.md",
        model_name: "Intel(R) Xeon(R) Processor",
        family: 6,
        machine: "Intel Xeon, Emerald Rapids, 2 vCPUs",
    },
];

/// The peer file measured on the CPU of `model_name` and `family`, and whether
/// it was; the first file when none was.
fn peer_file(model_name: &str, family: Option<u32>) -> (&'static PeerFile, bool) {
    PEER_FILES
        .iter()
        .find(|p| p.model_name == model_name && Some(p.family) == family)
        .map_or((&PEER_FILES[0], false), |p| (p, true))
}

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
        ANCHOR_GAMES.iter().map(|(g, _)| g.to_string()).collect()
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
        machine_factor: baselines.machine_factor,
    }
}

/// Whether every perft count of `games` equals its trace's.
pub(crate) fn all_perft_counts_match(games: &[BenchGame]) -> bool {
    games.iter().all(|g| match &g.result {
        BenchResult::Measured(m) => m.perft.as_ref().is_none_or(|p| p.counts_match),
        BenchResult::NotLoaded { .. } => true,
    })
}

/// The figures ours are compared with: the peer file chosen for this CPU and
/// the published figures, as tables, and the factor between their machines.
struct Baselines {
    peer_file: &'static PeerFile,
    /// Whether the peer file was measured on this CPU.
    same_cpu: bool,
    peers: BTreeMap<String, BTreeMap<String, f64>>,
    published: BTreeMap<String, BTreeMap<String, f64>>,
    machine_factor: f64,
}

impl Baselines {
    /// The baselines in `corpus`'s `anchors/` for the CPU named `cpu`.
    fn load(corpus: &Path, cpu: &str) -> Baselines {
        let family = super::proc_field("/proc/cpuinfo", "cpu family").and_then(|f| f.parse().ok());
        let (peer_file, same_cpu) = peer_file(cpu, family);
        let peers = markdown_tables(&corpus.join("anchors").join(peer_file.file));
        let published = markdown_tables(&corpus.join("anchors").join("published.md"));
        let machine_factor = machine_factor(&peers, &published);
        Baselines {
            peer_file,
            same_cpu,
            peers,
            published,
            machine_factor,
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
            let anchors = anchors(
                &stem,
                &baselines.peers,
                &baselines.published,
                baselines.machine_factor,
            );
            let result = match load_game(Some(&path)) {
                Err(e) => BenchResult::NotLoaded {
                    error: e.message().to_owned(),
                },
                Ok(loaded) => {
                    let (mc, mc_runs) = self.mc_rates(&loaded.game, &stem, &mut progress)?;
                    progress.show(&stem, "perft");
                    let perft = (!self.args.skip_perft)
                        .then(|| perft_against_trace(corpus, &stem, &loaded.game, self.args.native));
                    all_match &= perft.as_ref().is_none_or(|p| p.counts_match);
                    BenchResult::Measured(BenchMeasured {
                        init_seconds: report::load_seconds(&loaded.report),
                        components: report::component_count(&loaded.report),
                        mc,
                        mc_runs,
                        perft,
                    })
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

    /// Flat Monte-Carlo on `game` (named `stem`) with every evaluator and
    /// thread count: the median rate of each (evaluator → threads → rate), and
    /// the rates of all its runs.
    fn mc_rates(
        &self,
        game: &std::sync::Arc<ggpnet::propnet::Game>,
        stem: &str,
        progress: &mut Progress,
    ) -> Result<(Rates<f64>, Rates<Vec<f64>>), Failure> {
        let repeats = self.args.repeats as usize;
        let mut mc = BTreeMap::new();
        let mut mc_runs = BTreeMap::new();
        for &kind in &self.evaluators {
            let mut runs: Vec<Vec<f64>> = vec![Vec::new(); self.thread_counts.len()];
            for repeat in 0..repeats {
                for (&t, samples) in self.thread_counts.iter().zip(&mut runs) {
                    progress.show(
                        stem,
                        &format!("{kind}, {t} thread(s), run {}/{repeats}", repeat + 1),
                    );
                    let config = McConfig::new(Budget::Seconds(self.args.seconds / repeats as f64))
                        .and_then(|c| c.threads(t))
                        .map_err(|e| Failure::input(format!("error: {e}")))?
                        .evaluator(EvaluatorConfig::from(kind).native(self.args.native))
                        .seed(1);
                    let report = monte_carlo(game, &config).map_err(|e| Failure::of(&e))?;
                    samples.push(report.transitions_per_sec());
                }
            }
            let medians = self.thread_counts.iter().zip(&runs).map(|(&t, r)| (t, median(r)));
            mc.insert(kind.name().to_owned(), medians.collect());
            let all = self.thread_counts.iter().copied().zip(runs);
            mc_runs.insert(kind.name().to_owned(), all.collect());
        }
        Ok((mc, mc_runs))
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
    let part = match path.extension().is_some_and(|e| e == "rbg") {
        true => path.file_name(),
        false => path.file_stem(),
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

/// Perft to the depth of the game's reference trace (3 without one) with each
/// scalar evaluator (in native code if `native`): the faster one's rate, and
/// whether every count equals the trace's.
fn perft_against_trace(
    corpus: &Path,
    game: &str,
    loaded: &std::sync::Arc<ggpnet::propnet::Game>,
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
    let depth = expected.keys().max().copied().unwrap_or(3);
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
        counts: fastest.counts.iter().map(|&c| report::path_count(c)).collect(),
        trace_depths: expected.len(),
        counts_match: matches,
    }
}

/// Every markdown table row of a file: first cell → column header → number.
fn markdown_tables(path: &Path) -> BTreeMap<String, BTreeMap<String, f64>> {
    let text = super::read_input(path).unwrap_or_default();
    let mut rows = BTreeMap::new();
    let mut header: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if !line.starts_with('|') {
            header.clear();
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect();
        if header.is_empty() {
            header = cells;
        } else if !cells[0].starts_with("---") {
            let row: &mut BTreeMap<String, f64> = rows.entry(cells[0].clone()).or_default();
            for (column, cell) in header.iter().zip(&cells).skip(1) {
                if let Ok(v) = cell.replace(',', "").parse::<f64>() {
                    row.entry(column.clone()).or_insert(v);
                }
            }
        }
    }
    rows
}

/// How much faster the peers' CPU runs Sironi's propnet than the paper's
/// i7-4790: the median over the anchor games of the peer file's Sironi figure
/// over the published one ([`MACHINE_FACTOR`] without any).
fn machine_factor(
    peers: &BTreeMap<String, BTreeMap<String, f64>>,
    published: &BTreeMap<String, BTreeMap<String, f64>>,
) -> f64 {
    let ratios: Vec<f64> = ANCHOR_GAMES
        .iter()
        .filter_map(|(game, paper)| {
            let here = peers.get(*game)?.get("Sironi")?;
            let there = published.get(*paper)?.get("GDL propnet")?;
            (*there > 0.0).then(|| here / there)
        })
        .collect();
    if ratios.is_empty() {
        MACHINE_FACTOR
    } else {
        median(&ratios)
    }
}

/// The anchors' flat Monte-Carlo figures for `game`.
fn anchors(
    game: &str,
    peers: &BTreeMap<String, BTreeMap<String, f64>>,
    published: &BTreeMap<String, BTreeMap<String, f64>>,
    machine_factor: f64,
) -> Anchors {
    let peer = |column: &str| peers.get(game).and_then(|r| r.get(column)).copied();
    let rbg = ANCHOR_GAMES
        .iter()
        .find(|(g, _)| *g == game)
        .and_then(|(_, paper)| published.get(*paper))
        .and_then(|r| r.get("RBG compiler"))
        .copied();
    Anchors {
        sironi: peer("Sironi"),
        ggplib: peer("ggplib"),
        rbg_compiler: rbg,
        rbg_compiler_here: rbg.map(|r| r * machine_factor),
    }
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
    let factor = bench.run.machine_factor;
    let mut out = format!(
        "CPU: {} (lanes in {}-bit registers); {:?} s per evaluator and thread count, in {} runs alternating between thread counts, median run reported.\n\n",
        bench.run.cpu, bench.run.lane_vector_bits, bench.run.seconds, bench.run.repeats
    );
    if peers.cross_machine {
        out.push_str(&format!(
            "Peers (Sironi, ggplib): {}, measured on another CPU ({}), not on this one: \
             every ratio to a peer crosses machines, not a side-by-side measurement.\n",
            peers.file, peers.measured_on
        ));
    } else {
        out.push_str(&format!(
            "Peers (Sironi, ggplib): {}, measured on this CPU ({}).\n",
            peers.file, peers.measured_on
        ));
    }
    out.push_str(&format!(
        "RBG compiler: anchors/published.md (an Intel Core i7-4790) x {factor:.2}, how much faster the peers' CPU runs \
         Sironi's propnet than the paper's: an estimate across machines.\n\n"
    ));
    one_thread_table(&mut out, bench);
    if threads > 1 {
        scaling_table(&mut out, bench, threads);
    }
    perft_table(&mut out, bench);
    out
}

/// The table of one-thread rates beside the anchors, with the ratios.
fn one_thread_table(out: &mut String, bench: &report::Bench) {
    let factor = bench.run.machine_factor;
    out.push_str("Flat Monte-Carlo, state transitions/s, one thread\n\n");
    out.push_str(&format!(
        "| game | sweep | differential | lanes | Sironi | ggplib | RBG x{factor:.2} | best scalar / ggplib | best scalar / Sironi | lanes / ggplib | lanes / RBG x{factor:.2} |\n"
    ));
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
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
        let one = |k: &str| rate(m, k, 1);
        let best_scalar = match (one("sweep"), one("differential")) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let a = &g.anchors;
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            number(one("sweep")),
            number(one("differential")),
            number(one("lanes")),
            number(a.sironi),
            number(a.ggplib),
            number(a.rbg_compiler_here),
            ratio(best_scalar, a.ggplib),
            ratio(best_scalar, a.sironi),
            ratio(one("lanes"), a.ggplib),
            ratio(one("lanes"), a.rbg_compiler_here),
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

/// The table of perft rates, and whether the counts equal the trace's.
fn perft_table(out: &mut String, bench: &report::Bench) {
    if measured(bench).all(|(_, m)| m.perft.is_none()) {
        return;
    }
    out.push_str("\nPerft to the reference trace's depth, faster scalar evaluator, one thread\n\n");
    out.push_str("| game | depth | evaluator | nodes/s | counts equal the trace's |\n| --- | ---: | --- | ---: | --- |\n");
    for (game, m) in measured(bench) {
        let Some(p) = &m.perft else { continue };
        let matches = match (p.trace_depths, p.counts_match) {
            (0, _) => "no trace".to_owned(),
            (n, true) => format!("yes ({n} depths)"),
            _ => "NO".to_owned(),
        };
        out.push_str(&format!(
            "| {game} | {} | {} | {} | {matches} |\n",
            p.depth,
            p.evaluator,
            number(Some(p.nodes_per_sec)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_measured_on_this_cpu_are_chosen() {
        let (file, same) = peer_file("Intel(R) Xeon(R) Processor", Some(6));
        assert_eq!((file.file, same), ("peers-xeon.md", true));
        let (file, same) = peer_file("AMD EPYC", Some(26));
        assert_eq!((file.file, same), ("peers.md", true));
        // Another generation of the same name, or another CPU: the default file, across machines.
        for (name, family) in [("AMD EPYC", Some(25)), ("Apple M2", None), ("unknown", None)] {
            let (file, same) = peer_file(name, family);
            assert_eq!((file.file, same), ("peers.md", false), "{name}");
        }
    }

    #[test]
    fn the_machine_factor_is_the_median_sironi_ratio() {
        let table = |rows: &[(&str, &str, f64)]| {
            let mut t: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
            for (row, column, v) in rows {
                t.entry(row.to_string())
                    .or_default()
                    .insert(column.to_string(), *v);
            }
            t
        };
        let published = table(&[
            ("tic-tac-toe", "GDL propnet", 100.0),
            ("connect four", "GDL propnet", 100.0),
            ("hex (9x9)", "GDL propnet", 100.0),
        ]);
        let peers = table(&[
            ("ticTacToe", "Sironi", 120.0),
            ("connectFour_7x6", "Sironi", 200.0),
            ("hex", "Sironi", 150.0),
        ]);
        assert_eq!(machine_factor(&peers, &published), 1.5);
        assert_eq!(machine_factor(&BTreeMap::new(), &published), MACHINE_FACTOR);
    }
}
