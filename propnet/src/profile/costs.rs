//! Every constant of the evaluators' cost models in one place: what an
//! operation costs (in instructions, or as a multiple of another), the
//! thresholds at which a choice pays, and the measurement budgets; each with
//! the measurements behind it. The evaluators weigh them against the counts
//! that [`super::activity`] and the evaluators' own walks measure.

// The sweep's flagged blocks and skip conditions (`evaluator/skipping.rs`,
// `evaluator/sweep.rs`).

/// Gate evaluations spent measuring how often sources change (see [`super::activity::random_walk`]).
/// Under Miri, which interprets every instruction, the measurements of this
/// module are cut a thousandfold: they choose between plans, never answers.
pub(crate) const MEASURE_BUDGET: usize = if cfg!(miri) { 10_000 } else { 10_000_000 };

/// What testing a flagged block's flag and clearing it costs, in
/// instructions, against one value read.
pub(crate) const TEST_COST: f64 = 3.0;

/// What setting a flagged block's flag once costs, in instructions.
pub(crate) const MARK_COST: f64 = 6.0;

/// What a mispredicted jump costs, in instructions (about 20 cycles at 2.5
/// instructions per cycle).
pub(crate) const MISPREDICT_COST: f64 = 50.0;

// The move part as cones of the moves played (`evaluator/cones.rs`,
// `evaluator/move_cones.rs`).

/// The most bytes of code the cones may take and still stay in the cache
/// between joint moves (the level 2 cache of one core, 1 MiB on AMD Zen 4 and
/// Zen 5). Past it, where the cost model, which counts operands, misjudges
/// them both ways, the plans with and without them race (the driver's chooser, `driver/choose.rs`).
/// Measured on a Zen 4, the time of the move part by cones against without:
/// the differential evaluator's counters, speedChess (3.1 MB of code) 1.06,
/// amazons_10x10 (1.7 MB) 1.05, quad (1.5 MB) 0.18, chinook (1.5 MB) 0.43;
/// the sweep's blocks, chineseCheckers4 (2.3 MB) 2.2, checkersTorus (5.6 MB)
/// 0.44, ttcc4 (7.4 MB) 0.55.
pub(crate) const CACHED_CODE_BYTES: usize = 1 << 20;

/// What running a function costs, in operands read (call, return, the
/// loop choosing it).
pub(crate) const CALL_COST: usize = 8;

/// What one counter update of a propagation costs, in values read or stored
/// by native code (the unit of the cones' cost). Measured on speedChess and
/// connect four: a joint move through counters took about 10 instructions
/// per counter update, the cones about 1.3 per value.
pub(crate) const UPDATE_VALUES: f64 = 6.0;

/// What re-evaluating a gate whose counter crossed its threshold costs, in
/// counter updates (besides its fan-out's).
pub(crate) const EVALUATION_UPDATES: f64 = 3.0;

// The differential evaluator (`evaluator/differential.rs`).

/// Gate evaluations spent measuring how often slots change (see [`super::activity::Activity`]).
/// Under Miri, cut ten-thousandfold: measuring a 56-slot net with a
/// thousandth took about three minutes there (the evaluator tests' net
/// built by hand), and a guard chosen on fewer measurements is only slower.
pub(crate) const ACTIVITY_BUDGET: usize = if cfg!(miri) { 2_000 } else { 20_000_000 };

/// Fewest `and`s an operand must be the best guard of to guard them, unless
/// some are lazy (then what they save decides).
pub(crate) const GUARD_FANOUT: usize = 24;

/// How many times more fan-out edges than cache lines to copy a return to the
/// initial state must visit for copying to be chosen (measured: copying gains
/// 13–20% on ticTacToe, connect four and gomoku at 3.5–5.5 times, nothing on
/// English checkers, speedChess and chess_200 at 1.2–1.9 times, and loses on
/// hex at 0.5 times).
pub(crate) const RESTORE_MARGIN: usize = 2;

/// The fewest gates in a fan-out told of a change without a branch per gate
/// (see `Propagation::tell_many`; measured: amazons_10x10 10–12% faster with
/// any threshold from 6 to 24, other games unchanged; for every fan-out,
/// speedChess and English checkers were 3% slower).
pub(crate) const BRANCHLESS_FANOUT: usize = 8;

/// What taking a guarded `and` into its guard's ready set or out of it costs, in counter updates.
pub(crate) const TOGGLE_COST: u64 = 4;

/// What a guard's change costs besides its pass over the legality words, in
/// counter updates (a call, and a pass over its ready set; without it, full
/// amazons took 99 guards of one lazy `and` each, and ran at 26k against 29k
/// nodes/s).
pub(crate) const GUARD_CHANGE_COST: u64 = 8;

/// What re-evaluating a changed gate and passing the change on costs, in counter updates.
pub(crate) const EVALUATION_COST: u64 = 3;
