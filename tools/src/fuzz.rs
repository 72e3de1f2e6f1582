//! Fuzz targets: what must hold for any input bytes at each entry point that
//! reads user input. Each target returns normally for every input, or panics
//! on a defect (a panic in the code under test, or a property that fails).
//!
//! They are run two ways: by libFuzzer for long runs (`fuzz/`, with
//! `cargo fuzz`, on a nightly toolchain), and by `tools/tests/fuzz.rs` briefly in
//! CI, on the saved inputs that once found a bug and on seeded mutations of real
//! games, circuits and traces.

use crate::differential::evaluators_agree;
use crate::replay::Trace;
use ggpnet::propnet::{export, load, LoadConfig, Loaded};
use ggpnet::realtime::{EngineChoice, RtGame, Time, TimeModel};

/// Ground rules and atoms a fuzzed game may have: small, so that every input runs in milliseconds.
const FUZZ_MAX_GROUND: usize = 20_000;

/// Candidate facts the joins of a fuzzed game may try.
const FUZZ_MAX_JOIN_STEPS: usize = 1_000_000;

/// The grounder's memory bound for a fuzzed game, in bytes.
const FUZZ_MAX_BYTES: usize = 256 << 20;

/// Random playouts each loaded game or circuit plays on every evaluator.
const PLAYOUTS: usize = 2;

/// Moves per playout compared.
const STEPS: usize = 20;

/// The KIF reader: parsing never panics, and a description that parses prints
/// as text that parses to the same canonical text.
pub fn kif(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(description) = ggpnet::kif::parse(text) else {
        return;
    };
    let printed = canonical(&description);
    let again = ggpnet::kif::parse(&printed)
        .unwrap_or_else(|e| panic!("the canonical text does not parse: {e}\n{printed}"));
    assert_eq!(canonical(&again), printed, "printing is not stable");
}

fn canonical(description: &ggpnet::kif::Description) -> String {
    let rules: Vec<String> = description
        .rules
        .iter()
        .map(|r| ggpnet::kif::rule_to_string(r, &description.symbols))
        .collect();
    rules.join("\n")
}

/// The whole compilation: checks, grounding within small limits, the circuit;
/// a game that loads plays the same playouts on every evaluator.
pub fn game(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(loaded) = load(text, &small_limits()) {
        play(&loaded);
    }
}

/// Real-time GDL: the checks and the compiled fragment within small limits; a
/// game that compiles plays timed playouts (an update's error, such as two
/// lifetimes for one slot, is an answer, not a defect). The interpreter is not
/// run: its work per state is not bounded against hostile games yet.
pub fn realtime(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ground = small_limits().get_ground().clone();
    let Ok(game) = RtGame::load_limited(text, EngineChoice::Propnet, &ground) else {
        return;
    };
    for model in [
        TimeModel::Immediate,
        TimeModel::Exponential(Time::from_ticks(500_000).expect("half a unit")),
    ] {
        let budget = ggpnet::Budget::Playouts(PLAYOUTS as u64);
        let _ = game.playouts(&game.initial_state(), model, STEPS as u64, budget, 1, 1);
    }
}

/// The load settings of a fuzzed game: small grounding limits.
fn small_limits() -> LoadConfig {
    LoadConfig::new().ground(
        ggpnet::grounder::Config::new()
            .max_ground_rules(FUZZ_MAX_GROUND)
            .max_ground_atoms(FUZZ_MAX_GROUND)
            .max_join_steps(FUZZ_MAX_JOIN_STEPS)
            .max_bytes(FUZZ_MAX_BYTES),
    )
}

/// The JSON circuit reader: a circuit that loads plays the same playouts on every evaluator.
pub fn circuit(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(loaded) = export::json::load(text) {
        play(&loaded);
    }
}

/// The trace reader: reading never panics.
pub fn trace(data: &[u8]) {
    let _ = Trace::read(data);
}

fn play(loaded: &Loaded) {
    let report = evaluators_agree(&loaded.game, PLAYOUTS, STEPS, 1);
    if let Some(difference) = report.first_difference {
        panic!("the evaluators disagree: {difference}");
    }
}
