//! `ggpnet export`: write a game's circuit as a Graphviz picture, a JSON dump
//! or an AIGER and-inverter graph (see docs/EXPORT.md).

use super::{game_name, load_game_with, Failure};
use clap::{Args, ValueEnum};
use ggpnet::propnet::export::{aiger, cone, dot, json};
use ggpnet::propnet::OptimizeConfig;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Nodes drawn at most unless `--max-nodes` says otherwise: beyond this a picture is unreadable.
const DOT_MAX_NODES: usize = 2000;
/// And gates written at most in AIGER unless `--max-nodes` says otherwise.
const AIGER_MAX_ANDS: usize = 50_000_000;

/// The written form.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Graphviz DOT.
    Dot,
    /// JSON (loads back with any command: `ggpnet mc net.json`).
    Json,
    /// AIGER: binary when the output file ends in `.aig`, else ASCII.
    Aiger,
    /// AIGER, ASCII form.
    Aag,
    /// AIGER, binary form.
    Aig,
}

/// Which circuit.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stage {
    /// As built from the ground program, before any optimization.
    Raw,
    /// After the optimizer passes (what the state machine evaluates).
    Optimized,
}

/// Arguments of `ggpnet export`.
#[derive(Args)]
pub struct ExportArgs {
    /// The game (KIF, Simplified Boardgames .sbg, or a circuit exported as .json); the built-in connect four if omitted.
    game: Option<PathBuf>,
    /// Output form.
    #[arg(long, value_enum)]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The circuit before or after optimization.
    #[arg(long, value_enum, default_value = "optimized")]
    stage: Stage,
    /// DOT only: draw just the nodes feeding this output (repeatable), e.g. 'terminal',
    /// 'legal white (mark 1 1)', 'goal white 100', 'next (cell 1 1 x)'.
    #[arg(long = "cone", value_name = "OUTPUT")]
    cone: Vec<String>,
    /// Refuse larger exports: nodes for DOT (default 2000) and JSON (default none),
    /// and gates for AIGER (default 50000000).
    #[arg(long, value_parser = super::options::positive)]
    max_nodes: Option<usize>,
}

fn too_large(count: usize, max: usize, what: &str, hint: &str) -> Failure {
    Failure::input(format!(
        "error: the export has {count} {what}, more than --max-nodes {max}{hint}"
    ))
}

fn is_json(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.extension().is_some_and(|e| e == "json"))
}

/// Runs `ggpnet export`.
pub fn run(args: &ExportArgs) -> Result<(), Failure> {
    let path = args.game.as_deref();
    if args.stage == Stage::Raw && is_json(path) {
        return Err(Failure::input(
            "error: --stage raw needs a game description: a .json circuit has one stage only".to_owned(),
        ));
    }
    if !args.cone.is_empty() && args.format != Format::Dot {
        return Err(Failure::input(
            "error: --cone applies to --format dot only".to_owned(),
        ));
    }
    let mut config = super::load_config();
    if args.stage == Stage::Raw {
        config = config.optimize(OptimizeConfig::none());
    }
    let loaded = load_game_with(path, &config)?;
    let (circuit, layering) = (&loaded.circuit, &loaded.layering);
    let failure = |e: ggpnet::propnet::export::ExportError| Failure::of(&e);
    let bytes = match args.format {
        Format::Dot => {
            let (member, marked) = if args.cone.is_empty() {
                (vec![true; circuit.nodes.len()], cone::outputs(circuit))
            } else {
                let roots = cone::resolve(circuit, &args.cone).map_err(failure)?;
                (cone::cone(circuit, &roots), roots)
            };
            let count = member.iter().filter(|&&m| m).count();
            let max = args.max_nodes.unwrap_or(DOT_MAX_NODES);
            if count > max {
                let hint = ": draw a cone (--cone terminal, --cone 'legal ROLE MOVE') or raise --max-nodes";
                return Err(too_large(count, max, "nodes to draw", hint));
            }
            dot::write(circuit, layering, &member, &marked, &game_name(path)).into_bytes()
        }
        Format::Json => {
            if let Some(max) = args.max_nodes.filter(|&m| circuit.nodes.len() > m) {
                return Err(too_large(circuit.nodes.len(), max, "nodes", ""));
            }
            json::write(circuit, layering).into_bytes()
        }
        Format::Aiger | Format::Aag | Format::Aig => {
            let aig =
                aiger::build(circuit, layering, args.max_nodes.unwrap_or(AIGER_MAX_ANDS)).map_err(failure)?;
            let to_aig = args
                .output
                .as_deref()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "aig"));
            if args.format == Format::Aig || (args.format == Format::Aiger && to_aig) {
                aig.to_binary()
            } else {
                aig.to_ascii().into_bytes()
            }
        }
    };
    match &args.output {
        Some(file) => std::fs::write(file, &bytes)
            .map_err(|e| Failure::of(&e).at(&format!("error: cannot write {}", file.display()))),
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| Failure::of(&e).at("error: cannot write to standard output")),
    }
}
