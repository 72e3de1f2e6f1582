//! Sharded runs on the command line: the `--shard I/N` and `--jsonl FILE`
//! options of `corpus`, `stats --dir` and `bench`, and `ggpnet merge`, which
//! reads the shards' JSON lines and prints the report of the whole run (see
//! `ggpnet_tools::shard` for the split and the checks).

use super::Failure;
use ggpnet_tools::report::{self, BenchGame, CorpusGame, ShardHeader, ShardRun, StatsDirGame};
use ggpnet_tools::shard::Shard;
use ggpnet_tools::shard_file::{self, Merged, ShardFile};
use std::path::PathBuf;

/// The options that make a run one shard of a larger one.
#[derive(clap::Args)]
pub struct ShardArgs {
    /// Run only shard I of N (from 1): the games at positions k (from 0, in
    /// the command's order) with k mod N = I - 1; `ggpnet merge` puts the
    /// shards' --jsonl files together.
    #[arg(long, value_name = "I/N", value_parser = super::options::shard)]
    shard: Option<Shard>,
    /// Also write the results as JSON lines to FILE (a header line, then one
    /// line per game of this shard), for `ggpnet merge`.
    #[arg(long, value_name = "FILE")]
    jsonl: Option<PathBuf>,
}

impl ShardArgs {
    /// The shard to run (`1/1`, the whole run, when not given).
    pub fn shard(&self) -> Shard {
        self.shard.unwrap_or_else(Shard::whole)
    }

    /// Whether `--shard` or `--jsonl` was given.
    pub fn given(&self) -> bool {
        self.shard.is_some() || self.jsonl.is_some()
    }

    /// Writes `results`, this shard's share of the games `games` of the run
    /// `run`, to the `--jsonl` file, if one was given.
    pub fn write<T: serde::Serialize>(
        &self,
        run: ShardRun,
        games: &[&str],
        results: &[T],
    ) -> Result<(), Failure> {
        let Some(path) = &self.jsonl else {
            return Ok(());
        };
        let header = ShardHeader {
            shard: self.shard(),
            games: games.iter().map(|g| g.to_string()).collect(),
            run,
        };
        let mut text = report::to_json(&header) + "\n";
        for result in results {
            text.push_str(&report::to_json(result));
            text.push('\n');
        }
        std::fs::write(path, text)
            .map_err(|e| Failure::of(&e).at(&format!("cannot write {}", path.display())))
    }
}

/// The arguments of `ggpnet merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' files (written by --jsonl), every shard of the run exactly once, in any order.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Print the JSON report (as the command's --json does) instead of the text.
    #[arg(long)]
    json: bool,
    /// Shards of `stats --dir`: also write the CSV table to this file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Shards of `corpus`: also write the markdown table to this file.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// Prints the report of the run the files are shards of; `Ok(false)` where
/// the run would have exited 1 (a game that disagrees, did not compile, or
/// whose perft counts differ from its trace's).
pub fn run(args: &MergeArgs) -> Result<bool, Failure> {
    let files = args
        .files
        .iter()
        .map(|path| {
            let text = super::read_input(path)?;
            let name = path.display().to_string();
            Ok(ShardFile { name, text })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let first = files
        .first()
        .ok_or_else(|| Failure::input("error: no shard files given"))?;
    let header = shard_file::read_header(first).map_err(|e| Failure::input(format!("error: {e}")))?;
    let refuse = |given: bool, option: &str, command: &str| match given {
        true => Err(Failure::input(format!(
            "error: merge {option} does not apply to shards of `{command}`"
        ))),
        false => Ok(()),
    };
    match header.run {
        ShardRun::Corpus(run) => {
            refuse(args.csv.is_some(), "--csv", "corpus")?;
            let merged = merged(&files, |g: &CorpusGame| g.outcome.game())?;
            super::corpus_run::print_report(merged.games, &run, args.json, args.markdown.as_deref())
        }
        ShardRun::StatsDir(run) => {
            refuse(args.markdown.is_some(), "--markdown", "stats --dir")?;
            let merged = merged(&files, |g: &StatsDirGame| super::stats_dir::game_name(g))?;
            super::stats_dir::print_report(merged.games, &run, args.json, args.csv.as_deref())
        }
        ShardRun::Bench(run) => {
            refuse(args.csv.is_some(), "--csv", "bench")?;
            refuse(args.markdown.is_some(), "--markdown", "bench")?;
            let merged = merged(&files, |g: &BenchGame| &g.game)?;
            let bench = report::Bench {
                run,
                games: merged.games,
            };
            super::bench::print_report(args.json, &bench);
            Ok(super::bench::all_perft_counts_match(&bench.games))
        }
    }
}

/// [`shard_file::merge`] of `files`, its error a failure of bad input (exit 2).
fn merged<T: serde::de::DeserializeOwned>(
    files: &[ShardFile],
    name: impl Fn(&T) -> &str,
) -> Result<Merged<T>, Failure> {
    shard_file::merge(files, name).map_err(|e| Failure::input(format!("error: {e}")))
}
